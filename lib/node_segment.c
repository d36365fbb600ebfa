/* node_segment.c - a POSIX shared-memory segment over a node's ranks
 * (node_segment.h). */
#define _POSIX_C_SOURCE 200809L   /* shm_open, ftruncate, posix_fallocate */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "node_segment.h"
#include "collective.h"
#include "error.h"

/* The name of the segment that rank 0 of the communicator, process PID,
 * creates as its SEQ-th. */
static void segment_name(char *name, size_t size, int64_t pid, int64_t seq)
{
    snprintf(name, size, "/tcio-%lld-%lld", (long long)pid, (long long)seq);
}

/* Give the segment's pages to it now: ftruncate alone makes a sparse
 * object, and /dev/shm filling up before a first store (other jobs on the
 * node) would kill the process with SIGBUS there instead of refusing the
 * open here.  Returns 0 or an errno; a file system that cannot reserve
 * (EOPNOTSUPP, EINVAL) is left sparse. */
static int reserve_pages(int fd, size_t bytes)
{
    int err = posix_fallocate(fd, 0, (off_t)bytes);
    return err == EOPNOTSUPP || err == EINVAL ? 0 : err;
}

/* Map BYTES of the segment open on FD into *SEGMENT.  Returns 0 or the
 * errno, naming mmap in *WHAT. */
static int map_segment(char **segment, int fd, size_t bytes, const char **what)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        *what = "mmap";
        return errno;
    }
    *segment = p;
    return 0;
}

/* Rank 0: create the segment NAME of BYTES (zero) and map it.  Returns 0
 * or the errno of the call that failed, naming it in *WHAT. */
static int create_segment(char **segment, const char *name, size_t bytes, const char **what)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        *what = "shm_open";
        return errno;
    }
    int err = 0;
    if (ftruncate(fd, (off_t)bytes) != 0) {
        err = errno;
        *what = "ftruncate";
    } else if ((err = reserve_pages(fd, bytes)) != 0) {
        *what = "posix_fallocate";
    } else {
        err = map_segment(segment, fd, bytes, what);
    }
    close(fd);
    if (err)
        shm_unlink(name);        /* no name is left behind after a failure */
    return err;
}

/* The other ranks: map the segment NAME that rank 0 created. */
static int attach_segment(char **segment, const char *name, size_t bytes, const char **what)
{
    int fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0) {
        *what = "shm_open";
        return errno;
    }
    int err = map_segment(segment, fd, bytes, what);
    close(fd);
    return err;
}

int tci_node_segment_open(MPI_Comm comm, int self, size_t bytes, const char *purpose,
                          char **segment)
{
    static int64_t created;      /* segments this process created */
    char name[64];
    const char *what = "";
    int64_t facts[3] = { 0, 0, 0 }, all[3];   /* rank 0: pid, seq, its errno */
    int err = 0;
    *segment = NULL;
    if (self == 0) {
        int64_t seq = ++created;
        segment_name(name, sizeof name, (int64_t)getpid(), seq);
        err = create_segment(segment, name, bytes, &what);
        facts[0] = (int64_t)getpid();
        facts[1] = seq;
        facts[2] = err;
    }
    if (tci_allreduce(facts, all, 3, MPI_INT64_T, MPI_MAX, comm) != MPI_SUCCESS)
        err = err ? err : EIO, what = what[0] ? what : "MPI_Allreduce";
    if (!err && all[2])
        err = (int)all[2], what = "rank 0's segment";
    if (!err && self != 0) {
        segment_name(name, sizeof name, all[0], all[1]);
        err = attach_segment(segment, name, bytes, &what);
    }
    int64_t failed = err != 0, any = 1;
    if (tci_allreduce(&failed, &any, 1, MPI_INT64_T, MPI_MAX, comm) != MPI_SUCCESS)
        any = 1;
    if (self == 0 && *segment)
        shm_unlink(name);
    if (err)
        return tci_error_set(TCIO_ERR_NO_MEMORY, "%s (%zu bytes in /dev/shm): %s failed: %s",
                             purpose, bytes, what, strerror(err));
    if (any)
        return tci_error_set(TCIO_ERR_NO_MEMORY, "%s: another rank could not map it", purpose);
    return TCIO_SUCCESS;
}

void tci_node_segment_close(char *segment, size_t bytes)
{
    if (segment)
        munmap(segment, bytes);
}
