/* level2.h - the level-2 window: every owner's slots, their headers and
 * written-byte bitmaps, and the one-sided moves between level 1 and 2. */
#ifndef TCIO_LEVEL2_H
#define TCIO_LEVEL2_H

#include <stdbool.h>
#include <stdint.h>
#include <mpi.h>

struct tcio_file;

#define TCI_SLOT_EMPTY    (-1)
#define TCI_SLOT_LOADED   0x1   /* unwritten bytes hold the file's content */
#define TCI_SLOT_DIRTY    0x2   /* some byte was written: drain before reuse */
#define TCI_SLOT_FULL     0x4   /* the written-byte counter reached the
                                   segment size: the owner checks the bitmap */
#define TCI_FLAG_BITS     3

/* What a slot holds, decoded from its state word. */
typedef struct tci_slot_header {
    int64_t segment;   /* file segment held, or TCI_SLOT_EMPTY */
    int64_t flags;     /* TCI_SLOT_LOADED | TCI_SLOT_DIRTY | TCI_SLOT_FULL */
} tci_slot_header;

/* Each slot's header holds two int64 words (padded to TCI_HEADER_BYTES):
 *   state    TCI_STATE_LOCKED while a mover holds the slot, else the header
 *            packed as (segment + 1) << TCI_FLAG_BITS | flags.  Changed only
 *            with MPI_REPLACE, so that taking the lock and reading the
 *            header is one atomic swap (see doc/design.md).  Segment
 *            numbers are at most TCI_MAX_SEGMENT = 2^60 - 2, so that
 *            (segment + 1) << TCI_FLAG_BITS stays below 2^63 (api.c bounds
 *            offsets accordingly).
 *   written  bytes moved into the segment since it was claimed (MPI_SUM by
 *            movers): a cheap trigger for early drain; overwrites make it
 *            overcount, so the owner confirms with the bitmap.  Reset to 0
 *            by a mover that claims the slot for another segment (an
 *            MPI_REPLACE accumulate, claim_slot) and by the owner after an
 *            early drain (a plain store into its own window, under the slot
 *            lock, followed by MPI_Win_sync).
 * Mixing operations on one location (the bitmap: MPI_REPLACE when a slot
 * is claimed, MPI_BOR for each write; the counter: MPI_REPLACE, MPI_SUM and
 * the owner's store) is legal under the window's default accumulate_ops
 * (same_op_no_op), which only forbids different operations that are
 * concurrent: all of them happen under the slot lock, a holder's own
 * accumulates are ordered (the default accumulate_ordering), and a release
 * completes them at the owner (MPI_Win_flush) before the next holder can
 * take the lock.  Only the lock word itself is touched by every rank at
 * once, and only ever with MPI_REPLACE (and MPI_NO_OP reads). */
#define TCI_STATE_LOCKED    INT64_MIN
#define TCI_HEADER_BYTES    32
#define TCI_WRITTEN_OFFSET  8
#define TCI_NOTICE_BYTES    64     /* the window starts with the notice word */
#define TCI_MAX_SEGMENT     ((INT64_C(1) << (63 - TCI_FLAG_BITS)) - 2)

static inline int64_t tci_state_encode(const tci_slot_header *h)
{
    return ((h->segment + 1) << TCI_FLAG_BITS) | h->flags;
}

static inline tci_slot_header tci_state_decode(int64_t state)
{
    tci_slot_header h = { .segment = (state >> TCI_FLAG_BITS) - 1,
                          .flags = state & ((1 << TCI_FLAG_BITS) - 1) };
    return h;
}

/* A datatype describing a move's extents, relative to the first one. */
typedef struct tci_move_type {
    MPI_Datatype type;
    int          count;      /* elements of TYPE */
    MPI_Aint     offset;     /* displacement of the first extent */
    bool         temporary;  /* built for this move only: free after it */
} tci_move_type;

#define TCI_VECTOR_CACHE 4

/* Recently used vector types: regular, strided extent lists (the
 * interleaved patterns libtcio exists for) repeat from move to move. */
typedef struct tci_vector_cache {
    MPI_Datatype type[TCI_VECTOR_CACHE];
    int          count[TCI_VECTOR_CACHE], len[TCI_VECTOR_CACHE], stride[TCI_VECTOR_CACHE];
    int          used, next;
} tci_vector_cache;

/* Window layout on every aggregator:
 *   [notice word: 64 B][headers: nslots x 32 B][bitmaps: nslots x bitmap_bytes]
 *   [data: nslots x segment]
 * Bit i of a slot's bitmap is set when byte i of its segment was written.
 * The notice word counts segments that movers found full (MPI_SUM): the
 * owner looks at its slots only when it changed. */
typedef struct tci_level2 {
    MPI_Win  win;
    MPI_Comm comm;             /* the file's private communicator (not owned):
                                  probed while a slot lock is busy */
    bool     epoch_open;       /* the MPI_Win_lock_all epoch of the open file */
    char    *base;
    int64_t  nslots;           /* per aggregator: gives the layout */
    int64_t  local_slots;      /* this rank's: nslots or 0 */
    int      self;             /* this rank in the window's group */
    int      segment_size;
    int      bitmap_bytes;
    tci_vector_cache vectors;
    int64_t  state_out;        /* origin of a release: lives until complete */
    char    *scratch;          /* one segment (spills, loads of written
                                  segments), allocated at first use */
    unsigned char *bitmap;     /* one bitmap: victim's, or OR mask */
    char    *loadbuf;          /* one segment for prefetch loads, which must
                                  not disturb level 1; allocated at first use */
} tci_level2;

