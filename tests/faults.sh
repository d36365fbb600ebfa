#!/bin/sh
# Fault injection and misuse tests (tests/test_faults.c) on 1 and 2 ranks,
# then the shm segment cases on two "nodes" of one rank each (MPICH:
# MPIR_CVAR_NUM_CLIQUES=2; other MPIs: libtcio's testing-only
# TCIO_TEST_NODES=2), where the segment refused is a node's combining
# tier: auto must fall back to rma and mixed by name must fail.
# Then the allocation sweeps (writes closed by tcio_close and by the
# background close; reads after a flush) on the same two
# "nodes", with locked and with staged forwards (TCIO_FORWARD_STAGING=1):
# every allocation of the node map's cut, the tier, the forwards and the
# fetches fails once on the first and on the last rank.  And a close whose
# staged forwards' settle fails on every rank, on those two "nodes": the
# next files on the communicator must not receive what it left on its way.
# A hang fails the run through the test fixture's watchdog.
. "$(dirname "$0")/skip-in-distcheck.sh"
: "${TCIO_TEST_TIMEOUT:=60}"
export TCIO_TEST_TIMEOUT
./tests/run-mpi.sh 1 ./tests/test_faults || exit 1
./tests/run-mpi.sh 2 ./tests/test_faults || exit 1
flavor=$(sed -n "s/^MPI_FLAVOR='\(.*\)'$/\1/p" ./tests/run-mpi.sh)
if [ "$flavor" = mpich ]; then two_nodes="MPIR_CVAR_NUM_CLIQUES=2"; else two_nodes="TCIO_TEST_NODES=2"; fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# dash runs the EXIT trap on exit only: a signal exits first.
trap 'exit 1' INT TERM HUP
for c in shm_segment_refused shm_segment_no_space; do
    echo "=== $c on two nodes ($two_nodes)"
    env "$two_nodes" CK_RUN_CASE=$c ./tests/run-mpi.sh 2 ./tests/test_faults >"$out" 2>&1
    rc=$?
    cat "$out"
    [ $rc -eq 0 ] || exit 1
    # The split must have happened: the refusal was mixed's, not shm's.
    if [ $c = shm_segment_refused ] && ! grep -q "mixed by name refused" "$out"; then
        echo "faults.sh: $two_nodes did not make two nodes: the two-node cases would test nothing"
        exit 1
    fi
done
echo "=== failed_settle on two nodes ($two_nodes)"
env "$two_nodes" CK_RUN_CASE=failed_settle ./tests/run-mpi.sh 2 ./tests/test_faults || exit 1
for staging in 0 1; do
    for c in allocation_sweep background_allocation_sweep read_allocation_sweep adopt_allocation_sweep; do
        echo "=== $c on two nodes ($two_nodes), TCIO_FORWARD_STAGING=$staging"
        env "$two_nodes" TCIO_FORWARD_STAGING=$staging CK_RUN_CASE=$c \
            ./tests/run-mpi.sh 2 ./tests/test_faults || exit 1
    done
done
