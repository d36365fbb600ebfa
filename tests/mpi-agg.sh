#!/bin/sh
# The MPI suite's data tests (the paper's pattern and the randomized ones)
# under aggregator settings given as environment variables, which
# tests/test_mpi.c passes on to the library: 1, 2 and P aggregators,
# spread, node and explicit-list placement, early drain on and off, and
# TCIO_TEST_PREFETCH (local: tcio_prefetch, session: tcio_read_session of
# ranges that are and are not read before the read-back of the paper's
# pattern and the random patterns).
#
# Oversubscribed ranks (more than the cores) make every lock epoch wait
# for the scheduler, so at 4 ranks each test gets one configuration per
# aggregator count (1, 2, 4), with the three placements spread over them
# and early drain both ways (a Latin square), rather than every
# combination: about 70 s on 2 cores under MPICH (the two-node runs take
# 34 of them), 40 s under Open MPI.  3 ranks add 2 aggregators spread
# unevenly (ranks 0 and 1, rank 2 none) for three of the tests.  2 ranks,
# not oversubscribed and so nearly free, run every test but bad_config
# (which sets these variables itself) under four more configurations.
# The concurrency tests (concurrent_writes, concurrent_reads: racing
# moves, spills, early drains, loads and prefetches on few small slots)
# run under one configuration per aggregator count at 4 ranks, and in
# every 2-rank configuration; so do sync and set_size (tcio_sync,
# tcio_set_size: every level-2 segment written or cut while the file stays
# open, under spills, sieves and early drains).
#
# Every configuration runs on one node with TCIO_TRANSPORT=shm (what auto
# takes there) and on two "nodes" with auto, which is mixed there (a
# combining tier per node in front of an rma level 2 over all ranks: the
# aggregator settings apply to that level 2), made by MPICH's
# MPIR_CVAR_NUM_CLIQUES=2 or, under any other MPI, libtcio's testing-only
# TCIO_TEST_NODES=2: the transport "nodes" below.  On two "nodes" a rank's
# level-1 bytes always go through its node's tier, so the rma level 2
# there sees forwards only; direct moves into an rma level 2 (shared and
# exclusive puts, their counters) run with TCIO_TRANSPORT=rma on one node
# in the configurations of concurrent_writes at 4 ranks (1, 2 and 4
# aggregators) and the last two 2-rank ones; the other 3- and 4-rank ones
# leave rma on one node to tests/transports.sh (the whole suite, at 4
# ranks under Open MPI): a pass of all of them would add about 40 s under
# MPICH.  Every configuration is printed with its transport; the script
# fails if any of them fails.  The script clears the variables that
# would split the ranks or narrow the cases (TCIO_TEST_NODES,
# MPIR_CVAR_NUM_CLIQUES, CK_INCLUDE_TAGS) before it starts.
#
# TCIO_AGG_ONLY=<n> runs only the n-th configuration (1-based), and
# TCIO_AGG_TRANSPORT=rma, shm or nodes only that transport, to reproduce a
# failure.  TCIO_AGG_TRANSPORTS replaces every configuration's list (any
# of rma, shm, mixed, nodes).
. "$(dirname "$0")/skip-in-distcheck.sh"

PE=paper_example RP=random_patterns RYW=span_overwrite_ryw UM=update_mode
MF=multiple_files CW=concurrent_writes CR=concurrent_reads
SZ="sync set_size"
OTHERS="sparse_file empty_file noncontig_types seek_append bad_input fs_errors sieved_spills $SZ"
ALL="$PE $RP $RYW $UM $MF $CW $CR $OTHERS"

# Only the settings below apply (and every case they name runs).
unset TCIO_AGGREGATORS TCIO_AGGREGATOR_PLACEMENT TCIO_EARLY_DRAIN TCIO_STATS CK_RUN_CASE
unset TCIO_TEST_PREFETCH TCIO_TRANSPORT TCIO_FORWARD_STAGING TCIO_NODE_SEGMENTS
unset CK_EXCLUDE_TAGS CK_INCLUDE_TAGS TCIO_TEST_NODES MPIR_CVAR_NUM_CLIQUES

flavor=$(sed -n "s/^MPI_FLAVOR='\(.*\)'$/\1/p" ./tests/run-mpi.sh)
if [ "$flavor" = mpich ]; then two_nodes=MPIR_CVAR_NUM_CLIQUES=2; else two_nodes=TCIO_TEST_NODES=2; fi

failed=0
count=0
runs=0

# The two-node runs prove nothing if the split does not happen: test
# transport_nodes says how many nodes libtcio found.
case " ${TCIO_AGG_TRANSPORTS:-nodes} " in
    *" nodes "*)
        if [ -z "$TCIO_AGG_TRANSPORT" ] || [ "$TCIO_AGG_TRANSPORT" = nodes ]; then
            out=$(env $two_nodes CK_RUN_CASE=transport_nodes ./tests/run-mpi.sh 4 ./tests/test_mpi 2>&1)
            rc=$?
            if [ $rc -ne 0 ] || ! echo "$out" | grep -q "transport_nodes: 2 node(s)"; then
                echo "$out"
                echo "mpi-agg.sh: $two_nodes did not split the ranks into 2 nodes"
                exit 1
            fi
            echo "=== $two_nodes splits 4 ranks into 2 nodes"
        fi ;;
