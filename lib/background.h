/* background.h - the close in the background: what tcio_close_begin hands
 * to the drain thread (drainer.c) and tcio_close_end collects. */
#ifndef TCIO_BACKGROUND_H
#define TCIO_BACKGROUND_H

#include <stdbool.h>
#include "file.h"

/* Local, in a close after the barrier that ends every other rank's access
 * to this rank's slots, with FH's file still open: this rank's dirty slots
 * to the file.  With BACKGROUND, as many as this rank's share of
 * tcio_background_memory allows are handed to the drain thread
 * (FH->closing.job) when the file can be reached by name with POSIX calls
 * (else none); the rest are written now with MPI-IO, as tcio_close does.
 * Returns the failure of what was written now. */
int tci_background_drain(tcio_file *fh, bool background);

/* Local: wait for FH's handed-over slots to be written (if any), count
 * them into FH's statistics and return the drain's failure (its reason
 * set for tcio_last_error). */
int tci_background_finish(tcio_file *fh);

/* Local, at tcio_open of NAME: wait until no slot of a file of that name
 * (or the file NAME gives) is left for the drain thread, so that the new
 * handle sees every byte. */
void tci_background_wait_for_file(const char *name);

/* The tcio_background_memory in effect for FH (bytes per node): the
 * setting, or an eighth of the node's physical memory. */
int64_t tci_background_memory(const tcio_file *fh);

#endif
