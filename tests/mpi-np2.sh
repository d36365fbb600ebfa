#!/bin/sh
# The MPI test suite on 2 rank(s).
exec ./tests/run-mpi.sh 2 ./tests/test_mpi
