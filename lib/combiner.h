/* combiner.h - a node's combining tier: on several nodes (the mixed
 * transport), the ranks of a node move their level-1 buffers into slots of
 * node-shared memory (the shm protocol, CPU atomics), where the pieces of
 * one segment from all the node's ranks come together; a combined segment
 * then crosses to its slot in the file's level 2 (the rma protocol, MPI
 * one-sided operations) as one move per node, and reads fetch a segment
 * from there once per node.  doc/design.md, "Several nodes: the combining
 * tier", has the protocol. */
#ifndef TCIO_COMBINER_H
#define TCIO_COMBINER_H

#include <stdbool.h>
#include <mpi.h>
#include "level1.h"
#include "segmap.h"

struct tcio_file;

typedef struct tci_combiner {
    MPI_Comm   comm;        /* this node's ranks of the file (MPI_COMM_NULL:
                               no combining tier) */
    int        node_rank, node_size;
    tci_segmap map;         /* every segment, over the node's ranks */
    int       *ranks;       /* 0 .. node_size-1: MAP's aggregators */
} tci_combiner;

/* Local, before the open's agreement, on a file whose plan has a tier and
 * whose window this rank reuses: take the tier that the communicator keeps
 * beside the window (the previous file's, emptied) over for this file.
 * Returns whether this rank now holds it, set up; the open agrees on
 * every rank's answer, and tci_combiner_open learns the outcome. */
bool tci_combiner_adopt_kept(struct tcio_file *fh);

/* Collective over FH->comm, after the file's level 2 is open, on a file
 * whose plan has a tier (tci_transport_plan_for): the node communicator,
 * the tier's shm slots (FH->node) and the forward's buffers.  With REUSE
 * (agreed: every rank adopted a kept tier, tci_combiner_adopt_kept, and
 * reuses the window) nothing is left to do, and no collective step is
 * taken; otherwise a tier some ranks adopted or the cache keeps is freed
 * and a new one made.  Agreed: every rank returns the same result; on
 * failure tci_combiner_free still runs at the handle's destruction. */
int  tci_combiner_open(struct tcio_file *fh, bool reuse);

/* Local, where the window goes back to the communicator's cache
 * (handle.c: after a close that succeeded everywhere, an open that
 * failed after taking a kept window over, before any access, or an open
 * whose window some rank could not reuse, where the cache drops both at
 * once, open.c's new_window): keep the
 * tier beside it, emptied, for the next file of the same geometry; else
 * leave it to tci_combiner_free. */
void tci_combiner_keep(struct tcio_file *fh);

/* The collective half of tcio_flush, tcio_close and every call that
 * needs every rank's writes in the file's level 2, after this rank's
 * tci_access_settle (lib/access.h) returned SETTLED: on a file with the
 * tier, once every rank of the node has moved its level 1 into the
 * node's tier (a barrier over the node's communicator: the tier holds
 * only their bytes), each rank forwards the dirty segments its slots of
 * the tier hold, empties them (on a writable file: a read-only file's
 * keep what they loaded) and completes its moves into the file's
 * level 2.  The caller's next collective step over FH->comm (a barrier
 * or an agreement) orders every node's forwards before what needs them
 * all.  Returns SETTLED if it is a failure, else the first
 * failure here, explained.  Without the tier: SETTLED, local.  Usage:
 * rc = tci_combiner_settle(fh, tci_access_settle(fh)). */
int  tci_combiner_settle(struct tcio_file *fh, int settled);

/* Collective over the node's ranks (MPI_Comm_free of the node
 * communicator; the slots are unmapped locally): harmless on a file
 * without the tier, and when called twice. */
void tci_combiner_free(struct tcio_file *fh);

/* After a move of level 1 into the tier that filled the node's slot (the
 * node wrote every byte of the segment: FH->node.filled_valid): forward it
 * at once rather than when the slot is needed again.  Local. */
int  tci_combiner_filled(struct tcio_file *fh);

#endif
