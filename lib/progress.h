/* progress.h - giving the library a moment: MPI progress for other ranks'
 * one-sided operations and an aggregator's early drains. */
#ifndef TCIO_PROGRESS_H
#define TCIO_PROGRESS_H

#include "file.h"

/* Fast-path accesses between two polls of an aggregator, at least.  With
 * MPI libraries whose one-sided operations need the target's progress
 * engine (MPICH ch4 over UCX), a busy aggregator otherwise answers other
 * ranks' moves only at its own next move (doc/design.md has the
 * measurements).  Where a turn of MPI's engine runs every component's
 * progress (Open MPI: a mean of about 20 us a turn with 4 ranks on 2
 * cores, where it also yields the processor) and takes more than a small
 * share of the time between polls, the interval doubles, up to
 * TCI_POLL_INTERVAL_MAX, and halves again when it costs little
 * (progress.c). */
#define TCI_POLL_INTERVAL     256
#define TCI_POLL_INTERVAL_MAX 8192

/* Drive MPI progress and, on an aggregator, its early drains.  Local. */
void tci_progress(tcio_file *fh);

/* The poll of tci_progress_tick, every FH->poll_interval accesses: an
 * aggregator's tci_progress.  A failure it meets sticks to the handle;
 * the reason it recorded is dropped, as at the end of any successful call
 * (the access that polled succeeds). */
void tci_progress_poll(tcio_file *fh);

/* Count one fast-path access; an aggregator polls every
 * FH->poll_interval of them. */
static inline void tci_progress_tick(tcio_file *fh)
{
    if (--fh->poll_countdown < 0)
        tci_progress_poll(fh);
}

#endif
