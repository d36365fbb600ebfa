#!/bin/sh
# The MPI test suite on 3 rank(s).
exec ./tests/run-mpi.sh 3 ./tests/test_mpi
