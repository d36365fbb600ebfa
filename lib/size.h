/* size.h - the end of the file: as a rank knows it without communication
 * (tcio_get_size, tcio_seek's MPI_SEEK_END), as the ranks agree on it
 * (tcio_flush, tcio_sync), and as tcio_set_size sets it. */
#ifndef TCIO_SIZE_H
#define TCIO_SIZE_H

#include <mpi.h>
#include "file.h"

/* Local.  The end of the file as this rank knows it: the size the ranks
 * last agreed on (at open: the file's size then), or the end of this
 * rank's own writes since, moved or still in level 1, if that is
 * further. */
MPI_Offset tci_size_rank_end(const tcio_file *fh);

/* Collective: the agreement on the outcome of a call whose local part
 * returned LOCAL (tci_collective_result), in which the ranks also agree
 * on the end of the file: the largest of their tci_size_rank_end, which
 * every rank's tci_size_rank_end returns from then on.  Call it once
 * every rank's writes are in the file's level 2 (tci_access_settle, then
 * tci_combiner_settle). */
int tci_size_agree(tcio_file *fh, int local);

#endif
