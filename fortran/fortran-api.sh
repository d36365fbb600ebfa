#!/bin/sh
# The Fortran module on 2 ranks: every call, with `use mpi' integer handles
# and (where the MPI has it) `use mpi_f08' handles; see test_fortran.F90.
dir=${TMPDIR:-/tmp}/tcio-fortran-api-$$
mkdir -p "$dir" || exit 1
trap 'rm -rf "$dir"' EXIT
exec "$top_builddir/tests/run-mpi.sh" 2 ./test_fortran "$dir"
