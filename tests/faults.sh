#!/bin/sh
# Fault injection and misuse tests (tests/test_faults.c) on 1 and 2 ranks.
# A hang fails the run through the test fixture's watchdog.
: "${TCIO_TEST_TIMEOUT:=60}"
export TCIO_TEST_TIMEOUT
./tests/run-mpi.sh 1 ./tests/test_faults || exit 1
exec ./tests/run-mpi.sh 2 ./tests/test_faults
