#!/bin/sh
# The background close (tests/test_background.c: tcio_close_begin and
# tcio_close_end, the helper thread held back or failing on demand, a close
# ended by MPI_Finalize) on 1, 2 and 4 ranks, and on 4 ranks as two nodes.  Both transports run inside
# the program; make check runs it under each MPI of the build.  A hang
# fails the run through the test fixture's watchdog.  BACKGROUND_NP="2"
# runs fewer rank counts (the sanitizer leg does).
. "$(dirname "$0")/skip-in-distcheck.sh"
: "${TCIO_TEST_TIMEOUT:=120}"
export TCIO_TEST_TIMEOUT
for np in ${BACKGROUND_NP:-1 2 4}; do
    ./tests/run-mpi.sh $np ./tests/test_background || exit 1
done
# Then at 4 ranks on two "nodes" (MPICH: MPIR_CVAR_NUM_CLIQUES=2; other
# MPIs: libtcio's testing-only TCIO_TEST_NODES=2), where the transports are
# rma and mixed: the close forwards every node's combining tier before the
# thread takes the aggregators' slots; then the round trips once more with
# staged forwards.
if [ -z "${BACKGROUND_NP:-}" ]; then
    flavor=$(sed -n "s/^MPI_FLAVOR='\(.*\)'$/\1/p" ./tests/run-mpi.sh)
    if [ "$flavor" = mpich ]; then two_nodes="MPIR_CVAR_NUM_CLIQUES=2"; else two_nodes="TCIO_TEST_NODES=2"; fi
    echo "=== 4 ranks on two nodes ($two_nodes)"
    out=$(mktemp)
    env "$two_nodes" ./tests/run-mpi.sh 4 ./tests/test_background >"$out" 2>&1
    rc=$?
    cat "$out"
    # The split must have happened: the round trips ran under mixed.
    grep -q "round trips under rma and mixed" "$out" ||
        { echo "background.sh: $two_nodes did not make two nodes"; rc=1; }
    rm -f "$out"
    [ $rc -eq 0 ] || exit 1
    # The round trips again with staged forwards: the close settles the
    # staged copies before the thread takes the slots.
    echo "=== 4 ranks on two nodes ($two_nodes), staged forwards (TCIO_FORWARD_STAGING=2)"
    env "$two_nodes" TCIO_FORWARD_STAGING=2 CK_RUN_CASE=round_trip \
        ./tests/run-mpi.sh 4 ./tests/test_background || exit 1
fi
