/* level2.h - level 2's protocol: the moves between a rank's level-1
 * buffer and the aggregators' slots (claim, spill, load, put, get,
 * prefetch), over the transport chosen at open (transport.h).  The slot
 * layout is in slot.h, the file side in segio.h; the owner's duties (early
 * and close drains) in owner.h. */
#ifndef TCIO_LEVEL2_H
#define TCIO_LEVEL2_H

#include <stdbool.h>
#include <stdint.h>
#include <mpi.h>
#include "transport.h"

struct tcio_file;

/* A level 2's downstream: where a segment goes when it leaves a slot
 * and where a slot's content comes from when it is loaded.  The file's
 * level 2 has the file (tci_downstream_file, through segio.c); a node's
 * combining tier has the segment's slot in the file's level 2
 * (combiner.c).  Every member is set: level2.c asks nothing of it but
 * what the table says (is_file). */
typedef struct tci_downstream {
    /* SEGMENT leaves its slot, which is claimed for another (a spill):
     * DATA where BITMAP's bits are set.  Counts itself in TCIO_STATS. */
    int  (*spill)(struct tcio_file *fh, int64_t segment, const char *data,
                  const unsigned char *bitmap);
    /* SEGMENT leaves its slot because it is done with there (an
     * aggregator's early drain, a node's forward of the tier at flush or
     * close or when the node wrote all of it; slot_drain.h): DATA where
     * BITMAP's bits are set.  A forward counts itself; a write to the file
     * is counted by the caller, who knows which drain it is. */
    int  (*drain)(struct tcio_file *fh, int64_t segment, const char *data,
                  const unsigned char *bitmap);
    /* SEGMENT's bytes [LO, HI), for a slot being loaded, into BUF + LO
     * (BUF: a whole segment, whose other bytes it may change too).
     * Counts itself in TCIO_STATS. */
    int  (*load)(struct tcio_file *fh, int64_t segment, char *buf, int lo, int hi);
    /* The downstream is the file: the level 2 spans every node (its moves
     * may cross nodes, counted as off_node_moves) and its segments fill
     * with every node's bytes, so the drift policy applies ("a rank ahead
     * of the others"); a node's tier holds one node's bytes, on its node. */
    bool is_file;
    /* Readers' loads take only the span they want (a partial load,
     * level2.c), where the transport keeps a loaded span: a node's tier,
     * whose loads cross nodes, where a small read of a segment need not
     * bring all of it.  The file's level 2 loads whole segments: a
     * stripe-sized read costs the file system about what a small one
     * does, and its slot then serves every node. */
    bool loads_spans;
} tci_downstream;

extern const tci_downstream tci_downstream_file;

typedef struct tci_level2 {
    tci_transport  t;
    char          *scratch;    /* one segment (spills, loads of written
                                  segments), allocated at first use */
    unsigned char *bitmap;     /* its bitmap, allocated with it */
    char          *loadbuf;    /* one segment for prefetch loads, which must
                                  not disturb level 1; allocated at first use */
    bool           filled_valid; /* the last write move completed the segment */
    tci_location   filled;       /* in this slot: owner.c has it written */
    /* Drift (level2.c, "a rank ahead of the others"): what a write around
     * an older segment cost lately (seconds; 0 before the first), and how
     * often waiting for such a segment ended with it complete. */
    double         around_cost;
    int            wait_score;
    int            waits_skipped;
    const struct tci_downstream *down;   /* set at open and adopt */
    /* Counted in tci_collective_serve: other ranks' moves into these slots
     * wait for this rank's MPI progress (level2.c, serve). */
    bool           serving;
} tci_level2;

/* Collective over COMM: open transport OPS with MAP's geometry, in front
 * of DOWN; an OWNER (aggregator) holds MAP->nslots slots, the other ranks
 * none. */
int  tci_level2_open(tci_level2 *l2, const tci_transport_ops *ops, MPI_Comm comm,
                     const tci_segmap *map, bool owner, const tci_downstream *down);

/* Collective, after the open's agreement: whether other ranks' moves
 * into the aggregators' slots wait for their MPI progress, measured with
 * the TARGET ranks' slots and the PROBER ranks' operations
 * (tci_transport_ops' probe_progress, which says what it returns); if
 * not, L2 stops counting among the levels 2 that polls and collective
 * waits serve. */
int  tci_level2_probe_progress(tci_level2 *l2, const int target[2], const int prober[2]);

/* Local: set L2 up on KEPT, the transport of an earlier file with the
 * same geometry and transport on the same communicator, emptied by
 * tci_level2_keep, now for the file whose geometry is MAP.  tcio_open
 * reuses the previous file's slots this way (lib/comm_cache.c). */
void tci_level2_adopt(tci_level2 *l2, const tci_transport *kept, const tci_segmap *map,
                      const tci_downstream *down);

