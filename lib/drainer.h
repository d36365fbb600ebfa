/* drainer.h - the background drain: a thread of this process that writes
 * level-2 segments to a file after tcio_close_begin, while the application
 * computes.
 *
 * The thread makes no MPI call and allocates nothing: it writes through a
 * POSIX descriptor of its own (opened here by the main thread, by name,
 * after checking that the name still gives the file the library opened)
 * with pwrite and, for a sieve, pread, from slot memory that the main
 * thread handed over (every other rank's accesses to it completed before
 * the close barrier, and the main thread touches it no more until the
 * job is finished).  It sleeps on a condition variable when there is
 * nothing to write.  doc/design.md, "Background close", has the protocol.
 * Nothing here knows a tcio_file: background.c is the glue. */
#ifndef TCIO_DRAINER_H
#define TCIO_DRAINER_H

#include <stdbool.h>
#include <stdint.h>

/* One segment to write: its number, its data (a segment) and its
 * written-byte bitmap, in memory that stays untouched until the job ends. */
typedef struct tci_drain_slot {
    int64_t              segment;
    const char          *data;
    const unsigned char *bitmap;
} tci_drain_slot;

/* What a job did, for tcio_close_end. */
typedef struct tci_drain_result {
    int     rc;              /* TCIO_SUCCESS or the first failure */
    char    message[320];    /* why it failed, for tcio_last_error */
    int64_t segments;        /* segments written (tried) */
    int64_t sieved;          /* of them sieved */
    double  seconds;         /* the thread's time on the job */
} tci_drain_result;

/* Which file a job writes: its name and what stat(2) said of it when the
 * library opened it. */
typedef struct tci_file_identity {
    const char        *name;
    unsigned long long device, inode;
} tci_file_identity;

typedef struct tci_drain_job tci_drain_job;

/* Main thread.  Open the file ID names for a job: read-write where that is
 * allowed (a segment written in many small pieces can then be sieved),
 * else write-only.  Returns the descriptor, or -1 (with a reason in WHY,
 * WHY_SIZE bytes) when the file cannot be opened or the name no longer
 * gives the file identified (a rename, a chdir after a relative name):
 * the caller then drains with MPI-IO. */
int tci_drainer_open(const tci_file_identity *id, bool *readable, char *why, int why_size);

/* Main thread.  Hand NSLOTS slots (copied) to the thread, written through
 * FD (which the job closes) as segments of SEGMENT_SIZE bytes; READABLE
 * says FD can be read (sieving).  Starts the thread at the first job.
 * *JOB names the job for tci_drainer_finish.  Returns TCIO_SUCCESS, or
 * TCIO_ERR_NO_MEMORY or TCIO_ERR_IO (no thread) with nothing handed over
 * and FD still open: the caller drains itself. */
int tci_drainer_submit(const tci_file_identity *id, int fd, bool readable, int segment_size,
                       const tci_drain_slot *slots, int nslots, tci_drain_job **job);

/* Main thread.  Sleep until JOB is done, store its result and free it. */
void tci_drainer_finish(tci_drain_job *job, tci_drain_result *result);

/* Main thread.  Bytes of segments handed over and not yet written. */
int64_t tci_drainer_pending_bytes(void);

/* Main thread.  Sleep until no job of the file NAME is left to write: jobs
 * whose file has this name or, where NAME (or NAME without its MPI-IO
 * prefix, tci_file_system_name) names a file, its device and inode.
 * Returns how many jobs it waited for. */
int tci_drainer_wait_for_file(const char *name);

/* Main thread.  Sleep until every job is written, then end the thread
 * (at MPI_Finalize; a later job starts a new one). */
void tci_drainer_stop(void);

#endif
