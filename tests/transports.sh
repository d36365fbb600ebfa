#!/bin/sh
# The MPI suite under the transport that auto does not choose on one node,
# rma (the default runs, tests/test_mpi-N.np, cover auto, which is shm
# when every rank is on one node):
# - every MPI: every test of tests/test_mpi at 2 ranks with
#   TCIO_TRANSPORT=rma;
# - Open MPI (and any MPI but MPICH): the same at 4 ranks;
# - MPICH: one machine split into two "nodes" (MPIR_CVAR_NUM_CLIQUES=2,
#   4 ranks) instead: shm must be refused at open on every rank without
#   creating the file, while auto and mixed (which must be mixed there, as
#   tcio_get_info tells) and rma move the bytes (test transport_nodes),
#   and the whole suite passes under auto, that is with mixed at 4 ranks
#   (a combining tier per node, aggregators placed on the two nodes), with
#   forwards merged under the aggregator's lock (the default) and staged
#   (TCIO_FORWARD_STAGING=2; the cases that move data, not the error
#   paths);
# - every other MPI (Open MPI has no clique setting): the same two steps
#   with libtcio's testing-only split, TCIO_TEST_NODES=2.  A second 4-rank rma run on
#   one node would add about 40 s under MPICH for little: the transport
#   does not know the node count.
# About 85-100 s on 2 cores under MPICH, 12 s under Open MPI.
. "$(dirname "$0")/skip-in-distcheck.sh"

unset TCIO_AGGREGATORS TCIO_AGGREGATOR_PLACEMENT TCIO_EARLY_DRAIN TCIO_STATS CK_RUN_CASE
unset TCIO_TEST_PREFETCH TCIO_TRANSPORT CK_INCLUDE_TAGS CK_EXCLUDE_TAGS TCIO_TEST_NODES
unset TCIO_FORWARD_STAGING

failed=0
step() {
    echo "=== $*"
}
fail() {
    echo "=== FAILED: $*"
    failed=$((failed + 1))
}

flavor=$(sed -n "s/^MPI_FLAVOR='\(.*\)'$/\1/p" ./tests/run-mpi.sh)
ranks="2 4"
[ "$flavor" = mpich ] && ranks=2     # 4 ranks: under MPIR_CVAR_NUM_CLIQUES=2 below
for np in $ranks; do
    step "TCIO_TRANSPORT=rma, $np ranks, the whole MPI suite"
    TCIO_TRANSPORT=rma ./tests/run-mpi.sh "$np" ./tests/test_mpi ||
        fail "TCIO_TRANSPORT=rma at $np ranks"
done

# Two "nodes" on one machine, made by SPLIT (NAME=2): the transport checks
# of test transport_nodes, then the whole suite under auto (mixed).
two_nodes() {
    split=$1
    step "$split, 4 ranks: shm refused, auto is mixed, mixed and rma work"
    out=$(env "$split" CK_RUN_CASE=transport_nodes ./tests/run-mpi.sh 4 \
          ./tests/test_mpi 2>&1)
    rc=$?
    echo "$out"
    if [ $rc -ne 0 ]; then
        fail "transport_nodes under $split"
    elif ! echo "$out" | grep -q "transport_nodes: 2 node(s)"; then
        fail "$split did not split the ranks into 2 nodes"
    fi
    step "$split, 4 ranks, auto (mixed): the whole MPI suite"
    env "$split" ./tests/run-mpi.sh 4 ./tests/test_mpi || fail "the suite under $split"
    # unlocked_fetches clears the setting itself: the leg above ran it.
    # The error-path cases move no bytes between nodes (they are refused
    # before, or check reasons and codes): the leg above ran them too.
    step "$split, 4 ranks, auto (mixed), staged forwards (TCIO_FORWARD_STAGING=2): the MPI suite but unlocked_fetches and the error-path cases"
    env "$split" TCIO_FORWARD_STAGING=2 \
        CK_EXCLUDE_TAGS="unlocked_fetches bad_config bad_input error_reasons last_error fs_errors set_size_refused transport_nodes" \
        ./tests/run-mpi.sh 4 ./tests/test_mpi ||
        fail "the suite under $split with staged forwards"
}

if [ "$flavor" = mpich ]; then
    two_nodes MPIR_CVAR_NUM_CLIQUES=2
else
    two_nodes TCIO_TEST_NODES=2
fi

if [ "$failed" -ne 0 ]; then
    echo "transports.sh: $failed step(s) failed"
    exit 1
fi
echo "transports.sh: all steps passed"
