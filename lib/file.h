/* file.h - the open-file handle shared by the modules of the library. */
#ifndef TCIO_FILE_H
#define TCIO_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <mpi.h>
#include "tcio.h"
#include "configuration.h"
#include "segmap.h"
#include "aggregators.h"
#include "striping.h"
#include "level1.h"
#include "transport.h"
#include "level2.h"
#include "combiner.h"
#include "forward.h"
#include "segio.h"
#include "datatype.h"
#include "stats.h"
#include "comm_cache.h"
#include "error.h"

struct tci_drain_job;

/* A handle between tcio_close_begin and tcio_close_end (close.c,
 * background.c): what the begin found, reported by the end. */
typedef struct tci_closing {
    bool  failed_before;           /* a sticky failure before the begin:
                                      what the close returns (tcio.h) */
    int   rc;                      /* this rank's outcome of the begin */
    int   reason_code;             /* and why, for tcio_last_error */
    char  reason[TCIO_MAX_ERROR_STRING];
    struct tci_drain_job *job;     /* the slots handed to the drain
                                      thread, NULL if none */
    struct tcio_file *next;        /* the closing handles, oldest first */
} tci_closing;

struct tcio_file {
    MPI_Comm    comm;          /* private duplicate, errors returned */
    tci_comm_entry *comm_entry; /* where COMM is cached, NULL if it is the file's own */
    bool        window_reused; /* L2's slots came from COMM_ENTRY's cache */
    int64_t     level2_mapped; /* the node's level-2 memory mapped into this
                                  process (open.c; kept with the window) */
    bool        retire_comm;   /* COMM may carry messages no later file may
                                  receive: retired, not released */
    bool        shm_refused;   /* auto's shm segment could not be made:
                                  level 2 fell back to rma (open.c) */
    int         rank;
    int         nprocs;
    MPI_File    file;          /* this rank's own handle (MPI_COMM_SELF) */
    bool        delete_on_close; /* MPI_MODE_DELETE_ON_CLOSE: rank 0 deletes the
                                  file at close (close.c) */
    bool        can_read;
    bool        can_write;
    bool        read_session; /* a read session was declared (collective: on
                                  every rank): a read-only file's fetches on
                                  several nodes look in the level 2 its
                                  aggregators loaded (level2.c) */
    tci_config  config;
    tci_aggregators aggr;
    tci_segmap  map;
    tci_level1  l1;
    tci_level2  l2;
    tci_level2  node;          /* the node's combining tier in front of L2
                                  (combiner.c), on several nodes with the
                                  mixed transport; node.t.ops NULL otherwise */
    tci_combiner comb;         /* its node communicator and geometry */
    tci_forwards fwd;          /* how its segments reach L2 (forward.c) */
    tci_segio   io;            /* the file side of drains and spills */
    MPI_Offset  position;      /* the rank's own file pointer */
    MPI_Offset  size_at_open;
    MPI_Offset  written_end;   /* end of this rank's furthest write moved
                                  out of level 1 (level2.c) */
    MPI_Offset  max_end;       /* no byte at or past it is addressable: its
                                  segment must fit a slot's state word */
    MPI_Offset  agreed_size;   /* the end of the file as every rank agreed
                                  on it at the last tcio_flush, tcio_sync or
                                  tcio_set_size (size.c) */
    bool        size_agreed;   /* there was one: else SIZE_AT_OPEN serves */
    int64_t     notices_seen;  /* an aggregator's notice word at its last look */
    tci_stats   stats;
    char       *name;          /* for the statistics and segio's reader */
    int         poll_countdown; /* accesses until an aggregator polls */
    unsigned    polls;          /* give_a_moment's calls (progress.c): polls
                                   serve forwards one time in
                                   TCI_FORWARD_POLLS and, under rma, look at
                                   the notices one time in TCI_NOTICE_POLLS;
                                   tcio_progress does both every time */
    int         failure;       /* first file-system/MPI error: sticky */
    char        failure_reason[TCIO_MAX_ERROR_STRING];   /* why, for every
                                  later call that returns it */
    tci_staged_read *staged;   /* reads into non-contiguous types, in order */
    tci_staged_read **staged_tail;
    struct tcio_file *next_open;
    tci_closing closing;
};

/* The handle most recently found open and without a failure (handle.c):
 * the per-access fast path checks a handle with one comparison. */
extern const tcio_file *tci_last_found_open;

/* Remember the first failure of a data movement so that close reports it,
 * and its reason; from now on every call on FH takes the full path, which
 * returns it. */
static inline int tci_note_failure(tcio_file *fh, int err)
{
    if (err != TCIO_SUCCESS && fh->failure == TCIO_SUCCESS) {
        fh->failure = err;
        tci_error_keep(err, fh->failure_reason, sizeof fh->failure_reason);
        if (tci_last_found_open == fh)
            tci_last_found_open = NULL;
    }
    return err;
}

/* FH's sticky failure as the result of the current call, with its reason. */
static inline int tci_failed_earlier(const tcio_file *fh)
{
    return tci_error_set(fh->failure, "the file failed earlier, and every later call on it "
                         "fails: %s", fh->failure_reason);
}

/* This rank's result of a call on FH whose own steps gave RC: a failure
 * that stuck to FH before the call began (FAILED_BEFORE) is what every
 * later call returns, with its reason (tcio.h, Errors), whatever the call
 * met since; else the call's first failure, or one that a step noted
 * without returning it. */
static inline int tci_result_after(const tcio_file *fh, bool failed_before, int rc)
{
    if (rc != TCIO_SUCCESS && !failed_before)
        return rc;
    return fh->failure != TCIO_SUCCESS ? tci_failed_earlier(fh) : rc;
}

/* The file side of FH, bound to its file, geometry and statistics. */
static inline tci_segio *tci_file_segio(tcio_file *fh)
{
    return tci_segio_bind(&fh->io, fh->file, fh->name, &fh->map, &fh->stats);
}

#endif
