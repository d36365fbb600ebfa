/* progress.h - giving the library a moment: MPI progress for other ranks'
 * one-sided operations and an aggregator's early drains. */
#ifndef TCIO_PROGRESS_H
#define TCIO_PROGRESS_H

#include "file.h"

/* Fast-path accesses between two polls of an aggregator.  With MPI
 * libraries whose one-sided operations need the target's progress engine
 * (MPICH ch4 over UCX), a busy aggregator otherwise answers other ranks'
 * moves only at its own next move (doc/design.md has the measurements).
 * Fixed: an interval that grew with the cost of a turn made other ranks'
 * operations wait 2-4 times longer under Open MPI's osc/ucx and osc/pt2pt
 * (doc/design.md, "Early drain", step 2). */
#define TCI_POLL_INTERVAL 256

/* Polls between an aggregator's looks at its notice word (early drains)
 * where the look is an MPI operation (rma); moves, tcio_progress and shm's
 * polls look every time (doc/design.md, "Early drain", step 2). */
#define TCI_NOTICE_POLLS 8

/* tcio_progress: drive MPI progress and, on an aggregator, its early
 * drains.  Local. */
void tci_progress(tcio_file *fh);

/* The poll of tci_progress_tick, every TCI_POLL_INTERVAL accesses: an
 * aggregator's tci_progress, which turns MPI's progress engine only while
 * some level 2 of this process serves others (progress.c).  A failure it
 * meets sticks to the handle; the reason it recorded is dropped, as at the
 * end of any successful call (the access that polled succeeds). */
void tci_progress_poll(tcio_file *fh);

/* Count one fast-path access; an aggregator polls every
 * TCI_POLL_INTERVAL of them. */
static inline void tci_progress_tick(tcio_file *fh)
{
    if (--fh->poll_countdown < 0)
        tci_progress_poll(fh);
}

#endif
