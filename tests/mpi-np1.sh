#!/bin/sh
# The MPI test suite on 1 rank(s).
exec ./tests/run-mpi.sh 1 ./tests/test_mpi
