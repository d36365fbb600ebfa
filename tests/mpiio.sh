#!/bin/sh
# The MPI-IO interposer (libtcio_mpiio.so, doc/mpiio.md):
# - tests/mpiio_prog, a plain MPI-IO program, passes without it and under
#   LD_PRELOAD with it, and its files really were served (the interposer's
#   TCIO_MPIIO_VERBOSE lines and TCIO_STATS counters say so): each
#   handover and the refusal happened, the MPI_COMM_SELF files were not
#   served, the file left open was closed at MPI_Finalize, and bad input
#   gets the error classes it gets without the interposer;
# - tcio_bench -m 2 (independent MPI-IO) under it writes the file that
#   -m 1 (libtcio's own calls) writes, and verifies;
# - TCIO_MPIIO_READ_SESSIONS: tcio_bench -m 0's collective read-back on
#   three "nodes" reads each segment from the file once with it on, once
#   per node with it off (an invalid value, which is said); mpiio_prog's
#   collective reads pass with it on;
# - tests/mpiio_edges prints the same without and under the interposer.
. "$(dirname "$0")/skip-in-distcheck.sh"
dir=${TCIO_TEST_DIR:-${TMPDIR:-/tmp}}/tcio-mpiio.$$
# Each run writes its files in a directory of its own: no run starts
# from files an earlier one left.
mkdir -p "$dir/plain" "$dir/tcio" "$dir/wrap" "$dir/nocache" "$dir/badcfg" "$dir/none" "$dir/pattern" || exit 1
trap 'rm -rf "$dir"' EXIT
# dash runs the EXIT trap on exit only: a signal exits first.
trap 'exit 1' INT TERM HUP
failed=0
fail() { echo "mpiio.sh: FAILED: $*"; failed=$((failed + 1)); }
unset TCIO_MPIIO_FILES TCIO_MPIIO_VERBOSE TCIO_STATS TCIO_STATS_FILE
lib=$(pwd)/lib/.libs
preload="env LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} LD_PRELOAD=$lib/libtcio_mpiio.so"
show() { echo "--- $1:"; cat "$1"; echo "---"; }
np=3
flavor=$(sed -n "s/^MPI_FLAVOR='\(.*\)'$/\1/p" ./tests/run-mpi.sh)

./tests/run-mpi.sh $np ./tests/mpiio_prog "$dir/plain" plain > "$dir/plain.out" 2> "$dir/plain.err" ||
    { show "$dir/plain.out"; show "$dir/plain.err"; fail "mpiio_prog without the interposer"; }
# A hang (a collective the ranks make in different forms) fails the test
# instead of stopping make check.
guard=""
command -v timeout > /dev/null && guard="timeout -k 30 300"
# shellcheck disable=SC2086 # guard and preload are commands with arguments
TCIO_MPIIO_VERBOSE=1 TCIO_STATS=1 $guard ./tests/run-mpi.sh $np $preload ./tests/mpiio_prog "$dir/tcio" interposed \
    > "$dir/tcio.out" 2> "$dir/tcio.err" ||
    { show "$dir/tcio.out"; show "$dir/tcio.err"; fail "mpiio_prog under the interposer"; }
grep "mpiio_prog:" "$dir/tcio.out"

expect() {   # FILE PATTERN TIMES WHAT
    n=$(grep -c -- "$2" "$1")
    [ "$n" = "$3" ] || { show "$1"; fail "$4: '$2' $n times, expected $3"; }
}
for f in pieces elements comms-dup0 comms-dup1 comms-dup2 comms-a comms-b view f90 overflow size bottom barrier partial atomic \
         external32 ordered shared large bad handler handler-tail left-open; do
    expect "$dir/tcio.err" "mpiio-$f.dat: served by libtcio ($np ranks)" 1 "$f served"
done
expect "$dir/tcio.err" "mpiio-self-[0-9]*.dat: not served: a communicator of one rank" $np "files on MPI_COMM_SELF"
expect "$dir/tcio.err" "mpiio-self-first.dat: not served: another handle of the file" 1 \
    "a collective open of a file open on MPI_COMM_SELF"
