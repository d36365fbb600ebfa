#!/bin/sh
# The module refuses, at compile time, a read into something the library
# could not fill later (doc/fortran.md, Buffers): an expression such as
# (r) or r + 0, or a named constant, would be passed as a temporary that
# is gone when the lazy read completes.  A read into the variable itself
# must compile, so that the refusals are the module's and not an error of
# the program.
dir=${TMPDIR:-/tmp}/tcio-fortran-intent-$$
mkdir -p "$dir" || exit 1
trap 'rm -rf "$dir"' EXIT
failed=0
# PROGRAM named NAME whose read buffer is ACTUAL.
program_with() {
    cat >"$dir/$1.f90" <<END
program $1
  use mpi
  use tcio
  implicit none
  type(tcio_file) :: fh
  integer, asynchronous :: r(10)
  integer, parameter :: konst(4) = [1, 2, 3, 4]
  integer :: rc
  rc = tcio_read_at(fh, 0_MPI_OFFSET_KIND, $2, 3, MPI_INTEGER)
  print *, rc, r(1), konst(1)
end program $1
END
}
compiles() { (here=$(pwd) && cd "$dir" && $FC -fsyntax-only -I"$here" "$1.f90" >"$1.log" 2>&1); }
program_with variable r
# -fsyntax-only is gfortran's (and flang's, ifx's); a compiler without it
# cannot run this check: skipped, with what it said.
if ! compiles variable; then
    cat "$dir/variable.log"
    if grep -q -- -fsyntax-only "$dir/variable.log"; then
        echo "fortran-intent.sh: $FC does not take -fsyntax-only: skipped"
        exit 77
    fi
    echo "fortran-intent.sh: FAILED: a read into the variable itself does not compile"
    exit 1
fi
for actual in '(r)' 'r + 0' 'konst'; do
    program_with refused "$actual"
    if compiles refused; then
        echo "fortran-intent.sh: FAILED: a read into $actual compiles"
        failed=$((failed + 1))
    else
        echo "fortran-intent.sh: a read into $actual is refused: $(grep -m1 -i error "$dir/refused.log")"
    fi
done
[ $failed -eq 0 ] || exit 1
echo "fortran-intent.sh: all checks passed"
