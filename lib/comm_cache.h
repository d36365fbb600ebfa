/* comm_cache.h - the private communicator of the files opened on one user
 * communicator, kept between opens. */
#ifndef TCIO_COMM_CACHE_H
#define TCIO_COMM_CACHE_H

#include <mpi.h>

typedef struct tci_comm_entry tci_comm_entry;

/* A private duplicate of COMM (errors returned) for one open file, in
 * *DUP: the one cached on COMM when no open file uses it, else a new
 * MPI_Comm_dup, which is then cached when COMM has none.  Collective over
 * COMM when it duplicates; every rank decides alike, because the cache
 * changes only in tcio_open and tcio_close, which all ranks call in the same
 * order.  *ENTRY gets the cache entry that DUP came from or went to (NULL
 * if DUP is the file's own); *CACHE_FAILED is set when DUP is new and could
 * not be cached (the caller agrees on it, see tci_comm_uncache).  Returns
 * an MPI error code. */
int tci_comm_acquire(MPI_Comm comm, MPI_Comm *dup, tci_comm_entry **entry, int *cache_failed);

/* Takes ENTRY, just made by tci_comm_acquire, out of COMM's cache: when
 * caching failed on some rank (it needs memory), no rank may count on the
 * cache at the next open.  Its file keeps the duplicate to itself. */
void tci_comm_uncache(MPI_Comm comm, tci_comm_entry *entry);

/* Gives DUP back: to its cache entry ENTRY, where it waits for the next
 * open (or is freed if the user freed COMM meanwhile), or frees it when
 * ENTRY is NULL. */
void tci_comm_release(MPI_Comm *dup, tci_comm_entry *entry);

#endif
