#!/bin/sh
# Unmodified MPI-IO programs with and without libtcio's MPI-IO interposer.
# The programs are plain MPI-IO and HDF5, nothing of libtcio:
#   tests/mpiio_fh, tests/mpiio_fmod, tests/mpiio_f08
#       (tests/mpiio_fortran.F90 through mpif.h, use mpi and use mpi_f08:
#       per-piece writes at offsets and through the file pointer, views
#       with an etype, sync-barrier-sync and reads of another rank's
#       pieces, get_size; each checks its file with Fortran stream I/O),
#       on 3 ranks
#   bench/h5_pieces (parallel HDF5, one H5Dwrite per block of 64 doubles,
#       read back and checked; independent, then collective, then
#       independent into a chunked dataset with HDF5's default fill), on 4
#       ranks
# Each runs first plainly, then, when lib/.libs/libtcio_mpiio.so has been
# built, again with it preloaded and TCIO_STATS=1: libtcio's "tcio stats:"
# table on standard output shows that libtcio served the file, and the
# file must be byte-identical to the plain run's (cmp; h5diff for the HDF5
# file, whose metadata may legitimately differ between runs).  Without
# the interposer that leg is one line, "interposer not built: skipped".
# The three Fortran programs must also write the same file as each other.
#
# Under Open MPI the Fortran bindings (libmpi_mpifh, and libmpi_usempif08
# through it) call the PMPI_File_* entry points; under MPICH (libmpichfort)
# mpif.h and use mpi call the MPI_File_* ones, and use mpi_f08 calls
# PMPI_File_open, _close, _sync, _seek, _set_view, _get_size ... but
# MPI_File_write_at, _read_at, _write ...: the interposer must define both
# names for the Fortran legs to be served (doc/portability.md, "Which
# entry points the Fortran bindings call").
#
# LD_PRELOAD is given to the ranks only, through env(1) as the program the
# launcher starts, not to the launcher: that reaches every rank the same
# way with MPICH's hydra and with Open MPI's mpiexec (which forwards the
# environment to local ranks but to remote nodes only variables named with
# -x), and keeps the interposer (and the MPI library it pulls in) out of
# mpiexec itself.
#
# Exit status 77 (skipped) when neither the Fortran programs nor the HDF5
# program were built (no Fortran compiler for this MPI, no parallel HDF5),
# with one line saying why each is missing.  Files go to TCIO_TEST_DIR
# (else /dev/shm if writable, else /tmp) and are removed.
. "$(dirname "$0")/skip-in-distcheck.sh"
if [ -z "${TCIO_TEST_DIR:-}" ]; then
    if [ -w /dev/shm ]; then TCIO_TEST_DIR=/dev/shm; else TCIO_TEST_DIR=/tmp; fi
