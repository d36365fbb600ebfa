#!/bin/sh
# A full file system: the full_file_system case of
# tests/test_faults.c on a 256 KiB tmpfs, at 2 and 3 ranks, for early drain
# on and off, with and without spills, closed with tcio_close and with
# tcio_close_begin/tcio_close_end (the helper thread meets the full file
# system: every rank gets the error at tcio_close_end, and the file holds
# only bytes that were written); and a level 2 that /dev/shm cannot
# hold (level2_over_shm).  Mounting needs root: otherwise (or
# when mounting fails, as in some containers) the test is skipped (exit 77)
# with the reason.
. "$(dirname "$0")/skip-in-distcheck.sh"
if [ "$(id -u)" != 0 ]; then
    echo "full-fs.sh: skipped: not root (mounting a small tmpfs needs root)"
    exit 77
fi
mnt=$(mktemp -d "${TMPDIR:-/tmp}/tcio-full-XXXXXX") || exit 1
if ! err=$(mount -t tmpfs -o size=256k tcio-full "$mnt" 2>&1); then
    rmdir "$mnt"
    echo "full-fs.sh: skipped: cannot mount a tmpfs: $err"
    exit 77
fi
trap 'umount "$mnt"; rmdir "$mnt"' EXIT
# dash runs the EXIT trap on exit only: a signal exits first.
trap 'exit 1' INT TERM HUP
for np in 2 3; do
    TCIO_TEST_FULL_FS=$mnt CK_RUN_CASE=full_file_system TCIO_TEST_TIMEOUT=60 \
        ./tests/run-mpi.sh $np ./tests/test_faults || exit 1
done

# A level 2 larger than /dev/shm, where MPI keeps shared windows: in a
# private mount namespace with a 16 MiB /dev/shm (the machine's stays as it
# is), the open must be refused rather than die of SIGBUS.
# (A build tree or test directory under /dev/shm would vanish under the
# new mount: skipped.)
test_dir=${TCIO_TEST_DIR:-${TMPDIR:-/tmp}}
case $(pwd -P)/:$test_dir/ in
    /dev/shm/*|*:/dev/shm/*) shm_hides_build=yes ;;
    *) shm_hides_build=no ;;
esac
if [ $shm_hides_build = yes ]; then
    echo "full-fs.sh: the build tree or the test directory ($test_dir) is under /dev/shm," \
         "which the private 16 MiB /dev/shm would hide: /dev/shm case skipped"
elif command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
    TCIO_TEST_SMALL_SHM=1 CK_RUN_CASE=level2_over_shm TCIO_TEST_TIMEOUT=60 \
        unshare -m sh -c 'mount -t tmpfs -o size=16m tcio-shm /dev/shm &&
                          exec ./tests/run-mpi.sh 2 ./tests/test_faults' || exit 1
else
    echo "full-fs.sh: no private mount namespace (unshare -m): /dev/shm case skipped"
fi
