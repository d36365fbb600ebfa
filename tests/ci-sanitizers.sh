#!/bin/sh
# ci-sanitizers.sh MPI - the sanitizer and valgrind leg of the CI.
#
# MPI is mpich or openmpi: the script builds with mpicc.MPI and runs with
# mpiexec.MPI, out of tree in temporary directories, and leaves the
# machine's default MPI alone.
#   1. --enable-sanitizers (-fsanitize=address,undefined): the unit tests,
#      the MPI suite at 2 ranks, the fault-injection tests at 1 and 2
#      ranks, the background close at 2 ranks, the full file systems and
#      the misuse tests, and the staged forwards' cases on two "nodes" at
#      2 ranks; any sanitizer report fails the run.  Leak detection is off
#      here: MPICH's transports leak from modules they unload before exit,
#      which LeakSanitizer can neither name nor suppress (LEAKS=1 turns it
#      on, with tests/lsan-mpi.supp); leaks are checked by step 3.
#   2. -fsanitize=thread (ThreadSanitizer): tests/test_background at 2
#      ranks, every case of the background close, whose helper thread
#      shares jobs, slot memory and a descriptor with the main thread, on
#      one node and on two "nodes" (there with locked and with staged
#      forwards: the close forwards the tiers before the thread takes the
#      aggregators' slots); any report fails the run.
#   3. A plain static build: one MPI test (the paper's example) at 2 ranks
#      under valgrind memcheck; MPI's own noise is suppressed by
#      tests/valgrind-mpi.supp, and any remaining error or leak (definitely
#      or indirectly lost) with a frame in libtcio's sources (lib/*.c) fails
#      the run.
# Needs the MPI's compiler wrapper and valgrind (installed with apt-get when
# missing and run as root).
# Takes about 2-3 minutes on 2 cores (three configures and builds, the
# valgrind one only the library and the test it runs).  KEEP=1 keeps the build directories.
set -u
mpi=${1:-}
case $mpi in
    mpich|openmpi) ;;
    *) echo "usage: $0 mpich|openmpi" >&2; exit 2 ;;
esac
src=$(cd "$(dirname "$0")/.." && pwd)
cc=mpicc.$mpi
mpiexec=$(command -v "mpiexec.$mpi") || { echo "ci-sanitizers.sh: mpiexec.$mpi not found" >&2; exit 1; }
command -v "$cc" >/dev/null || { echo "ci-sanitizers.sh: $cc not found" >&2; exit 1; }
if ! command -v valgrind >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "ci-sanitizers.sh: installing valgrind"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null ||
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind; }
fi
command -v valgrind >/dev/null || { echo "ci-sanitizers.sh: valgrind not found (apt-get install valgrind)" >&2; exit 1; }
if [ "$mpi" = openmpi ]; then
    export OMPI_MCA_btl_vader_single_copy_mechanism=none
    if [ "$(id -u)" = 0 ]; then
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    fi
fi
[ -x "$src/configure" ] || (cd "$src" && autoreconf -fi) || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/tcio-ci-sanitizers-XXXXXX") || exit 1
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
# dash runs the EXIT trap on exit only: a signal exits first.
trap 'exit 1' INT TERM HUP
# A source tree configured in place (quickstart does) cannot host other
# builds: build from a clean copy of it.
if [ -f "$src/config.status" ]; then
    cp -a "$src" "$work/src" && (cd "$work/src" && make distclean >/dev/null 2>&1)
    src=$work/src
fi
failed=0

echo "=== ci-sanitizers.sh: $mpi: ASan/UBSan build in $work/asan"
mkdir "$work/asan" && cd "$work/asan" &&
    "$src/configure" -q CC="$cc" MPIEXEC="$mpiexec" CFLAGS="-g -O1" --enable-sanitizers --disable-fortran \
        >configure.log 2>&1 &&
    make -j2 >make.log 2>&1 ||
    { cat "$work/asan/configure.log" "$work/asan/make.log" 2>/dev/null | tail -30;
      echo "ci-sanitizers.sh: the sanitizer build failed"; exit 1; }
