#!/bin/sh
# The launcher matches the MPI the programs were built with: at 1 to 4
# ranks, mpiexec must start one job of exactly that many ranks (run first;
# Makefile.am makes every other test wait for it).
fail=0
for np in 1 2 3 4; do
    ./tests/run-mpi.sh --check "$np" || fail=1
done
# As root, the launcher starts without the caller's help, whatever CI says
# (run-mpi.sh gives Open MPI its settings for root: doc/portability.md).
if [ "$(id -u)" = 0 ]; then
    env -u CI -u OMPI_ALLOW_RUN_AS_ROOT -u OMPI_ALLOW_RUN_AS_ROOT_CONFIRM \
        ./tests/run-mpi.sh --check 2 ||
        { echo "launcher.sh: as root, with CI and OMPI_ALLOW_RUN_AS_ROOT unset, 2 ranks do not start" >&2; fail=1; }
fi
[ $fail -eq 0 ] || exit 99
