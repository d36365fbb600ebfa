/* comm_cache.h - the private communicator of the files opened on one user
 * communicator, kept between opens. */
#ifndef TCIO_COMM_CACHE_H
#define TCIO_COMM_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <mpi.h>
#include "transport.h"
#include "forward.h"

typedef struct tci_comm_entry tci_comm_entry;

/* What kept level-2 slots must match to be reused: the transport, the
 * agreed geometry and aggregator list, and this rank's part in it. */
typedef struct tci_window_key {
    const tci_transport_ops *transport;
    int64_t nslots, segment_size, aggregators_digest;
    int64_t node_segments;   /* a kept tier's slots per rank; 0 without a tier */
    int     nnodes;    /* the node split, which a kept tier was made on */
    bool    owner;
    int64_t mapped_bytes;  /* not compared: the node's level-2 memory that
                              the window maps into each process */
} tci_window_key;

/* A private duplicate of COMM (errors returned) for one open file, in
 * *DUP: the one cached on COMM when no open file uses it, else a new
 * duplicate (MPI_Comm_idup, waited for yielding), which is then cached
 * when COMM has none.  Collective over
 * COMM when it duplicates; every rank decides alike, because the cache
 * changes only in tcio_open and tcio_close, which all ranks call in the same
 * order.  *ENTRY gets the cache entry that DUP came from or went to (NULL
 * if DUP is the file's own); *CACHE_FAILED is set when DUP is new and could
 * not be cached, or the duplicate failed (the caller agrees on it, see
 * tci_comm_uncache).  Returns an MPI error code. */
int tci_comm_acquire(MPI_Comm comm, MPI_Comm *dup, tci_comm_entry **entry, int *cache_failed);

/* Takes ENTRY, just made by tci_comm_acquire, out of COMM's cache: when
 * caching failed on some rank (it needs memory), no rank may count on the
 * cache at the next open; and when the open that made it failed (it would
 * hold a context id where no file was opened).  Its file keeps the
 * duplicate to itself, and its release frees it.  A second call, or one
 * for an entry no longer cached, does nothing. */
void tci_comm_uncache(MPI_Comm comm, tci_comm_entry *entry);

/* The user communicators on which a process keeps a duplicate (and the
 * window, tier and node communicator beside it) after their files close:
 * each holds two to five of the MPI library's context ids (MPICH has about
 * 2,000), and a window of /dev/shm memory.  A code with a communicator per
 * level or group of ranks would otherwise run MPICH out of ids at a few
 * hundred live communicators, each of which once opened a file. */
enum { TCI_MAX_KEPT_COMMS = 16 };

/* Local: whether COMM has an entry (a duplicate cached on it). */
bool tci_comm_has_entry(MPI_Comm comm);

/* Local: whether this process keeps entries on more than
 * TCI_MAX_KEPT_COMMS communicators, ENTRY's among them (false for NULL or
 * an entry already out of the cache).  The close agrees on it over the
 * file's ranks and then lets ENTRY go (tci_comm_uncache) with the window:
 * the next open on that communicator duplicates it again.  Entries kept
 * on other communicators cannot be freed from here (their frees are
 * collective over ranks that are not in this call). */
bool tci_comm_over_limit(const tci_comm_entry *entry);
/* ENTRY (in use by a file that is closing) out of its communicator's
 * cache: the file's close then frees its duplicate.  Every rank calls it
 * alike, on the agreed tci_comm_over_limit. */
void tci_comm_let_go(tci_comm_entry *entry);

/* Instead of tci_comm_release, for a file whose failed close may have
 * left messages on their way on DUP, which no later file may receive:
 * ENTRY (NULL: DUP is the file's own) leaves the cache for good, so the
 * next open makes a new duplicate, and DUP is kept until MPI_Finalize, so
 * that MPI cannot give its context to a new communicator on which the
 * messages would match (MPICH gives a freed communicator's context to the
 * next duplicate at once; Open MPI 4.1's ob1 did not match them there, and
 * other MPIs may).  Every rank calls it alike, on an agreed outcome. */
void tci_comm_retire(MPI_Comm *dup, tci_comm_entry *entry);

/* Gives DUP back: to its cache entry ENTRY, where it waits for the next
 * open (or is freed if the user freed COMM meanwhile), or frees it when
 * ENTRY is NULL. */
void tci_comm_release(MPI_Comm *dup, tci_comm_entry *entry);

/* Local: the level-2 transport kept on ENTRY (NULL: none) by the previous
 * file, if it matches KEY: taken out of the cache into *KEPT (true), else
 * false. */
bool tci_comm_take_window(tci_comm_entry *entry, const tci_window_key *key,
                          tci_transport *kept);

/* Free the transport kept on ENTRY, if any: collective over its ranks,
 * who all hold the same one (the cache changes alike on every rank). */
void tci_comm_drop_window(tci_comm_entry *entry);

/* Whether ENTRY can keep a transport now (not orphaned, holding none). */
bool tci_comm_can_keep_window(const tci_comm_entry *entry);
/* The bytes the window ENTRY keeps now maps into this process (its key's
 * mapped_bytes; 0 for none or ENTRY NULL). */
int64_t tci_comm_kept_window_bytes(const tci_comm_entry *entry);

/* Keep KEPT (emptied by tci_level2_keep) on ENTRY for the next file; only
 * after tci_comm_can_keep_window said yes. */
void tci_comm_keep_window(tci_comm_entry *entry, const tci_window_key *key,
                          const tci_transport *kept);

/* A node's combining tier (several nodes, lib/combiner.c) kept beside the
 * window: its shm transport, emptied by tci_level2_keep, the
 * communicator of the node's ranks it lives on, and its forwards' window
 * and staging (lib/forward.c, settled by the close).
 * tci_comm_holds_tier: whether ENTRY keeps one.  tci_comm_take_tier: take
 * it out into *TIER, *NODE_COMM and *FORWARDS (false: none).
 * tci_comm_drop_tier: free it (unmapped, the window and communicator
 * freed).  tci_comm_keep_tier: keep TIER, NODE_COMM and FORWARDS beside
 * the window ENTRY keeps now; false (nothing kept, the caller still owns
 * them) when it keeps no window or a tier already.  The window's drop
 * frees the tier too.  Local, but for the drop's MPI_Win_free of the
 * forwards' window (collective over the file's communicator) and
 * MPI_Comm_free of the node communicator (over the node's ranks): every
 * rank drops alike, the cache being the same everywhere. */
bool tci_comm_holds_tier(const tci_comm_entry *entry);
bool tci_comm_take_tier(tci_comm_entry *entry, tci_transport *tier, MPI_Comm *node_comm,
                        tci_forward_kept *forwards);
void tci_comm_drop_tier(tci_comm_entry *entry);
bool tci_comm_keep_tier(tci_comm_entry *entry, const tci_transport *tier, MPI_Comm node_comm,
                        const tci_forward_kept *forwards);

#endif