expect "$dir/tcio.err" "mpiio-atomic.dat: handed over to MPI-IO at MPI_File_set_atomicity" 1 "atomic"
expect "$dir/tcio.err" "mpiio-external32.dat: handed over to MPI-IO at MPI_File_set_view" 1 "external32"
expect "$dir/tcio.err" "mpiio-ordered.dat: handed over to MPI-IO at MPI_File_write_ordered" 1 "ordered"
expect "$dir/tcio.err" "MPI_File_write_shared on .*mpiio-shared.dat refused" $np "write_shared"
expect "$dir/tcio.err" "mpiio-left-open.dat: closed at MPI_Finalize" 1 "left open"
expect "$dir/tcio.err" "mpiio-info-off.dat: not served: the info key tcio_mpiio=disable" 1 "info tcio_mpiio=disable"
expect "$dir/tcio.err" "mpiio-twice.dat: handed over to MPI-IO at MPI_File_open: the file was opened a second time" 1 "second open: the first handed over"
expect "$dir/tcio.err" "mpiio-twice.dat: not served: a second handle of a served file" 1 "second open: the second not served"
# MPI 4's large-count forms (MPICH) were served: one write and read per rank
grep -A 9 "tcio mpiio stats: .*mpiio-large.dat" "$dir/tcio.out" |
    awk '$1 == "writes" && $2 == "served" { w = $3 } $1 == "reads" && $2 == "served" { r = $3 }
         END { exit !(w == '$np' && r == '$np') }' ||
    { show "$dir/tcio.out"; fail "large: the writes and reads were not served"; }
# the counters: the pieces' writes were served, three ranks refused once
grep -A 9 "tcio mpiio stats: .*mpiio-pieces.dat" "$dir/tcio.out" > "$dir/pieces.stats"
awk '$1 == "writes" && $2 == "served" && $3 > 300 { ok = 1 } END { exit !ok }' "$dir/pieces.stats" ||
    { show "$dir/pieces.stats"; fail "pieces: writes served not counted"; }
# MPICH's ROMIO makes its collectives through the PMPI_ names, which the
# interposer makes wait yielding inside MPI-IO calls (mpiio/collectives.c):
# the pieces file's real open made some.  Only where the MPI library calls
# them through its PLT (Debian's MPICH does; one linked to bind them inside
# itself could not be caught).  Open MPI's ompio makes its own inside the
# library, where nothing catches them.
mpilib=$(ldd ./tests/mpiio_prog 2>/dev/null | awk '$1 ~ /^libmpi(ch)?\.so/ { print $3; exit }')
if [ "$flavor" = mpich ] && [ -n "$mpilib" ] &&
   objdump -R "$mpilib" 2>/dev/null | grep -q 'JUMP_SLOT *PMPI_Allreduce'; then
    grep -A 11 "tcio mpiio stats: .*mpiio-pieces.dat" "$dir/tcio.out" |
        awk '$1 == "MPI" && $2 == "collectives" && $3 == "yielded" && $4 > 0 { ok = 1 }
             END { exit !ok }' ||
        { show "$dir/tcio.out"; fail "pieces: no collective of ROMIO's open waited yielding"; }
elif [ "$flavor" = mpich ]; then
    echo "mpiio.sh: not checked that ROMIO's collectives yield (no PLT call of PMPI_Allreduce found in '$mpilib')"
fi
# The error handler's barrier on one rank (mpiio_prog's handler part) ran
# inside the forwarded read and matched the others' (the run did not hang:
# the timeout above); under MPICH the handler must have run (Open MPI's
# ompio accepts the negative offset, and rank 0 barriers after the call).
if [ "$flavor" = mpich ]; then
    expect "$dir/tcio.out" "handler: the error handler ran" 1 "handler: a collective in an error handler"
    expect "$dir/tcio.out" "handler (tail call): the error handler ran" 1 "handler: a collective as an error handler's tail call"
fi
# The barrier check's six barriers on the file's ranks flushed it on
# every rank, its barrier over half of them did not.
grep -A 10 "tcio mpiio stats: .*mpiio-barrier.dat" "$dir/tcio.out" |
    awk '$1 == "flushes" && $2 == "at" && $3 == "barriers" { n = $4 } END { exit n != 6 * '$np' }' ||
    { show "$dir/tcio.out"; fail "barrier: flushes at barriers not 6 per rank"; }
