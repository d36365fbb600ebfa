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
# combination: with both transports about 85 s on 2 cores under MPICH
# (66 s with rma alone, measured the same hour; shm is the faster one
# there), 25 s under Open MPI.  3 ranks add 2 aggregators spread
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
# Every configuration runs twice, with TCIO_TRANSPORT=rma and with
# TCIO_TRANSPORT=shm (auto would take shm on one node), so that both
# transports see every aggregator setting; two of the 2-rank ones run
# under shm only (see there).  Every configuration is printed
# with its transport; the script fails if any of them fails.
#
# TCIO_AGG_ONLY=<n> runs only the n-th configuration (1-based), and
# TCIO_AGG_TRANSPORT=rma or shm only that transport, to reproduce a
# failure.  TCIO_AGG_TRANSPORTS replaces the list "rma shm": the
# multi-node check (doc/records/nodes.md) runs
#   MPIR_CVAR_NUM_CLIQUES=2 TCIO_AGG_TRANSPORTS="mixed rma" tests/mpi-agg.sh
# (or TCIO_TEST_NODES=2 under any MPI), where shm is refused.
if [ -n "${LIBTCIO_DISTCHECK:-}" ]; then
    echo "skipped inside make distcheck (LIBTCIO_DISTCHECK, set by ./quickstart check: the main leg ran it)"
    exit 77
fi

PE=paper_example RP=random_patterns RYW=span_overwrite_ryw UM=update_mode
MF=multiple_files CW=concurrent_writes CR=concurrent_reads
SZ="sync set_size"
OTHERS="sparse_file empty_file noncontig_types seek_append bad_input fs_errors sieved_spills $SZ"
ALL="$PE $RP $RYW $UM $MF $CW $CR $OTHERS"

# Only the settings below apply (and every case they name runs).
unset TCIO_AGGREGATORS TCIO_AGGREGATOR_PLACEMENT TCIO_EARLY_DRAIN TCIO_STATS CK_RUN_CASE
unset TCIO_TEST_PREFETCH TCIO_TRANSPORT
unset CK_EXCLUDE_TAGS

failed=0
count=0
runs=0

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
    for transport in ${TCIO_AGG_TRANSPORTS:-${transports:-rma shm}}; do
        if [ -n "$TCIO_AGG_TRANSPORT" ] && [ "$TCIO_AGG_TRANSPORT" != "$transport" ]; then
            continue
        fi
        runs=$((runs + 1))
        what="$np ranks, TCIO_TRANSPORT=$transport$settings: $*"
        echo "=== configuration $count: $what"
        start=$(date +%s)
        # shellcheck disable=SC2086 # settings is a list of NAME=VALUE words
        if env TCIO_TRANSPORT=$transport $settings CK_INCLUDE_TAGS="$*" \
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
#   ranks aggr  placement   drain stats prefetch cases
run 4     1     spread      off   -     local    $PE $UM
run 4     2     node        on    -     session  $PE $CR
run 4     4     3,2,1,0     off   -     -        $PE $CW $SZ
run 4     -     2           on    -     session  $RP $MF
run 4     2     spread      off   -     local    $RP $CW $SZ
run 4     4     node        on    -     -        $RP $UM
run 4     1     node        on    on    -        $RYW $CW $CR $SZ
run 4     -     3,1         off   -     -        $RYW $UM
run 4     4     spread      off   -     -        $RYW $MF $CR
run 3     2     spread      on    -     session  $RP $UM $MF
# The first two 2-rank configurations under shm only: rma at 2 ranks is
# tests/transports.sh's whole-suite run, and rma with one aggregator,
# early drain both ways, is configurations 1, 7 and 10 above (these two
# took 40 of mpi-agg.sh's 170 s under MPICH).
transports=shm
run 2     -     1           off   -     local    "$ALL"
run 2     1     spread      on    on    session  "$ALL"
transports=
run 2     2     1,0         off   -     -        "$ALL"
run 2     2     node        on    -     local    "$ALL"

if [ "$failed" -ne 0 ]; then
    echo "mpi-agg.sh: $failed of $runs run(s) of $count configuration(s) failed"
    exit 1
fi
echo "mpi-agg.sh: all $count configurations passed ($runs runs)"
