#!/bin/sh
# tcio.h refuses the other MPI implementation's mpi.h: a program compiled
# with the other implementation's compiler against this build's header
# must fail to compile with tcio.h's message (a program built so once
# linked both MPI libraries and crashed inside tcio_open), and the same
# program must compile with this build's own compiler.  Skipped where the
# other implementation's compiler is not installed.
src=${srcdir:-.}
case "${MPI_FLAVOR:-}" in
    mpich) other=mpicc.openmpi ;;
    openmpi) other=mpicc.mpich ;;
    *) echo "header-mpi.sh: the MPI implementation is not known (MPI_FLAVOR '${MPI_FLAVOR:-}'): skipped"; exit 77 ;;
esac
if ! command -v "$other" >/dev/null 2>&1; then
    echo "header-mpi.sh: no $other to compile with: skipped"
    exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
printf '#include "tcio.h"\nint main(void) { return tcio_version() == 0; }\n' >"$tmp/p.c"
failed=0
if ! $CC -I"$src/include" -Iinclude -c "$tmp/p.c" -o "$tmp/own.o" 2>"$tmp/own.err"; then
    echo "header-mpi.sh: tcio.h does not compile with this build's $CC:"
    cat "$tmp/own.err"
    failed=1
fi
if $other -I"$src/include" -Iinclude -c "$tmp/p.c" -o "$tmp/other.o" 2>"$tmp/other.err"; then
    echo "header-mpi.sh: tcio.h of a $MPI_FLAVOR build compiled with $other"
    failed=1
elif ! grep -q "libtcio was built with" "$tmp/other.err"; then
    echo "header-mpi.sh: $other failed, but not with tcio.h's message:"
    cat "$tmp/other.err"
    failed=1
fi
[ $failed -eq 0 ] && echo "header-mpi.sh: tcio.h of a $MPI_FLAVOR build refuses $other's mpi.h and compiles with $CC"
exit $failed