export ASAN_OPTIONS=detect_leaks=${LEAKS:-0}:abort_on_error=0:exitcode=86
export LSAN_OPTIONS=suppressions=$src/tests/lsan-mpi.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# SUBDIRS=.: the test list applies to the top directory only (fortran/ has
# tests of its own, not built here).
if BACKGROUND_NP=2 make -j2 check SUBDIRS=. TESTS="tests/test_unit tests/test_mpi-2.np tests/faults.sh tests/background.sh tests/full-fs.sh tests/misuse.sh" \
    >check.log 2>&1; then
    grep -E "^(PASS|FAIL|SKIP|ERROR|# )" check.log
    echo "=== ci-sanitizers.sh: $mpi: sanitizers: passed"
else
    grep -E "^(PASS|FAIL|SKIP|ERROR|# )" check.log
    for log in tests/*.log tests/*.sh.log; do
        grep -l -E "ERROR: (Address|Leak)Sanitizer|runtime error:|FAIL|Failures: [1-9]" "$log" \
            >/dev/null 2>&1 && { echo "--- $log"; tail -60 "$log"; }
    done
    echo "=== ci-sanitizers.sh: $mpi: sanitizers: FAILED"
    failed=1
fi
# Staged forwards (tcio_forward_staging) on two "nodes" at 2 ranks: the
# cases that stage, overtake and overlay copies, under the sanitizers.
if [ "$mpi" = mpich ]; then two_nodes=MPIR_CVAR_NUM_CLIQUES=2; else two_nodes=TCIO_TEST_NODES=2; fi
for case in staged_forwards paper_example node_combining; do
    if env "$two_nodes" TCIO_FORWARD_STAGING=2 CK_RUN_CASE=$case TCIO_TEST_DIR=${TCIO_TEST_DIR:-/tmp} \
        ./tests/run-mpi.sh 2 ./tests/test_mpi >staged-$case.log 2>&1 &&
        ! grep -q -E "ERROR: (Address|Leak)Sanitizer|runtime error:" staged-$case.log; then
        echo "PASS: staged forwards, two nodes, 2 ranks: $case"
    else
        tail -40 staged-$case.log
        echo "=== ci-sanitizers.sh: $mpi: sanitizers, staged forwards ($case): FAILED"
        failed=1
    fi
done
unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS

echo "=== ci-sanitizers.sh: $mpi: ThreadSanitizer build in $work/tsan"
if mkdir "$work/tsan" && cd "$work/tsan" &&
    "$src/configure" -q CC="$cc" MPIEXEC="$mpiexec" CFLAGS="-g -O1 -fsanitize=thread" \
        LDFLAGS=-fsanitize=thread --disable-fortran >configure.log 2>&1 &&
    make -j2 lib/libtcio_core.la >make.log 2>&1 && make -j2 tests/test_background >>make.log 2>&1; then
    # UCX_MEM_EVENTS=no: when a thread whose stack glibc allocated ends,
    # glibc returns the stack with madvise from that thread, where UCX's
    # memory hook then runs after ThreadSanitizer has let go of the thread:
    # MPI_Finalize died of SIGSEGV in ucm_event_enter (UCX's own "async"
    # thread; libtcio's thread has a stack of its own).
    # Where: one node, then two "nodes" (the split checked: the round
    # trips must have run under mixed) with locked and staged forwards.
    for where in "one node" "two nodes" "two nodes, staged"; do
        case $where in
            "one node") settings="" ;;
            "two nodes") settings="$two_nodes" ;;
            *) settings="$two_nodes TCIO_FORWARD_STAGING=2" ;;
        esac
        # shellcheck disable=SC2086 # settings is a list of NAME=VALUE words
        env $settings UCX_MEM_EVENTS=no TSAN_OPTIONS="halt_on_error=0 exitcode=66" \
            TCIO_TEST_TIMEOUT=600 TCIO_TEST_DIR=${TCIO_TEST_DIR:-/tmp} \
            "$mpiexec" -n 2 ./tests/test_background >tsan.log 2>&1
        rc=$?
        grep -E "^[0-9]+%: Checks|MPI_Finalize with a close" tsan.log
        split=yes
        [ "$where" = "one node" ] || grep -q "round trips under rma and mixed" tsan.log || split=no
        if [ $rc -ne 0 ] || [ $split = no ] || grep -q "WARNING: ThreadSanitizer" tsan.log; then
            grep -A30 "WARNING: ThreadSanitizer" tsan.log | head -80
            tail -20 tsan.log
            [ $split = yes ] || echo "ci-sanitizers.sh: $two_nodes did not make two nodes"
            echo "=== ci-sanitizers.sh: $mpi: ThreadSanitizer ($where): FAILED (exit $rc)"
            failed=1
        else
            echo "=== ci-sanitizers.sh: $mpi: ThreadSanitizer ($where): the background close is clean"
        fi
    done
else
    tail -30 "$work/tsan/configure.log" "$work/tsan/make.log" 2>/dev/null
    echo "=== ci-sanitizers.sh: $mpi: the ThreadSanitizer build failed"
    failed=1
fi

echo "=== ci-sanitizers.sh: $mpi: valgrind build in $work/vg"
mkdir "$work/vg" && cd "$work/vg" &&
    "$src/configure" -q CC="$cc" MPIEXEC="$mpiexec" CFLAGS="-g -O1" --disable-shared --disable-fortran \
        >configure.log 2>&1 &&
    make -j2 lib/libtcio.la tests/test_mpi >make.log 2>&1 ||
    { tail -30 "$work/vg/make.log"; echo "ci-sanitizers.sh: the valgrind build failed"; exit 1; }
CK_RUN_CASE=paper_example TCIO_TEST_TIMEOUT=600 TCIO_TEST_DIR=${TCIO_TEST_DIR:-/tmp} \
    "$mpiexec" -n 2 valgrind -q --error-limit=no --leak-check=full \
    --show-leak-kinds=definite,indirect --num-callers=30 \
    --suppressions="$src/tests/valgrind-mpi.supp" --log-file="$work/vg/valgrind.%p.log" \
    ./tests/test_mpi >valgrind-run.log 2>&1
rc=$?
tail -3 valgrind-run.log
# An error record is the lines between two "==PID== " separators; it is
# libtcio's when one of its frames names a source file of lib/.
# libtcio's source files, as valgrind names them in a frame: "(access.c:123)".
lib_frame="\\(($(cd "$src/lib" && ls *.c | sed 's/\.c$//' | paste -sd'|' -))\\.c:[0-9]+\\)"
ours=$(cat "$work"/vg/valgrind.*.log | awk -v frame="$lib_frame" '
    /^==[0-9]+== *$/ { if (rec ~ frame) { print rec; n++ } rec = ""; next }
    { rec = rec "\n" $0 }
    END { if (rec ~ frame) { print rec; n++ }
          print "records with libtcio frames: " n + 0 }')
others=$(grep -c -E "^==[0-9]+== (Invalid|Conditional|Use of uninit|Syscall param|[0-9,]+ bytes in)" "$work"/vg/valgrind.*.log | awk -F: '{ s += $2 } END { print s + 0 }')
echo "$ours" | tail -40
echo "valgrind: $others unsuppressed record(s) in all (MPI's own ones do not fail the run)"
if [ $rc -ne 0 ] || ! echo "$ours" | grep -q "records with libtcio frames: 0"; then
    echo "=== ci-sanitizers.sh: $mpi: valgrind: FAILED (test exit $rc)"
    failed=1
else
    echo "=== ci-sanitizers.sh: $mpi: valgrind: libtcio frames clean"
fi
exit $failed
