/* forward.h - a node's forwards that wait for no other rank: how the
 * combined bytes of a segment in a node's combining tier (combiner.c)
 * reach the segment's slot in the file's level 2 on its aggregator.
 *
 * A forward copies the node's bytes of the segment (the span it wrote,
 * with its bitmap) into the node's staging (staging.h), sends the copy to
 * the aggregator with MPI_Isend and frees the tier slot: it waits for
 * nobody.  The aggregator receives and merges what arrived whenever it
 * enters the library (tci_forward_serve: its moves, one poll in
 * TCI_FORWARD_POLLS, every tcio_progress, flush and close), in the order
 * the node numbered them, and acknowledges each message; the forwarder's
 * rank frees the staged copy once its send completed and the
 * acknowledgement came.  Until then the node's fetches
 * of the segment lay the staged copies over what they fetch.  When the
 * staging is full, or the aggregator is the forwarder itself, the forward
 * merges under the aggregator's forward lock instead (the locked forward,
 * which needs only the aggregator's MPI progress), after merging the
 * node's earlier staged forwards to it that it has not merged yet: the
 * order holds whichever way a forward goes.  doc/design.md, "Forwards that
 * wait for no other rank", has the protocol and why it cannot deadlock.
 *
 * With tcio_forward_staging 0 every forward is a plain merge under the
 * slot's lock (combiner.c's tci_level2_merge), as before staging. */
#ifndef TCIO_FORWARD_H
#define TCIO_FORWARD_H

#include <stdbool.h>
#include <stdint.h>
#include <mpi.h>
#include "level1.h"
#include "staging.h"

struct tcio_file;

#define TCI_FORWARD_POLLS 8

/* What a node's tier keeps for the next file beside its slots
 * (comm_cache.c): the aggregators' forward words and the node's staging. */
typedef struct tci_forward_kept {
    MPI_Win     win;          /* MPI_WIN_NULL: nothing kept */
    int64_t    *words;
    tci_staging staging;
    int         per_rank;     /* the tcio_forward_staging they were made for */
} tci_forward_kept;

typedef struct tci_held_message tci_held_message;

typedef struct tci_forwards {
    bool        on;           /* staged forwards (several nodes, staging > 0) */
    MPI_Win     win;          /* over the file's communicator: on every
                                 aggregator, the forward lock and per node
                                 the last forward it merged (MPI_WIN_NULL:
                                 none) */
    int64_t    *words;
    int         node, nnodes;
    int         per_rank;     /* tcio_forward_staging */
    int         made_per_rank; /* what WIN and STAGING were made for (0: none) */
    tci_staging staging;
    MPI_Request *sends;       /* per staging entry, this rank's send of it */
    bool       *acked;        /* per staging entry, its acknowledgement came */
    int        *found;        /* scratch: entries of one segment */
    int64_t    *found_seq;    /* and their numbers */
    char       *spare;        /* a message's room when memory runs out */
    char       *scatter;      /* a segment: a message's ranges laid out at their
                                 places, for its merge (view_message) */
    int         pending;      /* this rank's staged copies not freed yet */
    int64_t    *sent_to;      /* per rank: messages sent since the last settle */
    int64_t     received;     /* messages received since the last settle */
    tci_held_message *held;   /* received, waiting for an earlier one */
    tci_held_message *next_held; /* the next message's record, made before
                                 the message is taken from MPI */
    char       *free_buffers[8];   /* receive buffers for the next messages */
    int         nfree;
    tci_held_message *acks;   /* merged, their acknowledgements on their way */
    tci_level1  view;         /* this rank's forward's bytes as a merge sees
                                 them (marks only: the data are a tier slot's) */
    tci_level1  message_view; /* a staged or received forward's */
} tci_forwards;

/* Local, inside the tier's agreed preparation (combiner.c): the node and
 * the views every forward uses. */
int  tci_forward_prepare(struct tcio_file *fh);

/* Collective over FH->comm, on a file whose node tier was just made
 * (combiner.c; FH->comb.comm the node's ranks), with staging
 * (tcio_forward_staging > 0; else nothing, no collective step): the
 * forward words' window and the node's staging.  Agreed; on failure
 * tci_forward_free still runs. */
int  tci_forward_open(struct tcio_file *fh);

/* Local, before the open's agreement (tci_combiner_adopt_kept): take
 * KEPT over for this file (always: the handle frees it or keeps it
 * again).  Returns whether it serves this file (made for the same staging
 * setting, and the bookkeeping allocated). */
bool tci_forward_adopt(struct tcio_file *fh, tci_forward_kept *kept);

/* Local, after a close that settled every forward: hand the window and
 * staging to *KEPT (nothing left to free here). */
void tci_forward_keep(struct tcio_file *fh, tci_forward_kept *kept);

/* Collective over the file's communicator (MPI_Win_free) and the node's
 * (the staging unmapped): harmless on a file without staging. */
void tci_forward_free(struct tcio_file *fh);
void tci_forward_kept_free(tci_forward_kept *kept);

/* The forward of SEGMENT's node bytes (DATA where BITMAP's bits are set),
 * by a rank holding its tier slot: staged and sent, or locked.  A forward
 * that carried bytes counts in TCIO_STATS forwards and forward_bytes once
 * it succeeded.  Local. */
int  tci_forward_send(struct tcio_file *fh, int64_t segment, const char *data,
                      const unsigned char *bitmap);

/* Whenever a rank enters the library: merge the forwards that reached
 * this aggregator, in order, acknowledging each; take the
 * acknowledgements of this rank's own and free their staged copies.
 * Nothing for a read-only file (no rank forwards into it).  Local; a
 * failure sticks to the handle. */
void tci_forward_serve(struct tcio_file *fh);

/* Collective over FH->comm, after every rank forwarded its tier slots
 * (tci_combiner_settle): every rank learns how many messages reach it
 * (one reduction) and serves until it merged them all and its own were
 * acknowledged; the staging is empty afterwards. */
int  tci_forward_settle(struct tcio_file *fh);

/* Whether the node's staging holds forwards of SEGMENT (a fetch must then
 * take the slot's lock and lay them over what it fetches). */
bool tci_forward_staged(struct tcio_file *fh, int64_t segment);

/* Under the lock of SEGMENT's slot in the file's level 2, after a fetch
 * filled BUF: lay over it the node's staged forwards of SEGMENT that the
 * aggregator has not merged yet, in order. */
int  tci_forward_overlay(struct tcio_file *fh, int64_t segment, char *buf);

#endif