grep -A 10 "tcio mpiio stats: .*mpiio-shared.dat" "$dir/tcio.out" |
    awk '$1 == "refusals" { n = $2 } END { exit n != 2 * '$np' }' ||
    { show "$dir/tcio.out"; fail "shared: refusals not counted"; }
# Files on a new duplicate of the same ranks each time (as HDF5 opens
# them) take over the window libtcio kept from the previous file: the
# interposer opens them on a communicator it keeps per group.  Two files
# open at once cannot share one: the second makes its own.
reused() {   # FILE: "windows reused", summed over the ranks
    grep -A 40 "^tcio stats: .*mpiio-$1.dat" "$dir/tcio.out" |
        awk '$1 == "windows" && $2 == "reused" { print $3; exit }'
}
for f in comms-dup0 comms-dup1 comms-dup2 comms-a; do
    [ "$(reused $f)" = $np ] || { show "$dir/tcio.out"; fail "$f: windows reused '$(reused $f)', expected $np"; }
done
[ "$(reused comms-b)" = 0 ] || { show "$dir/tcio.out"; fail "comms-b: reused a window in use"; }
[ "$(reused comms-half0-1)" = 2 ] ||
    { show "$dir/tcio.out"; fail "comms-half0-1: windows reused '$(reused comms-half0-1)', expected 2"; }
# Five more orders of the same ranks (groups of their own), two files on
# each: the first file of each makes a window, the second reuses it,
# whether its group got a kept communicator (the first two) or not (the
# interposer keeps four: the world's, a half's, these two).
for g in 1 2 3 4 5; do
    [ "$(reused comms-order$g-0)" = 0 ] && [ "$(reused comms-order$g-1)" = $np ] ||
        { show "$dir/tcio.out"; fail "comms-order$g: windows reused '$(reused comms-order$g-0)' then '$(reused comms-order$g-1)', expected 0 then $np"; }
done
# The --wrap form: the same program linked with libtcio_mpiio_wrap.a and
# the options of libtcio_mpiio.wrap, no LD_PRELOAD: every check passes and
# the same files are served, handed over and refused.
TCIO_MPIIO_VERBOSE=1 ./tests/run-mpi.sh $np ./tests/mpiio_prog_wrap "$dir/wrap" interposed \
    > "$dir/wrap.out" 2> "$dir/wrap.err" ||
    { show "$dir/wrap.out"; show "$dir/wrap.err"; fail "mpiio_prog_wrap (the --wrap form)"; }
# Without memory for the interposer's read cache, small reads go to
# libtcio uncached: the one-element-per-call part still passes.
MPIIO_PROG_ONLY=elements MPIIO_PROG_NO_CACHE=1 ./tests/run-mpi.sh $np ./tests/mpiio_prog_wrap \
    "$dir/nocache" interposed > "$dir/nocache.out" 2> "$dir/nocache.err" ||
    { show "$dir/nocache.out"; show "$dir/nocache.err"; fail "small reads without memory for the read cache"; }
# (the program says how many allocations it failed: some on every rank,
# or the part tested nothing)
expect "$dir/nocache.out" "rank [0-9]*: [1-9][0-9]* allocations of 64 KiB failed" $np "failed allocations of the read cache"
said() { sed -n 's|^libtcio_mpiio: [^ ]*/\(mpiio-[^ ]*\)|\1|p' "$1" | sort; }
said "$dir/tcio.err" > "$dir/tcio.said"
said "$dir/wrap.err" > "$dir/wrap.said"
cmp -s "$dir/tcio.said" "$dir/wrap.said" ||
    { diff "$dir/tcio.said" "$dir/wrap.said"; fail "the --wrap form served other files than LD_PRELOAD"; }