/* Collective over COMM: allocate the window, open the file's shared
 * MPI_Win_lock_all epoch.  NSLOTS is every aggregator's slot count; a rank
 * that is not an AGGREGATOR exposes an empty window and holds no level-2
 * memory. */
int  tci_level2_create(tci_level2 *l2, MPI_Comm comm, int64_t nslots, int segment_size,
                       bool aggregator);

/* Bytes of the window of an aggregator with NSLOTS slots of SEGMENT_SIZE
 * bytes (the layout below, rounded up to 64 bytes). */
int64_t tci_level2_window_bytes(int64_t nslots, int64_t segment_size);

/* Whether WINDOWS windows of BYTES each may be allocated on this node:
 * together at most half its physical memory and the free space of
 * /dev/shm (where MPI keeps shared windows), and within the process's
 * address-space limit (MPI maps a node's shared windows into every process
 * of the node).  Returns NULL if they fit, else the limit they exceed, in
 * words for tcio_last_error. */
const char *tci_level2_exceeds(int64_t bytes, int windows);

/* Local: set L2 up on WIN (BASE), a window that tci_level2_keep gave back
 * from a level 2 of the same geometry (NSLOTS, SEGMENT_SIZE, AGGREGATOR),
 * its epoch still open and its slots empty.  tcio_open reuses the window
 * of the previous file on the same communicator this way (lib/comm_cache.c). */
int  tci_level2_adopt(tci_level2 *l2, MPI_Comm comm, int64_t nslots, int segment_size,
                      bool aggregator, MPI_Win win, void *base);

/* Local, after the close drain: empty this rank's slots and hand the
 * window (its epoch open) to *WIN and *BASE for a later tci_level2_adopt;
 * free the rest. */
void tci_level2_keep(tci_level2 *l2, MPI_Win *win, void **base);

/* Close the epoch and free everything (collective). */
void tci_level2_free(tci_level2 *l2);

/* Complete every one-sided operation this rank issued, at its target
 * (MPI_Win_flush_all): before a barrier that publishes them. */
int  tci_level2_complete_all(tci_level2 *l2);

static inline MPI_Aint tci_header_disp(const tci_level2 *l2, int64_t slot)
{
    (void)l2;   /* headers come first: the layout needs no sizes */
    return TCI_NOTICE_BYTES + (MPI_Aint)slot * TCI_HEADER_BYTES;
}
static inline MPI_Aint tci_bitmap_disp(const tci_level2 *l2, int64_t slot)
{
    return TCI_NOTICE_BYTES + (MPI_Aint)l2->nslots * TCI_HEADER_BYTES
         + (MPI_Aint)slot * l2->bitmap_bytes;
}
static inline MPI_Aint tci_data_disp(const tci_level2 *l2, int64_t slot)
{
    return tci_bitmap_disp(l2, l2->nslots) + (MPI_Aint)slot * l2->segment_size;
}

/* Move the rank's buffered writes (level 1, writing mode) to their level-2
 * slot: one MPI_Put under the slot's lock, draining the slot's previous
 * segment to the file first if it held another one. */
int tci_level2_put_writes(struct tcio_file *fh);

/* Fetch the rank's pending reads (level 1, reading mode) from their level-2
 * slot into the level-1 buffer and deliver them, loading the segment from
 * the file first if the slot does not hold its content yet. */
int tci_level2_get_reads(struct tcio_file *fh);

/* Prefetch: load SEGMENT from the file into its slot unless the slot
 * already holds its file bytes or holds another segment with unsaved
 * bytes (a hint never causes a spill).  *LOADED says whether it loaded.
 * Level 1 is not touched. */
int tci_level2_prefetch(struct tcio_file *fh, int64_t segment, bool *loaded);

/* The slot lock (doc/design.md).  A holder must release with
 * tci_level2_unlock, publishing the header it leaves; MODIFIED says the
 * slot's bitmap or data changed (they are then completed first). */
int tci_level2_lock(tci_level2 *l2, tci_location loc, tci_slot_header *h);
int tci_level2_unlock(tci_level2 *l2, tci_location loc, const tci_slot_header *h,
                      bool modified);

/* A snapshot of the owner's own slot headers: WORDS receives
 * TCI_HEADER_BYTES / 8 words per local slot (the state word first). */
int tci_level2_peek_states(tci_level2 *l2, int64_t *words);

/* The owner's view of its notice word (an atomic read of its own window). */
int tci_level2_notices(tci_level2 *l2, int64_t *count);

/* Set bits [from, to) of BITMAP. */
void tci_bitmap_set_range(unsigned char *bitmap, int from, int to);

/* Next run of set (WANT=1) or clear (WANT=0) bits at or after FROM, below
 * LIMIT: returns its start (LIMIT if none) and stores its end in *END. */
int tci_bitmap_next_run(const unsigned char *bitmap, int from, int limit, int want, int *end);

#endif
