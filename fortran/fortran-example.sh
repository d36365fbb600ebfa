#!/bin/sh
# examples/fortran_example.f90 on 2 ranks: it checks what it reads back.
dir=${TMPDIR:-/tmp}/tcio-fortran-example-$$
mkdir -p "$dir" || exit 1
trap 'rm -rf "$dir"' EXIT
exec "$top_builddir/tests/run-mpi.sh" 2 ./fortran_example "$dir/example.dat"