fi
work=$(mktemp -d "$TCIO_TEST_DIR/tcio-mpiio-programs.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
# dash runs the EXIT trap on exit only: a signal exits first.
trap 'exit 1' INT TERM HUP
failed=0 ran=0
fail() { echo "mpiio-programs.sh: FAILED: $*"; failed=$((failed + 1)); }
unset TCIO_STATS TCIO_STATS_FILE

interposer=$(pwd)/lib/.libs/libtcio_mpiio.so
[ -f "$interposer" ] || interposer=""

# run NP LOG PROGRAM ARGS...: the program's output in LOG, shown on failure.
run() {
    np=$1 log=$2
    shift 2
    if ./tests/run-mpi.sh "$np" "$@" >"$log" 2>&1; then
        return 0
    fi
    echo "--- $*:"; cat "$log"; echo "---"
    return 1
}

# run_preloaded NP LOG FILE PROGRAM ARGS...: under the interposer, with its
# statistics; fails unless they name FILE.
run_preloaded() {
    np=$1 log=$2 file=$3
    shift 3
    run "$np" "$log" env LD_PRELOAD="$interposer" \
        LD_LIBRARY_PATH="$(pwd)/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        TCIO_STATS=1 "$@" || return 1
    if ! grep -q "^tcio stats: .*$(basename "$file")" "$log"; then
        cat "$log"
        echo "mpiio-programs.sh: no 'tcio stats:' table for $file: libtcio did not serve it"
        return 1
    fi
    grep "^tcio stats: " "$log" | sed 's/^/  /'
}

# ---- the Fortran programs, one per binding
fortran=""
for p in mpiio_fh mpiio_fmod mpiio_f08; do
    [ -x "tests/$p" ] && fortran="$fortran $p"
done
if [ -z "$fortran" ]; then
    echo "Fortran programs not built: ${FORTRAN_WHY_MISSING:-configure found no Fortran compiler for this MPI}"
else
    [ -x tests/mpiio_f08 ] || echo "tests/mpiio_f08 not built: the Fortran compiler has no mpi_f08 module"
    first=""
    for p in $fortran; do
        ran=$((ran + 1))
        if run 3 "$work/$p.log" "tests/$p" "$work/$p.dat"; then
            cat "$work/$p.log"
        else
            fail "$p (plain)"; continue
        fi
        if [ -z "$first" ]; then first=$p
        elif ! cmp "$work/$first.dat" "$work/$p.dat"; then
            fail "$p and $first wrote different files"
        fi
        [ -n "$interposer" ] || continue
        if run_preloaded 3 "$work/$p-i.log" "$work/$p-i.dat" "tests/$p" "$work/$p-i.dat"; then
            grep "^mpiio_fortran" "$work/$p-i.log" | sed 's/$/ (interposer)/'
            cmp "$work/$p.dat" "$work/$p-i.dat" || fail "$p: the file under the interposer differs"
        else
            fail "$p under the interposer"
        fi
    done
fi

# ---- the HDF5 program
if [ ! -x bench/h5_pieces ]; then
    : "${HDF5_WHY_MISSING:=no (configure found no parallel HDF5 for this MPI)}"
    # configure's reason reads "no (WHY)".
    why=${HDF5_WHY_MISSING#no (}
    echo "HDF5 program not built: ${why%)}"
else
    ran=$((ran + 1))
    # Independent mode (one MPI_File_write_at/read_at per block), then
    # collective mode (one MPI_File_write_at_all/read_at_all per block:
    # 50 ms a block under MPICH on an oversubscribed machine, so 4 blocks).
    # Then a chunked dataset with HDF5's default fill settings: its fill
    # values are written at the creation and ordered before the blocks by a
    # bare MPI_Barrier, which the interposer turns into a flush (without it
    # the fill landed on the blocks: "verified no").
    for mode in independent collective chunked; do
        case $mode in
            independent) h5="bench/h5_pieces -n 32 -k" ;;
            collective) h5="bench/h5_pieces -c -n 4 -k" ;;
            chunked) h5="bench/h5_pieces --chunked 100 -n 8 -k" ;;
        esac
        # shellcheck disable=SC2086 # h5 is a list of words
        if run 4 "$work/h5.log" $h5 "$work/$mode.h5"; then
            grep "^HDF5\|verified" "$work/h5.log"
        else
            fail "h5_pieces, $mode (plain)"; continue
        fi
        [ -n "$interposer" ] || continue
        # shellcheck disable=SC2086
        if run_preloaded 4 "$work/h5-i.log" "$work/$mode-i.h5" $h5 "$work/$mode-i.h5"; then
            grep "verified" "$work/h5-i.log" | sed 's/$/ (interposer)/'
            if [ -z "${H5DIFF:-}" ]; then
                echo "h5diff not found (Debian: hdf5-tools): the HDF5 files were not compared"
            elif ! "$H5DIFF" "$work/$mode.h5" "$work/$mode-i.h5"; then
                fail "h5_pieces, $mode: h5diff finds the file under the interposer different"
            fi
        else
            fail "h5_pieces, $mode, under the interposer"
        fi
    done
fi

[ -n "$interposer" ] || echo "interposer not built: skipped"
if [ $failed -ne 0 ]; then
    echo "mpiio-programs.sh: $failed check(s) failed"
    exit 1
fi
[ $ran -gt 0 ] || exit 77
echo "mpiio-programs.sh: all checks passed"
