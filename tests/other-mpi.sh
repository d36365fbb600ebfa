#!/bin/sh
# A program built with the other MPI implementation than libtcio's is
# refused, where it once linked both MPI libraries and crashed inside
# tcio_open:
# * at compile time: a program that includes tcio.h, compiled with the
#   other implementation's mpicc, must fail with tcio.h's message, and
#   compile with this build's own compiler;
# * at its open: a C program of that compiler that declares libtcio's
#   calls itself (tests/other_mpi_prog.c), and a Fortran `use mpi` program
#   of the other mpifort with this build's tcio module
#   (tests/other_mpi_prog.F90, when the module is built), linked with this
#   build's libraries and run as singletons, must get TCIO_ERR_MPI with a
#   reason and no file (lib/one_mpi.h, lib/open.c), and calls on the NULL
#   handle then TCIO_ERR_BAD_HANDLE (their reason makes no MPI call);
# * at its start: the same C program with this build's MPI-IO interposer
#   preloaded must stop before main with the interposer's message and exit
#   status 127 (mpiio/real.c), where such a program's MPI_File_open
#   crashed (SIGSEGV: a preloaded MPICH interposer, an Open MPI program).
# Skipped where the other implementation's compiler is not installed; the
# programs are skipped without a shared libtcio, the Fortran one where the
# other mpifort cannot read this build's tcio.mod.
src=${srcdir:-.}
case "${MPI_FLAVOR:-}" in
    mpich) other=openmpi ;;
    openmpi) other=mpich ;;
    *) echo "other-mpi.sh: the MPI implementation is not known (MPI_FLAVOR '${MPI_FLAVOR:-}'): skipped"; exit 77 ;;
esac
if ! command -v "mpicc.$other" >/dev/null 2>&1; then
    echo "other-mpi.sh: no mpicc.$other to compile with: skipped"
    exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0

# tcio.h's refusal.
printf '#include "tcio.h"\nint main(void) { return tcio_version() == 0; }\n' >"$tmp/p.c"
if ! $CC -I"$src/include" -Iinclude -c "$tmp/p.c" -o "$tmp/own.o" 2>"$tmp/own.err"; then
    echo "other-mpi.sh: tcio.h does not compile with this build's $CC:"
    cat "$tmp/own.err"
    failed=1
fi
if "mpicc.$other" -I"$src/include" -Iinclude -c "$tmp/p.c" -o "$tmp/other.o" 2>"$tmp/other.err"; then
    echo "other-mpi.sh: tcio.h of a $MPI_FLAVOR build compiled with mpicc.$other"
    failed=1
elif ! grep -q "libtcio was built with" "$tmp/other.err"; then
    echo "other-mpi.sh: mpicc.$other failed, but not with tcio.h's message:"
    cat "$tmp/other.err"
    failed=1
else
    echo "other-mpi.sh: tcio.h of a $MPI_FLAVOR build refuses mpicc.$other's mpi.h and compiles with $CC"
fi

# The refusal at the open: programs of the other MPI linked with this
# build's shared libraries (a static libtcio cannot link into them: its
# MPI symbols stay undefined).
if [ ! -f lib/.libs/libtcio.so ]; then
    echo "other-mpi.sh: no shared libtcio (--disable-shared): the programs of mpicc.$other skipped"
    exit $failed
fi
# Open MPI's singletons as root need these.
if [ "$(id -u)" = 0 ]; then
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
libs=$(pwd)/lib/.libs
printf '#include "tcio.h"\n#include <stdio.h>\nint main(void) { printf("%%d %%d\\n", TCIO_ERR_MPI, TCIO_ERR_BAD_HANDLE); return 0; }\n' >"$tmp/code.c"
codes=$($CC -I"$src/include" -Iinclude "$tmp/code.c" -o "$tmp/code" && "$tmp/code") || exit 1
# LABEL PROGRAM ARGS...: run a program that must be refused.
refused() {
    label=$1
    shift
    rm -f "$tmp/file"
    if timeout 120 "$@" >"$tmp/run.out" 2>&1; then
        echo "other-mpi.sh: $label: refused at its open"
        cat "$tmp/run.out"
    else
        echo "other-mpi.sh: $label: not refused with TCIO_ERR_MPI and a reason (exit status $?):"
        tail -n 15 "$tmp/run.out"
        failed=1
    fi
}
if "mpicc.$other" "$src/tests/other_mpi_prog.c" -o "$tmp/prog" -L"$libs" -ltcio \
       -Wl,-rpath,"$libs" >"$tmp/build.err" 2>&1; then
    # shellcheck disable=SC2086 # the two codes are two arguments
    refused "a C program of mpicc.$other" "$tmp/prog" "$tmp/file" $codes
    status=0
    # shellcheck disable=SC2086
    LD_PRELOAD=$libs/libtcio_mpiio.so timeout 120 "$tmp/prog" "$tmp/file" $codes \
        >"$tmp/run.out" 2>&1 || status=$?
    if [ $status -eq 127 ] && grep -q "^libtcio_mpiio: this interposer was built with" "$tmp/run.out" &&
           ! grep -q other_mpi_prog "$tmp/run.out"; then
        echo "other-mpi.sh: the same program with this build's interposer preloaded: stopped before main"
        cat "$tmp/run.out"
    else
        echo "other-mpi.sh: the same program with this build's interposer preloaded: not stopped before main with the interposer's message (exit status $status):"
        tail -n 15 "$tmp/run.out"
        failed=1
    fi
else
    echo "other-mpi.sh: tests/other_mpi_prog.c does not build with mpicc.$other:"
    cat "$tmp/build.err"
    failed=1
fi
flibs=$(pwd)/fortran/.libs
if [ ! -f fortran/tcio.mod ] || [ ! -f "$flibs/libtcio_fortran.so" ]; then
    echo "other-mpi.sh: the Fortran module is not built: its program skipped"
elif ! command -v "mpifort.$other" >/dev/null 2>&1; then
    echo "other-mpi.sh: no mpifort.$other: the Fortran program skipped"
elif "mpifort.$other" -Ifortran "$src/tests/other_mpi_prog.F90" -o "$tmp/fprog" \
         -L"$flibs" -ltcio_fortran -L"$libs" -ltcio -Wl,-rpath,"$flibs" -Wl,-rpath,"$libs" \
         >"$tmp/build.err" 2>&1; then
    refused "a Fortran 'use mpi' program of mpifort.$other" "$tmp/fprog" "$tmp/file"
elif grep -qi 'module file' "$tmp/build.err"; then
    # Another gfortran behind the other MPI's wrapper: its module
    # format differs (doc/fortran.md, .mod files are compiler-specific).
    echo "other-mpi.sh: mpifort.$other cannot read this build's tcio.mod: the Fortran program skipped"
    sed 's/^/    /' "$tmp/build.err" | head -n 3
else
    echo "other-mpi.sh: tests/other_mpi_prog.F90 does not build with mpifort.$other:"
    cat "$tmp/build.err"
    failed=1
fi
exit $failed
