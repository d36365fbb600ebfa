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
#include "segio.h"
#include "datatype.h"
#include "stats.h"
#include "comm_cache.h"
#include "error.h"

struct tcio_file {
    MPI_Comm    comm;          /* private duplicate, errors returned */
    tci_comm_entry *comm_entry; /* where COMM is cached, NULL if it is the file's own */
    bool        window_reused; /* L2's slots came from COMM_ENTRY's cache */
    bool        shm_refused;   /* auto's shm window could not be created:
                                  level 2 fell back to rma (open.c) */
    int         rank;
    int         nprocs;
    MPI_File    file;
    bool        can_read;
    bool        can_write;
    tci_config  config;
    tci_aggregators aggr;
    tci_segmap  map;
    tci_level1  l1;
    tci_level2  l2;
    tci_segio   io;            /* the file side of drains and spills */
    MPI_Offset  position;      /* the rank's own file pointer */
    MPI_Offset  size_at_open;
    MPI_Offset  written_end;   /* end of this rank's furthest write */
    MPI_Offset  max_end;       /* no byte at or past it is addressable: its
                                  segment must fit a slot's state word */
    int64_t     notices_seen;  /* an aggregator's notice word at its last look */
    tci_stats   stats;
    char       *name;          /* for the statistics and segio's reader */
    int         poll_countdown; /* accesses until an aggregator polls */
    int         failure;       /* first file-system/MPI error: sticky */
    char        failure_reason[TCIO_MAX_ERROR_STRING];   /* why, for every
                                  later call that returns it */
    tci_staged_read *staged;   /* reads into non-contiguous types, in order */
    tci_staged_read **staged_tail;
    struct tcio_file *next_open;
};

/* Remember the first failure of a data movement so that close reports it,
 * and its reason. */
static inline int tci_note_failure(tcio_file *fh, int err)
{
    if (err != TCIO_SUCCESS && fh->failure == TCIO_SUCCESS) {
        fh->failure = err;
        tci_error_keep(err, fh->failure_reason, sizeof fh->failure_reason);
    }
    return err;
}

/* FH's sticky failure as the result of the current call, with its reason. */
static inline int tci_failed_earlier(const tcio_file *fh)
{
    return tci_error_set(fh->failure, "the file failed earlier, and every later call on it "
                         "fails: %s", fh->failure_reason);
}

/* The file side of FH, bound to its file, geometry and statistics. */
static inline tci_segio *tci_file_segio(tcio_file *fh)
{
    return tci_segio_bind(&fh->io, fh->file, fh->name, &fh->map, &fh->stats);
}

#endif
