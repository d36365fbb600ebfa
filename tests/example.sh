#!/bin/sh
# The example program (what './quickstart bench' runs) must verify its file;
# --help prints the usage and writes no file.
dir=${TMPDIR:-/tmp}/tcio-example-$$
mkdir -p "$dir" || exit 1
trap 'rm -rf "$dir"' EXIT
# dash runs the EXIT trap on exit only: a signal exits first.
trap 'exit 1' INT TERM HUP
./tests/run-mpi.sh 3 ./bench/tcio_example --len 1000 "$dir/example.dat" || exit 1
./tests/run-mpi.sh 2 ./bench/tcio_example "$dir/old-usage.dat" 500 || exit 1
(cd "$dir" && "$OLDPWD/tests/run-mpi.sh" 1 "$OLDPWD/bench/tcio_example" --help) > "$dir/help.txt" || exit 1
grep -q '^usage: mpiexec -n P tcio-example' "$dir/help.txt" || { cat "$dir/help.txt"; exit 1; }
[ ! -e "$dir/--help" ] || { echo "FAIL: tcio_example --help wrote a file"; exit 1; }
./tests/run-mpi.sh 1 ./bench/tcio_example 2>/dev/null
[ $? -eq 2 ] || { echo "FAIL: tcio_example without FILE did not exit 2"; exit 1; }
# A failure says why: a missing directory, named with MPI's reason.
./tests/run-mpi.sh 2 ./bench/tcio_example "$dir/missing/x.dat" 10 > /dev/null 2> "$dir/err.txt"
[ $? -eq 1 ] && grep -q 'MPI_File_open(".*missing/x.dat") failed' "$dir/err.txt" ||
    { echo "FAIL: tcio_example in a missing directory"; cat "$dir/err.txt"; exit 1; }
exit 0