/* Local, after the close drain (no other rank accesses the slots): empty
 * this rank's slots and hand the transport over to *KEPT for a later
 * tci_level2_adopt, freeing the rest of L2.  False, and L2 untouched, if
 * the transport cannot be kept. */
bool tci_level2_keep(tci_level2 *l2, tci_transport *kept);

/* Close the transport and free everything (collective). */
void tci_level2_free(tci_level2 *l2);

/* Complete every operation this rank issued, at its target: before a
 * barrier that publishes them. */
int  tci_level2_complete_all(tci_level2 *l2);

/* Move the rank's buffered writes (level 1, writing mode) to their level-2
 * slot (in the node's combining tier, when the file has one): shared with
 * other writers of the segment when the transport can and the slot holds the
 * segment already, else under the slot's exclusive lock, spilling the slot's
 * previous segment to the file first if it held another one.  If the move
 * completed the segment (early drain), L2->filled_valid is set and
 * L2->filled names the slot: the caller has it written (tci_owner_filled). */
int tci_level2_put_writes(struct tcio_file *fh);

/* Work done under a slot lock of the file's level 2, after a merge or a
 * fetch succeeded and before the slot is released (forward.c: a merge's
 * sequence number, a fetch's staged forwards laid over it). */
typedef struct tci_under_lock {
    int  (*run)(struct tcio_file *fh, void *arg);
    void *arg;
} tci_under_lock;

/* A node's combined bytes of a segment into its slot in the file's level
 * 2 (forward.c): V is a level-1 view of them (writing mode, its marks the
 * bytes, its buffer their data).  Under the slot's lock, claimed for the
 * segment (spilling another one), V's bytes are laid over the slot's in
 * place when the slot is this rank's (an aggregator merging what its
 * nodes sent it); else the slot's bytes and bitmap over V's ranges (its
 * first to its last marked bitmap word, cut at long unmarked stretches:
 * tci_level1_ranges) come over, V's bytes are laid on top, and both
 * go back: contiguous transfers of the ranges, where a put of
 * V's runs would need a datatype of tens of thousands of blocks and an
 * accumulate of the bits (measured in doc/design.md).  The slot's
 * written-byte counter, kept equal to its bitmap's set bits, says when
 * the slot is full; then L2.filled_valid is set for tci_owner_filled.
 * The caller keeps V.
 * AFTER (NULL: nothing) runs under the lock once the bytes are in. */
int tci_level2_merge(struct tcio_file *fh, const tci_level1 *v, const tci_under_lock *after);

/* The bytes [LO, HI) of a segment out of the file's level 2 into BUF +
 * LO (BUF: a whole segment, whose other bytes may change too), for a
 * node's combining tier: what the slot holds of SEGMENT over the file's
 * bytes, or the file's bytes when it holds another segment.  Without
 * taking the slot where the transport can peek (read between two peeks,
 * again if the slot changed meanwhile); after three tries, or without
 * peek, under the slot lock, loading an unloaded slot (whole) from the
 * file for later fetches.  With UNDER_LOCK (NULL: none) the slot is
 * always taken, even when it holds another segment, and UNDER_LOCK->run
 * lays what it must over BUF before the release. */
int tci_level2_fetch(struct tcio_file *fh, int64_t segment, char *buf, int lo, int hi,
                     const tci_under_lock *under_lock);

/* Fetch the rank's pending reads (level 1, reading mode) from their level-2
 * slot (in the node's combining tier, when the file has one) into the
 * level-1 buffer and deliver them: shared with other readers when the
 * transport can and the slot holds the segment loaded, else under the
 * exclusive lock, loading the segment from the file first if the slot does
 * not hold its content yet. */
int tci_level2_get_reads(struct tcio_file *fh);

/* Prefetch: load SEGMENT from L2's downstream (the file, or for a node's
 * tier its fetch) into its slot of L2 unless the slot already holds its
 * bytes loaded or holds another segment with unsaved bytes (a hint never
 * causes a spill).  *LOADED says whether it loaded.  Level 1 is not
 * touched. */
int tci_level2_prefetch(struct tcio_file *fh, tci_level2 *l2, int64_t segment, bool *loaded);

/* Whether other ranks may reach this rank's slots of the file's level 2,
 * so that its polls must turn MPI's progress engine for them where the
 * transport needs it.  Not for a file opened MPI_MODE_RDONLY on several
 * nodes without a read session: every read goes through the node's tier,
 * whose fetches read the file, and tcio_prefetch loads the tier
 * (prefetch.c). */
bool tci_level2_reached_by_others(const struct tcio_file *fh);

/* Count the file's level 2 among those whose slots others reach
 * (tci_collective_serve) exactly when tci_level2_reached_by_others says
 * so: at the end of open and after a read session.  Local. */
void tci_level2_update_serving(struct tcio_file *fh);

#endif
