#!/bin/sh
# make soak: randomized round trips of tests/soak.c.
#
# Run k (seed k, 1..SOAK_RUNS, default 60) draws its configuration from k:
# 1-8 ranks, segment size 512 B to 4 MiB, 1-64 slots per aggregator (at
# most 64 MiB of level 2 per aggregator), an aggregator count from 1 to the
# ranks (or the default), placement spread, node or a rank list, early
# drain on or off, prefetch off, local or session, and, in turn with the
# seed, the transport: MPICH's default, MPIR_CVAR_NUM_CLIQUES=2 (two
# "nodes") or MPIR_CVAR_NOLOCAL=1 (no shared memory; Open MPI ignores
# both); every other run on MPICH's default asks for libtcio's rma
# transport (TCIO_TRANSPORT=rma), the rest takes its default (auto: shm on
# one node, mixed on the two "nodes").  Each run
# writes a random plan
# of up to 4 MiB, compares the file byte for byte with a POSIX reference
# and reads random ranges back.  Prints every run and "N passed, N failed".
# Files go to TCIO_TEST_DIR (else /dev/shm if writable, else /tmp).
# SOAK_FIRST=k starts at seed k (to reproduce one run: SOAK_FIRST=k SOAK_RUNS=1).
#
# The two-node leg (make soak-nodes: SOAK_NODES=2 SOAK_NP=8 SOAK_MAX_SLOTS=4
# SOAK_RUNS=12): every run on two "nodes" (MPICH:
# MPIR_CVAR_NUM_CLIQUES=2; any other MPI: libtcio's testing-only
# TCIO_TEST_NODES=2) with libtcio's default transport (mixed there),
# SOAK_NP ranks in every run and at most SOAK_MAX_SLOTS slots per
# aggregator and per node, so that spills and early drains of the
# aggregators race the nodes' forwards and fetches; every odd seed there
# stages the forwards (TCIO_FORWARD_STAGING=1), so that staged copies,
# locked forwards that overtake them and fetches that lay them over race
# as well.
runs=${SOAK_RUNS:-60}
first=${SOAK_FIRST:-1}
nodes=${SOAK_NODES:-1}
case $nodes in 1|2) ;; *) echo "soak.sh: SOAK_NODES must be 1 or 2" >&2; exit 2 ;; esac
[ "${SOAK_MAX_SLOTS:-64}" -ge 1 ] 2>/dev/null ||
    { echo "soak.sh: SOAK_MAX_SLOTS must be a positive integer" >&2; exit 2; }
flavor=$(sed -n "s/^MPI_FLAVOR='\(.*\)'$/\1/p" ./tests/run-mpi.sh)
if [ -z "${TCIO_TEST_DIR:-}" ]; then
    if [ -w /dev/shm ]; then TCIO_TEST_DIR=/dev/shm; else TCIO_TEST_DIR=/tmp; fi
fi
export TCIO_TEST_DIR TCIO_WARN_UNKNOWN=off
unset TCIO_AGGREGATORS TCIO_AGGREGATOR_PLACEMENT TCIO_EARLY_DRAIN TCIO_STATS TCIO_TRANSPORT \
    TCIO_SEGMENT_SIZE TCIO_SEGMENTS_PER_PROC MPIR_CVAR_NUM_CLIQUES MPIR_CVAR_NOLOCAL \
    TCIO_TEST_NODES TCIO_FORWARD_STAGING TCIO_NODE_SEGMENTS
passed=0 failed=0 start=$(date +%s)
seed=$first
while [ "$seed" -lt $((first + runs)) ]; do
    draw() {    # xorshift32: r is uniform in [0, $1)
        x=$(( (x ^ (x << 13)) & 4294967295 )); x=$(( x ^ (x >> 17) ))
        x=$(( (x ^ (x << 5)) & 4294967295 )); r=$(( x % $1 ))
    }
    x=$(( (seed * 2654435761 + 1) & 4294967295 ))
    draw 2; draw 2; draw 2
    draw 8; np=${SOAK_NP:-$((r + 1))}
    draw 14; seg=$((512 << r))                        # 512 B .. 4 MiB
    draw "${SOAK_MAX_SLOTS:-64}"; slots=$((r + 1))
    max_slots=$((67108864 / seg))
    [ "$slots" -gt "$max_slots" ] && slots=$max_slots
    draw $((np + 1)); aggr=$r                         # 0: the default
    draw 3; placement=$r
    draw 2; drain=$r
    draw 3; prefetch=$r
    transport=$((seed % 3))
    [ "$nodes" -eq 2 ] && transport=3
    draw 4096; bytes=$(((r + 1) * 1024))              # 1 KiB .. 4 MiB
    settings="TCIO_EARLY_DRAIN=$drain"
    case $placement in
        0) settings="$settings TCIO_AGGREGATOR_PLACEMENT=spread" ;;
        1) settings="$settings TCIO_AGGREGATOR_PLACEMENT=node" ;;
        2) list="" r=$((np - 1)) n=${aggr:-1}
           [ "$n" -eq 0 ] && n=1
           while [ "$n" -gt 0 ]; do list="$list${list:+,}$r"; r=$((r - 1)); n=$((n - 1)); done
           settings="$settings TCIO_AGGREGATOR_PLACEMENT=$list"; aggr=0 ;;
    esac
    [ "$aggr" -gt 0 ] && settings="$settings TCIO_AGGREGATORS=$aggr"
    case $transport in
        0) [ $(( (seed / 3) % 2 )) -eq 1 ] && settings="$settings TCIO_TRANSPORT=rma" ;;
        1) settings="$settings MPIR_CVAR_NUM_CLIQUES=2" ;;
        2) settings="$settings MPIR_CVAR_NOLOCAL=1" ;;
        3) if [ "$flavor" = mpich ]; then settings="$settings MPIR_CVAR_NUM_CLIQUES=2"
           else settings="$settings TCIO_TEST_NODES=2"; fi
           settings="$settings SOAK_EXPECT_NODES=2"     # the split must have happened
           # every other run stages its forwards, one copy per rank: the
           # staging fills and locked forwards overtake staged ones
           [ $((seed % 2)) -eq 1 ] && settings="$settings TCIO_FORWARD_STAGING=1" ;;
    esac
    set -- off local session
    shift "$prefetch"
    pf=$1
    describe="seed $seed: $np ranks, segment $seg, $slots slots, prefetch $pf, $bytes B, $settings"
    # shellcheck disable=SC2086 # settings is a list of NAME=VALUE words
    if env $settings TCIO_TEST_TIMEOUT=300 timeout 600 ./tests/run-mpi.sh "$np" \
        ./tests/soak "$seed" "$seg" "$slots" "$pf" "$bytes" >soak-run.log 2>&1; then
        passed=$((passed + 1))
        echo "passed: $describe"
    else
        failed=$((failed + 1))
        echo "FAILED: $describe"
        sed 's/^/    /' soak-run.log | tail -20
        if [ "$nodes" -eq 2 ]; then
            echo "    reproduce: SOAK_FIRST=$seed SOAK_RUNS=1 make soak-nodes"
        else
            echo "    reproduce: SOAK_FIRST=$seed SOAK_RUNS=1 make soak"
        fi
    fi
    seed=$((seed + 1))
done
rm -f soak-run.log
echo "soak: $(( $(date +%s) - start )) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
