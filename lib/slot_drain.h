/* slot_drain.h - the drain engine: one slot of a level 2 sent downstream
 * under its lock, for an aggregator's early drains and tcio_sync's drains
 * of its own slots (owner.c) and for a node's forwards of its combining
 * tier (combiner.c).
 * Where the bytes go is the level 2's downstream (level2.h): the file for
 * the file's level 2, the segment's slot in the file's level 2 for a
 * tier.  The close drain of the file's level 2 reads the slots without
 * locks after the close barrier and is owner.c's own. */
#ifndef TCIO_SLOT_DRAIN_H
#define TCIO_SLOT_DRAIN_H

#include <stdbool.h>
#include "file.h"

typedef struct tci_drain_rule {
    /* Drain only a segment marked complete (TCI_SLOT_FULL: the written-
     * byte counter reached the segment size) whose bitmap confirms it
     * (overwrites count twice); a FULL mark the bitmap refutes is dropped.
     * Otherwise every dirty segment is drained. */
    bool only_complete;
    /* After the drain the slot keeps its segment, clean (an aggregator's
     * slot, which goes on serving reads and writes), and loaded if every
     * byte of it is the downstream's now (it was loaded, or the segment
     * was complete; not a partly written one that tcio_sync drained);
     * otherwise it is emptied, clean ones too (a node's tier, whose later
     * reads must fetch what other nodes wrote). */
    bool keep;
} tci_drain_rule;

/* Take slot LOC of L2 (a slot this rank reaches by address: its own, or
 * any of its node's tier), drain it by RULE, release it.  *DRAINED says
 * whether bytes went downstream.  A failed drain keeps the segment dirty
 * in its slot (the close tries again) and sticks to the handle.  Returns
 * the first failure.  Local (the downstream may be another rank's slot). */
int tci_slot_drain(tcio_file *fh, tci_level2 *l2, tci_location loc, tci_drain_rule rule,
                   bool *drained);

#endif
