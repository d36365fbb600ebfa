#!/bin/sh
# The background close (tests/test_background.c: tcio_close_begin and
# tcio_close_end, the helper thread held back or failing on demand, a close
# ended by MPI_Finalize) on 1, 2 and 4 ranks.  Both transports run inside
# the program; make check runs it under each MPI of the build.  A hang
# fails the run through the test fixture's watchdog.  BACKGROUND_NP="2"
# runs fewer rank counts (the sanitizer leg does).
: "${TCIO_TEST_TIMEOUT:=120}"
export TCIO_TEST_TIMEOUT
for np in ${BACKGROUND_NP:-1 2 4}; do
    ./tests/run-mpi.sh $np ./tests/test_background || exit 1
done
