/* access.h - what the collective calls need of the per-access path. */
#ifndef TCIO_ACCESS_H
#define TCIO_ACCESS_H

#include "file.h"

/* Complete this rank's pending reads, move its buffered writes to level 2
 * (on several nodes: its node's combining tier) and complete every
 * one-sided operation it issued at its target: the local half of
 * tcio_flush and tcio_close, before tci_combiner_settle.  Local. */
int tci_access_settle(tcio_file *fh);

#endif