esac

# run NP AGGREGATORS PLACEMENT EARLY_DRAIN STATS PREFETCH CASES...
# ("-": the variable is left unset)
run() {
    np=$1 aggregators=$2 placement=$3 drain=$4 stats=$5 prefetch=$6
    shift 6
    count=$((count + 1))
    if [ -n "$TCIO_AGG_ONLY" ] && [ "$TCIO_AGG_ONLY" != "$count" ]; then
        return
    fi
    settings=""
    [ "$aggregators" != - ] && settings="$settings TCIO_AGGREGATORS=$aggregators"
    [ "$placement" != - ] && settings="$settings TCIO_AGGREGATOR_PLACEMENT=$placement"
    [ "$drain" != - ] && settings="$settings TCIO_EARLY_DRAIN=$drain"
    [ "$stats" != - ] && settings="$settings TCIO_STATS=$stats"
    [ "$prefetch" != - ] && settings="$settings TCIO_TEST_PREFETCH=$prefetch"
    for transport in ${TCIO_AGG_TRANSPORTS:-$transports}; do
        if [ -n "$TCIO_AGG_TRANSPORT" ] && [ "$TCIO_AGG_TRANSPORT" != "$transport" ]; then
            continue
        fi
        runs=$((runs + 1))
        if [ "$transport" = nodes ]; then
            where="$two_nodes TCIO_TRANSPORT=auto"
        else
            where="TCIO_TRANSPORT=$transport"
        fi
        what="$np ranks, $where$settings: $*"
        echo "=== configuration $count: $what"
        start=$(date +%s)
        # shellcheck disable=SC2086 # where and settings are lists of NAME=VALUE words
        if env $where $settings CK_INCLUDE_TAGS="$*" \
               ./tests/run-mpi.sh "$np" ./tests/test_mpi; then
            echo "=== configuration $count ($transport): passed in $(($(date +%s) - start)) s"
        else
            echo "=== configuration $count FAILED ($what)"
            echo "    reproduce: TCIO_AGG_ONLY=$count TCIO_AGG_TRANSPORT=$transport $0"
            failed=$((failed + 1))
        fi
    done
}

# At 4 ranks (aggregators/placement/early drain/prefetch):
#   paper_example       1/spread/off/local  2/node/on/session  4/list/off/-
#   random_patterns     1/list/on/session   2/spread/off/local 4/node/on/-
#   span_overwrite_ryw  1/node/on           2/list/off         4/spread/off
#   update_mode         1/spread/off        2/list/off         4/node/on
#   multiple_files      1/list/on           4/spread/off       (2 of 3 below)
#   concurrent_writes   1/node/on           2/spread/off       4/list/off
#   concurrent_reads    1/node/on           2/node/on          4/spread/off
# (on a single node "node" picks the same ranks as "spread"; a list alone
# sets the count; "2" is a single aggregator that is not rank 0; prefetch
# applies to paper_example and random_patterns.)
transports="shm nodes"
#   ranks aggr  placement   drain stats prefetch cases
run 4     1     spread      off   -     local    $PE $UM
run 4     2     node        on    -     session  $PE $CR
transports="rma shm nodes"
run 4     4     3,2,1,0     off   -     -        $PE $CW $SZ
transports="shm nodes"
run 4     -     2           on    -     session  $RP $MF
transports="rma shm nodes"
run 4     2     spread      off   -     local    $RP $CW $SZ
transports="shm nodes"
run 4     4     node        on    -     -        $RP $UM
transports="rma shm nodes"
run 4     1     node        on    on    -        $RYW $CW $CR $SZ
transports="shm nodes"
run 4     -     3,1         off   -     -        $RYW $UM
run 4     4     spread      off   -     -        $RYW $MF $CR
run 3     2     spread      on    -     session  $RP $UM $MF
# The first two 2-rank configurations not under rma on one node: rma at 2
# ranks is tests/transports.sh's whole-suite run (every rank an
# aggregator), and direct rma moves with one aggregator are configuration
# 7 above, with early drain on; under rma these two would add about 40 s
# under MPICH.
run 2     -     1           off   -     local    "$ALL"
run 2     1     spread      on    on    session  "$ALL"
transports="rma shm nodes"
run 2     2     1,0         off   -     -        "$ALL"
run 2     2     node        on    -     local    "$ALL"

if [ "$failed" -ne 0 ]; then
    echo "mpi-agg.sh: $failed of $runs run(s) of $count configuration(s) failed"
    exit 1
fi
echo "mpi-agg.sh: all $count configurations passed ($runs runs)"
