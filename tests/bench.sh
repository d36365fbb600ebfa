#!/bin/sh
# Both benchmarks at tiny sizes, every method: each run must verify every
# element it reads back, and the three interleaving methods (OCIO, TCIO,
# independent MPI-IO) must write identical files.
# libtcio runs once with defaults, once with 4 KiB segments and two
# level-2 slots per rank (the spill path), and with the tuning options
# (aggregators, placement, early drain, read session).
dir=${TMPDIR:-/tmp}/tcio-bench-check-$$
mkdir -p "$dir" || exit 1
trap 'rm -rf "$dir"' EXIT
fail=0
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
./tests/run-mpi.sh 1 ./bench/tcio_bench -m 0 -n 2 -t i -l 10 -s 1 -o "$dir/x" 2>/dev/null
[ $? -eq 2 ] || { echo "FAIL: tcio_bench accepted TYPES that do not match NUM_ARRAY"; fail=1; }
# TCIO_STATS: one summary per file on rank 0, with the bytes of all ranks
# (2 ranks x 1000 ints written, then read).
TCIO_STATS=1 ./tests/run-mpi.sh 2 ./bench/tcio_bench -m 1 -n 1 -t i -l 1000 -s 1 -o "$dir/st.dat" > "$dir/stats.txt"
if [ "$(grep -c '^tcio stats: ' "$dir/stats.txt")" -ne 2 ] ||
   ! grep -Eq '^  bytes written +8000 +4000$' "$dir/stats.txt" ||
   ! grep -Eq '^  bytes read +8000 +4000$' "$dir/stats.txt" ||
   ! grep -Eq '^  segments drained (early|at close) +[1-9]' "$dir/stats.txt"; then
    echo "FAIL: TCIO_STATS summary"; cat "$dir/stats.txt"; fail=1
fi
./tests/run-mpi.sh 1 ./bench/tcio_bench -m 1 -n 1 -t i -l 10 -s 1 -o "$dir/x" --prefetch maybe 2>/dev/null
[ $? -eq 2 ] || { echo "FAIL: tcio_bench accepted --prefetch maybe"; fail=1; }
if ./tests/run-mpi.sh 2 ./bench/art_bench -m 1 -T 4 -c 100 -o "$dir/x" --aggregators 3 >/dev/null 2>&1; then
    echo "FAIL: art_bench verified with 3 aggregators of 2 ranks"; fail=1
fi
if [ $fail -eq 0 ]; then echo "bench: 1 passed, 0 failed"; else echo "bench: 0 passed, 1 failed"; fi
exit $fail
