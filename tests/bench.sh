#!/bin/sh
# Both benchmarks at tiny sizes, every method: each run must verify every
# element it reads back, and the three interleaving methods (OCIO, TCIO,
# independent MPI-IO) must write identical files.
# libtcio runs once with defaults, once with 4 KiB segments and two
# level-2 slots per rank (the spill path), and with the tuning options
# (aggregators, placement, early drain, read session).
. "$(dirname "$0")/skip-in-distcheck.sh"
dir=${TMPDIR:-/tmp}/tcio-bench-check-$$
mkdir -p "$dir" || exit 1
# A FUSE mount that bench/compare failed to remove must not outlive the
# test (nor make rm -rf walk into it).
# shellcheck disable=SC2317 # called by the trap
unmount_leftovers() {
    findmnt -rn -o TARGET 2>/dev/null | grep -F "$dir/" | while read -r m; do umount -l "$m" 2>/dev/null; done
}
trap 'unmount_leftovers; rm -rf "$dir"' EXIT
# dash runs the EXIT trap on exit only: a signal exits first.
trap 'exit 1' INT TERM HUP
fail=0
unset TCIO_TRANSPORT   # the checks below expect auto
run() {   # NAME NP PROGRAM ARGS...
    name=$1; shift
    if ! "$@" --csv > "$dir/$name.csv"; then
        echo "FAIL: $name did not verify"; cat "$dir/$name.csv"; fail=1
    elif ! grep -q ',yes$' "$dir/$name.csv"; then
        echo "FAIL: $name: no verified row"; cat "$dir/$name.csv"; fail=1
    else
        tail -n 1 "$dir/$name.csv"
    fi
}
same() {   # FILE FILE
    if ! cmp "$1" "$2"; then echo "FAIL: $1 and $2 differ"; fail=1; fi
}
for m in 0 1 2; do
    run "synthetic-$m" ./tests/run-mpi.sh 3 ./bench/tcio_bench -m $m -n 3 -t i,d,c -l 3000 -s 2 -o "$dir/syn$m.dat"
    run "art-$m" ./tests/run-mpi.sh 3 ./bench/art_bench -m $m -T 20 -c 300 -o "$dir/art$m.dat"
done
# The ceiling (one contiguous block per rank) and PnetCDF (exit status 77:
# built without it, because configure found none for this MPI).
for t in "-n 3 -t i,d,c -l 3000 -s 2" "-n 2 -t s,f -l 4000 -s 1"; do
    # shellcheck disable=SC2086 # t is a list of options
    run "synthetic-contiguous" ./tests/run-mpi.sh 3 ./bench/tcio_bench -m 3 $t -o "$dir/contig.dat"
    # shellcheck disable=SC2086
    ./tests/run-mpi.sh 3 ./bench/tcio_bench -m 4 $t -o "$dir/pnetcdf.dat" --csv > "$dir/pnetcdf.csv" 2>&1
    case $? in
        0) grep -q ',yes$' "$dir/pnetcdf.csv" && tail -n 1 "$dir/pnetcdf.csv" ||
               { echo "FAIL: pnetcdf: no verified row"; cat "$dir/pnetcdf.csv"; fail=1; } ;;
        77) grep 'skipped' "$dir/pnetcdf.csv" | head -n 1 ;;
        *) echo "FAIL: pnetcdf did not verify"; cat "$dir/pnetcdf.csv"; fail=1 ;;
    esac
done
# File per rank (stdio, FILE.RANK): verified, and the same bytes in the
# same order as the shared-file methods without the other ranks' blocks:
# FILE.R holds rank R's blocks of the interleaved file (blocks of 26 bytes
# for i,d,c at SIZE_ACCESS 2, the 3 ranks' blocks round-robin).
run "synthetic-file-per-rank" ./tests/run-mpi.sh 3 ./bench/tcio_bench -m 5 -n 3 -t i,d,c -l 3000 -s 2 -o "$dir/fpr.dat"
for r in 0 1 2; do
    if [ ! -f "$dir/fpr.dat.$r" ] || [ "$(wc -c < "$dir/fpr.dat.$r")" -ne 39000 ]; then
        echo "FAIL: file-per-rank: $dir/fpr.dat.$r missing or not 39000 bytes"; fail=1
    fi
done
if command -v python3 >/dev/null 2>&1 && ! python3 - "$dir/syn0.dat" "$dir/fpr.dat" <<'PY'
import sys
shared = open(sys.argv[1], "rb").read()
for r in range(3):
    mine = b"".join(shared[b:b + 26] for b in range(26 * r, len(shared), 26 * 3))
    assert open("%s.%d" % (sys.argv[2], r), "rb").read() == mine, "rank %d" % r
