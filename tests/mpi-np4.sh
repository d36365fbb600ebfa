#!/bin/sh
# The MPI test suite on 4 rank(s).
exec ./tests/run-mpi.sh 4 ./tests/test_mpi