# TCIO_MPIIO_FILES: none serves nothing; a pattern serves what it matches
# (two parts of the program are enough for these)
export MPIIO_PROG_ONLY=pieces,view
# shellcheck disable=SC2086
TCIO_MPIIO_FILES=none TCIO_MPIIO_VERBOSE=1 ./tests/run-mpi.sh $np $preload ./tests/mpiio_prog "$dir/none" plain \
    > "$dir/none.out" 2> "$dir/none.err" ||
    { show "$dir/none.out"; show "$dir/none.err"; fail "mpiio_prog with TCIO_MPIIO_FILES=none"; }
expect "$dir/none.err" "served by libtcio" 0 "TCIO_MPIIO_FILES=none"
expect "$dir/none.err" "mpiio-pieces.dat: not served: TCIO_MPIIO_FILES is empty or none" 1 "TCIO_MPIIO_FILES=none"
# shellcheck disable=SC2086
TCIO_MPIIO_FILES='*/nothing:*/mpiio-v?ew.dat' TCIO_MPIIO_VERBOSE=1 ./tests/run-mpi.sh $np $preload ./tests/mpiio_prog "$dir/pattern" plain \
    > "$dir/pattern.out" 2> "$dir/pattern.err" ||
    { show "$dir/pattern.out"; show "$dir/pattern.err"; fail "mpiio_prog with a TCIO_MPIIO_FILES pattern"; }
expect "$dir/pattern.err" "served by libtcio" 1 "a TCIO_MPIIO_FILES pattern"
expect "$dir/pattern.err" "mpiio-view.dat: served by libtcio" 1 "a TCIO_MPIIO_FILES pattern"
expect "$dir/pattern.err" "mpiio-pieces.dat: not served: no pattern of TCIO_MPIIO_FILES matches" 1 "a TCIO_MPIIO_FILES pattern"
# Settings libtcio refuses leave the files to MPI-IO and are said on rank
# 0 without TCIO_MPIIO_VERBOSE (a switch: "no" is off, so nothing else is
# said).
# shellcheck disable=SC2086
TCIO_SEGMENT_SIZE=1.5M TCIO_MPIIO_VERBOSE=no ./tests/run-mpi.sh $np $preload ./tests/mpiio_prog "$dir/badcfg" plain \
    > "$dir/badcfg.out" 2> "$dir/badcfg.err" ||
    { show "$dir/badcfg.out"; show "$dir/badcfg.err"; fail "mpiio_prog with TCIO_SEGMENT_SIZE=1.5M"; }