PY
then
    echo "FAIL: file-per-rank: FILE.RANK is not the rank's blocks of the shared file"; fail=1
fi
run "synthetic-spill" env TCIO_SEGMENT_SIZE=4k TCIO_SEGMENTS_PER_PROC=2 ./tests/run-mpi.sh 4 ./bench/tcio_bench -m 1 -n 2 -t s,f -l 4000 -s 1 -o "$dir/synspill.dat"
run "art-spill" env TCIO_SEGMENT_SIZE=4k TCIO_SEGMENTS_PER_PROC=2 ./tests/run-mpi.sh 4 ./bench/art_bench -m 1 -T 16 -c 400 -o "$dir/artspill.dat"
run "synthetic-tuned" ./tests/run-mpi.sh 3 ./bench/tcio_bench -m 1 -n 3 -t i,d,c -l 3000 -s 2 -o "$dir/syntuned.dat" --aggregators 1 --placement spread --early-drain on --prefetch on
run "art-tuned" env TCIO_SEGMENT_SIZE=4k TCIO_SEGMENTS_PER_PROC=4 ./tests/run-mpi.sh 3 ./bench/art_bench -m 1 -T 20 -c 300 -o "$dir/arttuned.dat" --aggregators 2 --placement 2,0 --early-drain off --prefetch on
same "$dir/syn0.dat" "$dir/syntuned.dat"
same "$dir/art0.dat" "$dir/arttuned.dat"
same "$dir/syn0.dat" "$dir/syn1.dat"
same "$dir/syn0.dat" "$dir/syn2.dat"
same "$dir/art0.dat" "$dir/art1.dat"
same "$dir/art0.dat" "$dir/art2.dat"
# The checkpointing loop (--dumps): TCIO with both closes, OCIO and file per
# rank; every dump verified, each dump of the background close
# byte-identical to the synchronous one's and to OCIO's, blocked_s and
# total_s reported.
for c in sync background; do
    run "dumps-$c" ./tests/run-mpi.sh 3 ./bench/tcio_bench -m 1 -n 2 -t i,d -l 3000 -s 1 -o "$dir/dump-$c" --dumps 2 --compute-ms 20 --close $c
done
run "dumps-ocio" ./tests/run-mpi.sh 3 ./bench/tcio_bench -m 0 -n 2 -t i,d -l 3000 -s 1 -o "$dir/dump-ocio" --dumps 2 --compute-ms 20
run "dumps-file-per-rank" ./tests/run-mpi.sh 3 ./bench/tcio_bench -m 5 -n 2 -t i,d -l 3000 -s 1 -o "$dir/dump-fpr" --dumps 2
for k in 0 1; do
    same "$dir/dump-sync.$k" "$dir/dump-background.$k"
    same "$dir/dump-ocio.$k" "$dir/dump-background.$k"
done
if ! head -n 1 "$dir/dumps-background.csv" | grep -q ',close,blocked_s,total_s,verified$' ||
   ! tail -n 1 "$dir/dumps-background.csv" | grep -q ',2,20,background,[0-9.]*,[0-9.]*,yes$'; then
    echo "FAIL: --dumps: no blocked_s and total_s columns"; cat "$dir/dumps-background.csv"; fail=1
fi
./tests/run-mpi.sh 1 ./bench/tcio_bench -m 1 -n 1 -t i -l 10 -s 1 -o "$dir/x" --close background 2>/dev/null
[ $? -eq 2 ] || { echo "FAIL: tcio_bench accepted --close without --dumps"; fail=1; }
./tests/run-mpi.sh 1 ./bench/tcio_bench -m 0 -n 2 -t i -l 10 -s 1 -o "$dir/x" 2>/dev/null
[ $? -eq 2 ] || { echo "FAIL: tcio_bench accepted TYPES that do not match NUM_ARRAY"; fail=1; }
# TCIO_STATS: one summary per file on rank 0, with the bytes of all ranks
# (2 ranks x 1000 ints written, then read).
TCIO_STATS=1 ./tests/run-mpi.sh 2 ./bench/tcio_bench -m 1 -n 1 -t i -l 1000 -s 1 -o "$dir/st.dat" > "$dir/stats.txt"
# auto takes shm: every rank is on this one machine.
if [ "$(grep -c '^tcio stats: .*, transport shm)$' "$dir/stats.txt")" -ne 2 ] ||
   ! grep -Eq '^  bytes written +8000 +4000$' "$dir/stats.txt" ||
   ! grep -Eq '^  bytes read +8000 +4000$' "$dir/stats.txt" ||
   ! grep -Eq '^  segments drained (early|at close) +[1-9]' "$dir/stats.txt"; then
    echo "FAIL: TCIO_STATS summary"; cat "$dir/stats.txt"; fail=1
