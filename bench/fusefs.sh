# shellcheck shell=bash
# fusefs.sh - a FUSE file system of the run's own for the benchmark
# scripts (sourced by bench/compare and bench/curves; bash).
#
# Debian's bindfs mirrors a backing directory through FUSE: every request
# the kernel does not answer from its page cache (every write(), reads past
# readahead, open, close, stat) is a round trip to a single-threaded
# user-space server, as on a network or parallel file system's client.
# doc/perf/fuse.md says what this models and what it does not.
#
#   fusefs_mount BASE STEM
#                       make a directory of the run's own under BASE,
#                       STEM-fuse.XXXXXX (FUSE_DIR), bindfs its back/ on its
#                       mnt/ (FUSE_MNT) and check that the mount is FUSE.
#                       Returns 0 when mounted, 77 after one line saying why
#                       when FUSE cannot be used here (not root, no
#                       /dev/fuse, no bindfs, the mount refused), 1 on any
#                       other error (bindfs rejecting an option among them).
#   fusefs_unmount      unmount and remove FUSE_DIR; safe to call twice and
#                       when nothing was mounted.  Call it from an EXIT trap.
#   fusefs_text         "bindfs OPTIONS", for reports.
#
# FUSE_OPTS sets bindfs's options; unset, they are FUSE_DEFAULT_OPTS:
#   -o big_writes   write requests of up to 128 KiB (FUSE's max_write here)
#                   instead of one request per 4 KiB page: clients of
#                   network and parallel file systems send large RPCs
#   --xattr-none    no xattr operations, so that the kernel does not ask
#                   the server for security.capability before every write()
#                   (a FUSE artefact that doubles the cost of small writes)
# FUSE_OPTS="" mounts with bindfs's defaults; "-o direct_io" bypasses the
# page cache (no readahead: every read() a request too).
FUSE_DEFAULT_OPTS="-o big_writes --xattr-none"

FUSE_DIR=""
FUSE_MNT=""

fusefs_text() {   # what is mounted, for reports: bindfs and its options
    local opts=${FUSE_OPTS-$FUSE_DEFAULT_OPTS}
    echo "bindfs${opts:+ $opts}"
}

fusefs_skip() {   # REASON
    echo "fuse: skipped: $1"
    return 77
}

fusefs_mount() {   # BASE STEM
    local base=$1 stem=$2 out
    [ "$(id -u)" -eq 0 ] || { fusefs_skip "mounting bindfs needs root"; return; }
    [ -c /dev/fuse ] || { fusefs_skip "no /dev/fuse on this machine"; return; }
    command -v bindfs >/dev/null ||
        { fusefs_skip "bindfs is not installed (Debian: apt-get install bindfs fuse3; ./quickstart bench installs it)"; return; }
    FUSE_DIR=$(mktemp -d "$base/$stem-fuse.XXXXXX") || return 1
    mkdir "$FUSE_DIR/back" "$FUSE_DIR/mnt" || return 1
    # bindfs returns once the mount is there (then it serves in the
    # background); the timeout keeps a broken FUSE from hanging the script.
    # shellcheck disable=SC2086 # the options are a list of words
    if ! out=$(timeout 30 bindfs ${FUSE_OPTS-$FUSE_DEFAULT_OPTS} "$FUSE_DIR/back" "$FUSE_DIR/mnt" 2>&1); then
        fusefs_unmount
        if [[ $out == *"unknown option"* ]]; then   # a mistake, not a missing FUSE
            echo "fuse: $(fusefs_text): $out" >&2
            return 1
        fi
        fusefs_skip "FUSE is not usable here (bindfs: ${out:-timed out or failed})"
        return
    fi
    FUSE_MNT=$FUSE_DIR/mnt
    # The mount must really be FUSE (magic 0x65735546), not the directory
    # beneath: a benchmark of the wrong file system must not pass as this one.
    local fstype magic
    fstype=$(findmnt -n -o FSTYPE --mountpoint "$FUSE_MNT" 2>/dev/null || true)
    magic=$(stat -f -c %t "$FUSE_MNT" 2>/dev/null || true)
    if [[ $fstype != fuse* ]] || [ "$magic" != 65735546 ]; then
        echo "fuse: $FUSE_MNT is not a FUSE mount (type '${fstype:-none}', magic ${magic:-?})" >&2
        fusefs_unmount
        return 1
    fi
}

fusefs_unmount() {
    [ -n "$FUSE_DIR" ] || return 0
    local mnt=$FUSE_DIR/mnt tries=0
    # Ranks killed by Ctrl-C may hold files open for a moment: retry, then
    # detach lazily so that no mount is left behind.
    while mountpoint -q "$mnt" 2>/dev/null; do
        umount "$mnt" 2>/dev/null && break
        if [ $((tries += 1)) -ge 10 ]; then
            umount -l "$mnt" || { echo "fuse: could not unmount $mnt" >&2; return 1; }
            break
        fi
        sleep 0.5
    done
    if mountpoint -q "$mnt" 2>/dev/null; then
        echo "fuse: $mnt is still mounted; $FUSE_DIR left in place" >&2
        return 1
    fi
    rm -rf "$FUSE_DIR"
    FUSE_DIR=""
    FUSE_MNT=""
}
