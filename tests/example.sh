#!/bin/sh
# The example program (what './quickstart bench' runs) must verify its file.
dir=${TMPDIR:-/tmp}
file="$dir/tcio-example-$$.dat"
./tests/run-mpi.sh 3 ./bench/tcio_example "$file" 1000
rc=$?
rm -f "$file"
exit $rc