fi
# rma asked for by name: the summary names it.
TCIO_STATS=1 TCIO_TRANSPORT=rma ./tests/run-mpi.sh 2 ./bench/tcio_bench -m 1 -n 1 -t i -l 1000 -s 1 -o "$dir/st.dat" > "$dir/stats-rma.txt"
if [ "$(grep -c '^tcio stats: .*, transport rma)$' "$dir/stats-rma.txt")" -ne 2 ]; then
    echo "FAIL: TCIO_STATS with TCIO_TRANSPORT=rma"; cat "$dir/stats-rma.txt"; fail=1
fi
# TCIO_STATS=json: one JSON object per file, on standard error (nothing
# on standard output) or appended to TCIO_STATS_FILE, same figures.
check_json() {   # FILE: two objects, 8000 bytes written and read (4000 per rank)
    if command -v python3 >/dev/null 2>&1; then
        python3 - "$1" <<'PY'
import json, sys
objs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
assert len(objs) == 2, "%d objects" % len(objs)
for o in objs:
    assert o["tcio_stats"] == 1 and o["ranks"] == 2 and o["aggregators"] >= 1
    assert o["file"].endswith("st.dat")
    assert o["transport"] == "shm", o.get("transport")   # auto on one node
    assert set(o["seconds"]) == {"open", "open_level2", "open_tier", "write_moves", "read_moves", "loads", "spills",
                                 "early_drains", "prefetch", "close", "sync", "set_size",
                                 "writes_around",
                                 "older_segment_waits", "background_drain", "forwards",
                                 "forward_merges", "slot_waits", "one_sided_waits", "forward_waits",
                                 "fetch_waits", "staging_waits", "collective_waits"}
    for v in o["seconds"].values():
        assert 0 <= v["max"] <= v["sum"]
w, r = objs
assert w["counts"]["bytes_written"] == {"sum": 8000, "max": 4000}, w["counts"]
assert r["counts"]["bytes_read"] == {"sum": 8000, "max": 4000}, r["counts"]
assert w["counts"]["segments_drained_early"]["sum"] + w["counts"]["segments_drained_at_close"]["sum"] >= 1
PY
    else   # no python3: the shape of the lines and the byte counts
        [ "$(grep -c '^{"tcio_stats":1,.*}$' "$1")" -eq 2 ] &&
            [ "$(grep -c '"transport":"shm"' "$1")" -eq 2 ] &&
            grep -q '"bytes_written":{"sum":8000,"max":4000}' "$1" &&
            grep -q '"bytes_read":{"sum":8000,"max":4000}' "$1"
    fi
}
TCIO_STATS=json ./tests/run-mpi.sh 2 ./bench/tcio_bench -m 1 -n 1 -t i -l 1000 -s 1 -o "$dir/st.dat" --csv > "$dir/json.out" 2> "$dir/json.err"
if grep -q '{' "$dir/json.out" || ! check_json "$dir/json.err"; then
    echo "FAIL: TCIO_STATS=json on standard error"; cat "$dir/json.out" "$dir/json.err"; fail=1
fi
TCIO_STATS=json TCIO_STATS_FILE="$dir/stats.json" ./tests/run-mpi.sh 2 ./bench/tcio_bench -m 1 -n 1 -t i -l 1000 -s 1 -o "$dir/st.dat" --csv > "$dir/json.out" 2> "$dir/json.err"
if grep -q '{' "$dir/json.out" "$dir/json.err" || ! check_json "$dir/stats.json"; then
    echo "FAIL: TCIO_STATS=json with TCIO_STATS_FILE"; cat "$dir/json.out" "$dir/json.err" "$dir/stats.json"; fail=1
fi
# Options: --help prints the usage and exits 0, unknown options exit 2.
for p in tcio_bench art_bench; do
    ./tests/run-mpi.sh 1 ./bench/$p --help > "$dir/help.txt" 2>&1
    if [ $? -ne 0 ] || ! grep -q '^usage: mpiexec' "$dir/help.txt"; then
        echo "FAIL: $p --help"; cat "$dir/help.txt"; fail=1
    fi
    ./tests/run-mpi.sh 1 ./bench/$p -m 1 -o "$dir/x" --no-such-option >/dev/null 2>&1
    [ $? -eq 2 ] || { echo "FAIL: $p accepted --no-such-option"; fail=1; }
done
./tests/run-mpi.sh 1 ./bench/tcio_bench -m 1 -n 1 -t i -l 10 -s 1 -o "$dir/x" --prefetch maybe 2>/dev/null
[ $? -eq 2 ] || { echo "FAIL: tcio_bench accepted --prefetch maybe"; fail=1; }
if ./tests/run-mpi.sh 2 ./bench/art_bench -m 1 -T 4 -c 100 -o "$dir/x" --aggregators 3 >/dev/null 2>&1; then
    echo "FAIL: art_bench verified with 3 aggregators of 2 ranks"; fail=1
