#!/bin/sh
# examples/btio_before.f90 (MPI-IO, one call per row) and btio_after.f90
# (its port to libtcio, call for call): each checks every value it reads
# back, and the two files must be byte-identical; on 4 ranks with the
# default grid and on 3 ranks with another.
dir=${TMPDIR:-/tmp}/tcio-fortran-btio-$$
mkdir -p "$dir" || exit 1
trap 'rm -rf "$dir"' EXIT
run=$top_builddir/tests/run-mpi.sh
"$run" 4 ./btio_before "$dir/before.dat" || exit 1
"$run" 4 ./btio_after "$dir/after.dat" || exit 1
cmp "$dir/before.dat" "$dir/after.dat" || exit 1
"$run" 3 ./btio_before "$dir/before3.dat" 12 || exit 1
"$run" 3 ./btio_after "$dir/after3.dat" 12 || exit 1
cmp "$dir/before3.dat" "$dir/after3.dat" || exit 1
# A grid the ranks cannot share evenly is refused with the usage.
"$run" 3 ./btio_after "$dir/bad.dat" 10 > "$dir/usage.txt" 2>&1
[ $? -ne 0 ] && grep -q '^usage: ' "$dir/usage.txt" || { cat "$dir/usage.txt"; exit 1; }
exit 0
