#!/bin/sh
# The Fortran ART dump (art_bench_f) writes the file art_bench -m 1 writes,
# byte for byte, on 2 ranks; each program restarts from the other's file and
# verifies every byte.
dir=${TMPDIR:-/tmp}/tcio-fortran-art-$$
mkdir -p "$dir" || exit 1
trap 'rm -rf "$dir"' EXIT
run="$top_builddir/tests/run-mpi.sh"
fail=0
check() {   # DESCRIPTION COMMAND...
    what=$1; shift
    if "$@" > "$dir/out" 2>&1; then cat "$dir/out"; else
        echo "FAIL: $what"; cat "$dir/out"; fail=1
    fi
}
check "C art_bench dump and restart" "$run" 2 "$top_builddir/bench/art_bench" -m 1 -T 24 -c 300 -o "$dir/c.dat"
check "Fortran dump and restart" "$run" 2 ./art_bench_f -T 24 -c 300 -o "$dir/f.dat"
if ! cmp "$dir/c.dat" "$dir/f.dat"; then echo "FAIL: the C and Fortran dumps differ"; fail=1; fi
check "Fortran restart (read session) of the C dump" "$run" 2 ./art_bench_f -r -s -T 24 -c 300 -o "$dir/c.dat"
check "Fortran dump, 4 KiB segments and 2 slots (spill)" env TCIO_SEGMENT_SIZE=4k TCIO_SEGMENTS_PER_PROC=2 "$run" 2 ./art_bench_f -T 7 -c 500 -o "$dir/f7.dat"
check "C dump of the same 7 trees" "$run" 2 "$top_builddir/bench/art_bench" -m 1 -T 7 -c 500 -o "$dir/c7.dat"
if ! cmp "$dir/c7.dat" "$dir/f7.dat"; then echo "FAIL: the C and Fortran dumps (7 trees) differ"; fail=1; fi
# A restart of a file that does not hold these trees must fail.
if "$run" 2 ./art_bench_f -r -T 25 -c 300 -o "$dir/c.dat" > "$dir/out" 2>&1; then
    echo "FAIL: art_bench_f verified a file of other trees"; cat "$dir/out"; fail=1
fi
# Options: --help answers with the usage, a bad option is refused with 2.
"$run" 1 ./art_bench_f --help | grep -q '^usage: mpiexec -n P art_bench_f' ||
    { echo "FAIL: art_bench_f --help"; fail=1; }
"$run" 1 ./art_bench_f -T x -o "$dir/x" 2>/dev/null
[ $? -eq 2 ] || { echo "FAIL: art_bench_f accepted -T x"; fail=1; }
if [ $fail -eq 0 ]; then echo "fortran-art: 1 passed, 0 failed"; else echo "fortran-art: 0 passed, 1 failed"; fi
exit $fail
