#!/bin/sh
# The launcher matches the MPI the programs were built with: at 1 to 4
# ranks, mpiexec must start one job of exactly that many ranks (run first;
# Makefile.am makes every other test wait for it).
fail=0
for np in 1 2 3 4; do
    ./tests/run-mpi.sh --check "$np" || fail=1
done
[ $fail -eq 0 ] || exit 99
