/* prefetch.h - loading declared read ranges into level 2 ahead of the
 * reads: a rank's own hint (tcio_prefetch) and the collective read
 * session (tcio_read_session). */
#ifndef TCIO_PREFETCH_H
#define TCIO_PREFETCH_H

#include "file.h"

/* Local: the caller loads the segments of [OFFSET, OFFSET+LENGTH) into
 * their slots, at most one per slot.  Arguments are checked by the
 * caller. */
int tci_prefetch_range(tcio_file *fh, MPI_Offset offset, MPI_Offset length);

/* Collective: every rank's range is gathered and each aggregator loads the
 * segments of the union that it owns, at most one per slot.  Returns this
 * rank's own result (the caller agrees on it). */
int tci_prefetch_session(tcio_file *fh, MPI_Offset offset, MPI_Offset length);

#endif