fi
# bench/compare with the file-per-rank method, on the file system as it is
# and on a FUSE mount of its own (--fs fuse: a skip line and exit status 0
# where FUSE cannot be used, as on CI machines without /dev/fuse); neither
# may leave a mount, a directory or a benchmark file behind.
compare=${srcdir:-.}/bench/compare
for fs in native fuse; do
    METHODS="tcio file-per-rank" timeout -k 30 300 "$compare" --fs $fs 2 1k 256 "$dir/cmp-$fs.dat" > "$dir/compare.$fs.out" 2>&1
    status=$?
    if [ $status -ne 0 ]; then
        echo "FAIL: compare --fs $fs (exit status $status)"; cat "$dir/compare.$fs.out"; fail=1
    elif [ $fs = fuse ] && grep -q '^fuse: skipped: ' "$dir/compare.$fs.out"; then
        grep '^fuse: skipped: ' "$dir/compare.$fs.out"
    elif ! grep -q "^file system: $([ $fs = fuse ] && echo 'fuse: bindfs')" "$dir/compare.$fs.out" ||
         ! grep -Eq '^  file-per-rank +LEN 1024 +write +[0-9.]+ MB/s' "$dir/compare.$fs.out" ||
         ! grep -Eq '^  TCIO / file-per-rank: +write +[0-9.]+%  read +[0-9.]+%' "$dir/compare.$fs.out"; then
        echo "FAIL: compare --fs $fs: no file-per-rank figures"; cat "$dir/compare.$fs.out"; fail=1
    else
        grep -E '^(file system|  file-per-rank|  TCIO / file-per-rank)' "$dir/compare.$fs.out"
    fi
    if [ -n "$(ls -d "$dir/cmp-$fs.dat"* "$dir"/*-fuse.* 2>/dev/null)" ] ||
       findmnt -rn -o TARGET 2>/dev/null | grep -Fq "$dir/"; then
        echo "FAIL: compare --fs $fs left files or a mount behind:"; ls -la "$dir"; fail=1
    fi
done
# bench/nodes-targets at its quick size, one configuration of this MPI:
# one node and two "nodes" verify, the table has their figures, the later
# opens are timed, --stats finds the phases in TCIO_STATS' report, and
# the benchmark file is gone.
targets=${srcdir:-.}/bench/nodes-targets
case $(sed -n "s/^MPI_FLAVOR='\(.*\)'$/\1/p" ./tests/run-mpi.sh) in
    mpich) config=mpich-2 ;;
    openmpi) config=ompi-sm ;;
    *) config= ;;   # the script has no configurations for other MPIs
esac
if [ -z "$config" ]; then
    echo "nodes-targets: skipped (no configurations for this MPI)"
elif ! timeout -k 30 300 "$targets" --quick --stats --only $config "$dir/nt.dat" > "$dir/nt.out" 2>&1 ||
   ! grep -Eq '^\| (mpich-2|ompi-sm) \| [0-9]+, [0-9]+ \| [0-9.]+ / [0-9.]+ \| [0-9.]+ / [0-9.]+ \| [0-9]+% / [0-9]+% \| [0-9]+% \| (met|missed) / (met|missed) \| [0-9.]+ / [0-9.]+ \|$' "$dir/nt.out" ||
   ! grep -Eq '^Later opens .*ratio [0-9]+\.[0-9]{2} \(target at most 1\.50: (met|missed)\)$' "$dir/nt.out" ||
   ! grep -Eq '^\| (mpich-2|ompi-sm) \| 2 \| [0-9.]+( \| [0-9]+\.[0-9]{3}){9} \|$' "$dir/nt.out" ||
   [ -e "$dir/nt.dat" ]; then
    echo "FAIL: nodes-targets --quick"; cat "$dir/nt.out"; fail=1
else
    grep -E '^\| (mpich-2|ompi-sm) ' "$dir/nt.out"
fi
# The open/close benchmark: both methods open and close, and it reports.
if ! ./tests/run-mpi.sh 2 ./bench/tcio_open_close -n 2 -r 1 "$dir/oc.dat" > "$dir/oc.txt" ||
   ! grep -q 'ratio tcio/MPI-IO' "$dir/oc.txt"; then
    echo "FAIL: tcio_open_close"; cat "$dir/oc.txt"; fail=1
fi
if [ $fail -eq 0 ]; then echo "bench: 1 passed, 0 failed"; else echo "bench: 0 passed, 1 failed"; fi
exit $fail