expect "$dir/badcfg.err" "mpiio-pieces.dat: not served: libtcio refused its settings: .*TCIO_SEGMENT_SIZE" 1 "TCIO_SEGMENT_SIZE=1.5M"
expect "$dir/badcfg.err" "could not open it" 0 "TCIO_MPIIO_VERBOSE=no"
# A TCIO_STATS_FILE longer than an info value may be (1,024 characters
# under MPICH, 256 under Open MPI; tcio_get_info leaves it out): both
# summaries reach it, and none the default stream.
long="$dir/stats"
while [ ${#long} -le 1100 ]; do long="$long/$(printf '%0100d' 0)"; done
mkdir -p "$long" "$dir/longstats"
# shellcheck disable=SC2086
TCIO_STATS=1 TCIO_STATS_FILE="$long/s.txt" ./tests/run-mpi.sh $np $preload ./tests/mpiio_prog "$dir/longstats" interposed \
    > "$dir/longstats.out" 2> "$dir/longstats.err" ||
    { show "$dir/longstats.out"; show "$dir/longstats.err"; fail "mpiio_prog with a long TCIO_STATS_FILE"; }
expect "$long/s.txt" "^tcio mpiio stats: .*mpiio-pieces.dat" 1 "a long TCIO_STATS_FILE: the interposer's summary"
expect "$long/s.txt" "^tcio stats: .*mpiio-pieces.dat" 1 "a long TCIO_STATS_FILE: libtcio's summary"
expect "$dir/longstats.out" "stats:" 0 "a long TCIO_STATS_FILE: summaries on standard output"
rm -rf "$dir/stats"
# A file name with a tab: both JSON summaries escape it (a raw tab or
# newline would break the line a tool parses).
tab=$(printf '\t')
mkdir -p "$dir/tab${tab}dir"
# shellcheck disable=SC2086
TCIO_STATS=json TCIO_STATS_FILE="$dir/tab.jsonl" ./tests/run-mpi.sh $np $preload ./tests/mpiio_prog \
    "$dir/tab${tab}dir" interposed > "$dir/tab.out" 2> "$dir/tab.err" ||
    { show "$dir/tab.out"; show "$dir/tab.err"; fail "mpiio_prog in a directory named with a tab"; }
expect "$dir/tab.jsonl" '^{"tcio_mpiio_stats":1,"file":"[^"]*tab\\u0009dir/[^"]*mpiio-pieces.dat"' 1 \
    "a tab in the name: the interposer's JSON summary"
expect "$dir/tab.jsonl" '^{"tcio_stats":1,.*"file":"[^"]*tab\\u0009dir/[^"]*mpiio-pieces.dat"' 1 \
    "a tab in the name: libtcio's JSON summary"
expect "$dir/tab.jsonl" "$tab" 0 "a tab in the name: raw tabs in the JSON lines"
rm -rf "$dir/tab${tab}dir" "$dir/tab.jsonl" "$dir/tab.out" "$dir/tab.err"
unset MPIIO_PROG_ONLY

a=$(grep "^classes:" "$dir/plain.out") b=$(grep "^classes:" "$dir/tcio.out")
echo "$a"
[ -n "$a" ] && [ "$a" = "$b" ] || fail "bad input: '$b' under the interposer, '$a' without"

# tcio_bench: -m 2 under the interposer writes -m 1's file
bench() {   # NAME ARGS...
    name=$1; shift
    "$@" -n 3 -t i,d,c -l 3000 -s 2 -o "$dir/$name.dat" --csv > "$dir/$name.csv" 2> "$dir/$name.err" &&
        grep -q ',yes$' "$dir/$name.csv" ||
        { show "$dir/$name.csv"; show "$dir/$name.err"; fail "tcio_bench $name"; }
}
bench m1 ./tests/run-mpi.sh $np ./bench/tcio_bench -m 1
# shellcheck disable=SC2086
TCIO_MPIIO_VERBOSE=1 bench m2 ./tests/run-mpi.sh $np $preload ./bench/tcio_bench -m 2
expect "$dir/m2.err" "m2.dat: served by libtcio" 2 "tcio_bench -m 2 served (write and read)"
cmp "$dir/m1.dat" "$dir/m2.dat" || fail "tcio_bench -m 2 under the interposer wrote another file than -m 1"

# Read sessions at collective reads (TCIO_MPIIO_READ_SESSIONS, doc/mpiio.md):
# tcio_bench -m 0 (MPI_File_read_all through an interleaving view) on $np
# "nodes" of one rank each (TCIO_TEST_NODES), 4 KiB segments.  On, every
# segment of the read-back is read from the file once (TCIO_STATS' segment
# loads of the read-back's open equal the file's segments) and each rank
# declared one session; off, every node reads the segments itself.  A value
# that is neither on nor off is said, and leaves them off.
loads() {   # NAME: the read-back's segment loads, summed over the ranks
    awk '/^tcio stats:/ { n++ } n == 2 && $1 == "segment" && $2 == "loads" { print $3; exit }' \
        "$dir/$1.csv"
}
declared() {   # NAME: the read-back's read sessions, summed over the ranks
    awk '/^tcio mpiio stats:/ { n++ } n == 2 && $1 == "read" && $2 == "sessions" { print $3; exit }' \
        "$dir/$1.csv"
}
for v in on maybe; do
    # shellcheck disable=SC2086
    TCIO_SEGMENT_SIZE=4k TCIO_MPIIO_READ_SESSIONS=$v TCIO_TEST_NODES=$np TCIO_STATS=1 \
        bench sessions-$v $guard ./tests/run-mpi.sh $np $preload ./bench/tcio_bench -m 0
    cmp "$dir/m1.dat" "$dir/sessions-$v.dat" || fail "tcio_bench -m 0 (sessions $v) wrote another file than -m 1"
done
segments=$(( ($(wc -c < "$dir/m1.dat") + 4095) / 4096 ))
[ "$(loads sessions-on)" = "$segments" ] && [ "$(declared sessions-on)" = "$np" ] ||
    { show "$dir/sessions-on.csv"; fail "read sessions on: $(loads sessions-on) segment loads, expected $segments; $(declared sessions-on) sessions, expected $np"; }
[ "$(loads sessions-maybe)" -ge $((2 * segments)) ] 2> /dev/null && [ "$(declared sessions-maybe)" = 0 ] ||
    { show "$dir/sessions-maybe.csv"; fail "read sessions off: $(loads sessions-maybe) segment loads, expected at least $((2 * segments)); $(declared sessions-maybe) sessions, expected 0"; }
expect "$dir/sessions-maybe.err" 'TCIO_MPIIO_READ_SESSIONS is neither on nor off on some rank' 2 "an invalid TCIO_MPIIO_READ_SESSIONS (said at each open)"
# mpiio_prog's collective reads with sessions on: read_at_all, read_all_begin
# through a view, and one rank's read far past the end of the file (its
# span is left out of the session, which is only a hint)
mkdir -p "$dir/sessions-prog"
# shellcheck disable=SC2086
MPIIO_PROG_ONLY=view,past_eof_all TCIO_MPIIO_READ_SESSIONS=on TCIO_TEST_NODES=$np TCIO_STATS=1 \
    $guard ./tests/run-mpi.sh $np $preload ./tests/mpiio_prog "$dir/sessions-prog" interposed \
    > "$dir/sessions-prog.out" 2> "$dir/sessions-prog.err" ||
    { show "$dir/sessions-prog.out"; show "$dir/sessions-prog.err"; fail "mpiio_prog with read sessions"; }
for f in view past-eof-all; do
    grep -A 12 "tcio mpiio stats: .*mpiio-$f.dat" "$dir/sessions-prog.out" |
        awk '$1 == "read" && $2 == "sessions" && $3 > 0 { ok = 1 } END { exit !ok }' ||
        { show "$dir/sessions-prog.out"; fail "mpiio_prog with read sessions: none declared on $f"; }
done

# tests/mpiio_edges (views, positions, byte offsets, the read cache,
# preallocate, APPEND, a handover): its output under the interposer is the
# one without it, and every one of its 15 files was served.
mkdir -p "$dir/edges-plain" "$dir/edges-tcio"
./tests/run-mpi.sh $np ./tests/mpiio_edges "$dir/edges-plain" > "$dir/edges-plain.out" \
    2> "$dir/edges-plain.err" ||
    { show "$dir/edges-plain.out"; show "$dir/edges-plain.err"; fail "mpiio_edges without the interposer"; }
# shellcheck disable=SC2086
TCIO_MPIIO_VERBOSE=1 $guard ./tests/run-mpi.sh $np $preload ./tests/mpiio_edges "$dir/edges-tcio" \
    > "$dir/edges-tcio.out" 2> "$dir/edges-tcio.err" ||
    { show "$dir/edges-tcio.out"; show "$dir/edges-tcio.err"; fail "mpiio_edges under the interposer"; }
# Open MPI's ompio computes MPI_SEEK_END through a view otherwise than
# ROMIO and the interposer (doc/mpiio.md): those lines are compared under
# MPICH only.
edges_lines() {
    if [ "$flavor" = openmpi ]; then grep -v -e '^seek_end:' -e '^seek_etypes: SEEK_END' "$1"; else cat "$1"; fi
}
edges_lines "$dir/edges-plain.out" > "$dir/edges-plain.cmp"
edges_lines "$dir/edges-tcio.out" > "$dir/edges-tcio.cmp"
diff "$dir/edges-plain.cmp" "$dir/edges-tcio.cmp" ||
    fail "mpiio_edges: the output under the interposer differs from the one without it (above)"
expect "$dir/edges-tcio.err" "mpiio-edges-[a-z_]*.dat: served by libtcio ($np ranks)" 15 "mpiio_edges served"

if [ $failed -ne 0 ]; then
    echo "mpiio.sh: $failed check(s) failed"
    exit 1
fi
echo "mpiio.sh: all checks passed"
