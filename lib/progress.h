/* progress.h - giving the library a moment: MPI progress for other ranks'
 * one-sided operations and an aggregator's early drains. */
#ifndef TCIO_PROGRESS_H
#define TCIO_PROGRESS_H

#include "file.h"

/* Fast-path accesses between two polls of an aggregator.  With MPI
 * libraries whose one-sided operations need the target's progress engine
 * (MPICH ch4 over UCX), a busy aggregator otherwise answers other ranks'
 * moves only at its own next move (doc/design.md has the measurements). */
#define TCI_POLL_INTERVAL 256

/* Drive MPI progress and, on an aggregator, its early drains.  Local. */
void tci_progress(tcio_file *fh);

/* Count one fast-path access; an aggregator polls every
 * TCI_POLL_INTERVAL of them. */
static inline void tci_progress_tick(tcio_file *fh)
{
    if (--fh->poll_countdown < 0) {
        fh->poll_countdown = TCI_POLL_INTERVAL;
        if (fh->l2.t.local_slots > 0)
            tci_progress(fh);
    }
}

#endif
