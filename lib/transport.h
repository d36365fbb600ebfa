/* transport.h - the seam between level 2's protocol and the way bytes and
 * words reach the slots.
 *
 * Level 2 (level2.c) decides what a move does: take the slot, claim it for
 * a segment (spilling its previous one), move the extents, publish the new
 * header.  A transport decides how: which memory holds the slots, how a
 * word is swapped atomically, how extents travel.  It is chosen once at
 * open (transport.c) as a table of functions, like Open MPI's fcoll
 * modules; every implementation lives in its own file (transport_rma.c:
 * MPI one-sided operations in one MPI_Win_allocate window; transport_shm.c:
 * one POSIX shared-memory segment over the node, copies and C11
 * atomics).  Nothing
 * outside the implementations sees a window, a window address or an MPI
 * datatype.
 *
 * Every operation returns TCIO_SUCCESS or a tcio error code (with its
 * reason recorded for tcio_last_error).  A "location" is a slot of an
 * aggregator (segmap.h).
 *
 * Meant to fit node-shared transports as well: a node-shared-memory
 * transport reaches every slot of the node by address (memory returns it
 * for any such slot, and a move is a copy plus C11 atomics on the words),
 * keeps its own move description in tci_move.impl and its state in
 * tci_transport.impl.  Shared access to a slot (writers of the segment it
 * holds together, or readers of its loaded segment together) is an
 * optional pair of operations, chosen by level 2 per move. */
#ifndef TCIO_TRANSPORT_H
#define TCIO_TRANSPORT_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mpi.h>
#include "configuration.h"
#include "level1.h"
#include "segmap.h"
#include "slot.h"

typedef struct tci_transport tci_transport;

/* A move's bytes as the transport wants them: the level-1 buffer's bitmap
 * of marked bytes (MARKED, words [MARKED_LO, MARKED_HI), level1.h) for a
 * transport that moves bitmaps, else described extents.  A write move's
 * extents are described before taking the slot (building a description
 * may cost a millisecond for tens of thousands of extents: better not
 * while holding a lock); a read move's under the lock, and only when the
 * slot is loaded already (a read that loads the segment needs none).
 * IMPL is the transport's own description. */
typedef struct tci_move {
    const tci_extents *extents;   /* normalised: sorted, disjoint; NULL when
                                     the move is given by MARKED */
    const uint64_t *marked;       /* the level-1 bitmap */
    int marked_lo, marked_hi;
    int64_t bytes;                /* their total length */
    alignas(max_align_t) unsigned char impl[48];
} tci_move;

typedef struct tci_transport_ops {
    const char *name;             /* as tcio_get_info and TCIO_STATS show it */
    /* put and get take a move as the level-1 bitmap (tci_move.marked)
     * rather than described extents. */
    bool moves_bitmaps;
    /* Other ranks' moves into this rank's slots may wait for this rank's
     * MPI progress engine (MPI one-sided operations): tcio_progress and
     * the polls of aggregators enter MPI for them, unless the open's
     * probe found that they do not (tci_transport.needs_progress). */
    bool needs_progress;
    /* state_in_memory may read any slot that memory reaches while other
     * ranks move (its words are CPU atomics): a mover can watch a slot
     * without taking it. */
    bool peeks_any_slot;
    /* The owner's look at its notice word (notices) is an MPI operation
     * on its own window, not a CPU atomic: its polls look one time in
     * TCI_NOTICE_POLLS (progress.c). */
    bool notices_by_mpi;

    /* Bytes of level-2 memory an aggregator with NSLOTS slots of
     * SEGMENT_SIZE bytes holds (its window, with rma). */
    int64_t (*memory_bytes)(int64_t nslots, int64_t segment_size);

    /* Collective over COMM: create the slots (NSLOTS = MAP->nslots on
     * every OWNER, none elsewhere), all empty, and whatever access epoch
     * the transport needs.  MAP gives the geometry and outlives T.  The
     * caller synchronises all ranks before the first access.  On failure
     * close must still be called. */
    int  (*open)(tci_transport *t, MPI_Comm comm, const tci_segmap *map, bool owner);
    /* Collective: end the epoch and free everything. */
    void (*close)(tci_transport *t);

    /* The slot lock.  take: wait until the slot is free (no holder, no
     * sharer), lock it and
     * return its header.  release: publish header H and unlock, in one
     * atomic write; MODIFIED says the slot's bitmap, counter or data
     * changed (every holder that changed them must say so: see peek), and
     * they are then complete at the owner before the slot is seen free.
     * A release is attempted even after a failure, so that no error
     * leaves a slot locked. */
    int  (*take)(tci_transport *t, tci_location loc, tci_slot_header *h);
    int  (*release)(tci_transport *t, tci_location loc, const tci_slot_header *h,
                    bool modified);

    /* Shared access, optional (both NULL: every move takes the slot
     * exclusively).  take_shared: wait while the slot is locked or an
     * exclusive taker waits for it; then, if the slot holds SEGMENT (and,
     * for READING, is loaded) and its sharers (if any) move the same way,
     * join them: *SHARED true, *H its header.  Otherwise *SHARED false and
     * nothing is held: the mover takes the slot exclusively (claims, spills,
     * loads and drains are exclusive).  A sharer only puts (writers) or gets
     * (readers); put's bitmap bits and counter are atomic, and sharers
     * write disjoint bytes or race as conflicting MPI-IO accesses do.
     * release_shared: leave, ORing FLAGS (TCI_SLOT_DIRTY, TCI_SLOT_FULL)
     * into the header; this sharer's changes are complete before an
     * exclusive taker can see the slot free. */
    int  (*take_shared)(tci_transport *t, tci_location loc, int64_t segment, bool reading,
                        tci_slot_header *h, bool *shared);
    int  (*release_shared)(tci_transport *t, tci_location loc, int64_t flags);

    /* Under the lock: clear the slot's bitmap, written-byte counter and
     * loaded span (a claim for a new segment). */
    int  (*reset)(tci_transport *t, tci_location loc);
    /* Describe extents E for moves, unless the transport moves bitmaps
     * (writes: before taking the slot; reads: under the lock, see
     * tci_move); forget frees the description. */
    int  (*describe)(tci_transport *t, const tci_extents *e, tci_move *m);
    void (*forget)(tci_transport *t, tci_move *m);
    /* Under the lock (or shared): copy M's bytes of BUF (a segment) into
     * the slot, OR their bits into its bitmap and, if BEFORE is not NULL,
     * add M->bytes to its written-byte counter and return the counter as
     * it was in *BEFORE. */
    int  (*put)(tci_transport *t, tci_location loc, const char *buf, const tci_move *m,
                int64_t *before);
    /* Under the lock (or shared): copy M's bytes of the slot into BUF (a
     * segment). */
    int  (*get)(tci_transport *t, tci_location loc, char *buf, const tci_move *m);
    /* Under the lock: copy the whole slot out (DATA: a segment, BITMAP:
     * tci_bitmap_bytes). */
    int  (*get_all)(tci_transport *t, tci_location loc, char *data, unsigned char *bitmap);
    /* get_all of parts: for each of the N (1 to TCI_MAX_RANGES) ranges R,
     * the slot's bytes [lo, hi) into DATA + lo (DATA: a segment) and, when
     * BITMAP is not NULL, the bitmap words that cover them into the same
     * place of BITMAP (whole 64-bit words, bytes 8 * (lo / 64) up to
     * 8 * ceil(hi / 64)); and when WRITTEN is not NULL the written-byte
     * counter into *WRITTEN.  All in flight together.  Under the lock, or
     * between two peeks as get_all (level2.c, fetches; WRITTEN NULL). */
    int  (*get_range)(tci_transport *t, tci_location loc, int n, const tci_range *r,
                      char *data, unsigned char *bitmap, int64_t *written);
    /* get_range's inverse, under the lock: DATA's bytes of the ranges into
     * the slot and, when BITMAP is not NULL, the bitmap words that cover
     * them (the slot's other words untouched; BITMAP NULL: the bitmap is
     * untouched), and when WRITTEN is not NULL *WRITTEN as the
     * written-byte counter.  One range [0, segment size) puts a whole
     * segment. */
    int  (*put_range)(tci_transport *t, tci_location loc, int n, const tci_range *r,
                      const char *data, const unsigned char *bitmap, const int64_t *written);
    /* The slot's loaded-span word (slot.h) where the transport keeps one,
     * for slots this rank reaches by address (shm), else NULL: level 2
     * then loads only whole segments into the slot.  Plain loads and
     * stores under the exclusive lock; reset, clear_in_memory and empty
     * zero it. */
    int64_t *(*loaded_span)(tci_transport *t, tci_location loc);
    /* Add one to LOC's owner's notice word (a segment there may be full),
     * complete at the owner on return. */
    int  (*notify)(tci_transport *t, tci_location loc);

    /* The slot's memory when this rank reaches it by address (rma: its
     * own slots), else NULL: the data, and in *BITMAP its bitmap.  Plain
     * loads and stores there need the lock (or the close barrier), and
     * sync between them and other ranks' accesses. */
    char *(*memory)(tci_transport *t, tci_location loc, unsigned char **bitmap);
    /* The state word of a slot reached by address, read in memory (after
     * sync, with nobody else accessing it: the close drain; at any time
     * where the transport peeks_any_slot). */
    int64_t (*state_in_memory)(tci_transport *t, tci_location loc);
    /* Clear the bitmap, counter and loaded span of a locked slot reached
     * by address. */
    void (*clear_in_memory)(tci_transport *t, tci_location loc);
    /* Add DELTA to the written-byte counter of a locked slot reached by
     * address and return the counter's new value (DELTA 0: read it). */
    int64_t (*add_written_in_memory)(tci_transport *t, tci_location loc, int64_t delta);
    /* Order this rank's plain loads and stores of its slots with other
     * ranks' accesses. */
    int  (*sync)(tci_transport *t);

    /* Optional: the state word of any slot as the transport keeps it,
     * read atomically without taking the slot (rma: one MPI_NO_OP
     * accumulate of the one word, which holds a version that every
     * release of a changed slot grows).  A snapshot: by the time it
     * returns the slot may have changed.  Two peeks around a read of the
     * slot that return the same unlocked word, the first issued at most
     * peek_window seconds before the second completed, prove that no
     * holder changed the slot during the read: one that took it after the
     * first peek either holds it at the second (locked) or released it
     * with a grown version, and the window is too short for the version
     * to come round again.  tci_state_decode reads the header from it. */
    int  (*peek)(tci_transport *t, tci_location loc, int64_t *state);
    double peek_window;

    /* The owner's notice word, read atomically. */
    int  (*notices)(tci_transport *t, int64_t *count);
    /* An atomic snapshot of the owner's own state words, one per slot. */
    int  (*peek_states)(tci_transport *t, int64_t *states);

    /* Complete every operation this rank issued, at its target: before a
     * barrier that publishes them. */
    int  (*complete_all)(tci_transport *t);

    /* Keeping the slots for the next file on the same communicator
     * (lib/comm_cache.c); NULL if the transport cannot.  empty: local,
     * after the close drain, with no other rank accessing the slots:
     * return this rank's slots to the empty state of open, keeping the
     * access epoch.  rebind: local, T (emptied) now serves a file whose
     * geometry MAP equals the old one's. */
    void (*empty)(tci_transport *t);
    void (*rebind)(tci_transport *t, const tci_segmap *map);

    /* Collective over the transport's communicator, after the open's
     * agreement (every rank's slots initialised): find out whether other
     * ranks' operations on an aggregator's slots wait for its MPI
     * progress, and set T->needs_progress on every rank from the verdict.
     * Pair I (0: across nodes, 1: within a node) has PROBER[I] operate on
     * TARGET[I]'s slots (TARGET[I] holds slots) while TARGET[I] stays out
     * of MPI; PROBER[I] -1: no such pair.  With no pair nobody else moves:
     * nothing needed.  A probe that cannot decide says "needed", as the
     * ops do.  Returns TCIO_SUCCESS, or TCIO_ERR_MPI on every rank if an
     * MPI call of the probe failed (the window is then not to be used). */
    int (*probe_progress)(tci_transport *t, const int target[2], const int prober[2]);
} tci_transport_ops;

struct tci_transport {
    const tci_transport_ops *ops;
    const tci_segmap *map;        /* the geometry (not owned) */
    int64_t local_slots;          /* this rank's slots: map->nslots or 0 */
    int     self;                 /* this rank in the file's communicator */
    int64_t busy_takes;           /* takes (exclusive or shared) that found
                                     the slot held and waited: contention */
    /* Seconds waited for other ranks (TCIO_STATS slot_waits and
     * one_sided_waits), since the transport was opened or adopted:
     * takes that found the slot held, from the first look until they got
     * it (with rma this includes the swaps of the retries), and
     * one-sided operations from their start until they completed at the
     * target (flushes included). */
    double  slot_wait_seconds;
    double  op_wait_seconds;
    /* MPI_COMM_NULL, or a communicator whose progress engine a wait for a
     * slot keeps turning (tci_transport_wait_progress): the shm slots of
     * the node's combining tier, whose holders may wait, inside a forward,
     * for one-sided operations that the waiter's MPI progress completes
     * (lib/combiner.c). */
    MPI_Comm progress_comm;
    /* Whether other ranks' moves into this rank's slots wait for its MPI
     * progress: the ops' needs_progress at open, then what the open's
     * probe measured (probe_progress), kept with a window reused by the
     * next file.  Polls and collective waits turn MPI's engine for
     * others only while it is true (progress.c, level2.c). */
    bool    needs_progress;
    /* The implementation's state, in place: open allocates nothing before
     * its collective steps, so that a rank out of memory cannot skip a
     * collective the others enter. */
    alignas(max_align_t) unsigned char impl[320];
};

/* The implementations. */
extern const tci_transport_ops tci_transport_rma;
extern const tci_transport_ops tci_transport_shm;

/* What a file's moves go through: the file's level 2 (LEVEL2) and, on
 * several nodes, a combining tier in each node in front of it (TIER, the
 * shm transport; NULL without one, lib/combiner.c). */
typedef struct tci_transport_plan {
    const tci_transport_ops *level2;
    const tci_transport_ops *tier;
} tci_transport_plan;

/* The one place the transports are chosen (local): for setting KIND on a
 * communicator that spans NNODES nodes (0: not known yet).  auto and
 * mixed: shm on one node; rma with a shm tier in front on several; rma
 * when the count is unknown.  rma and shm: themselves, on any count.
 * SHM_REFUSED (auto's shm segment could not be made on one node, open.c):
 * rma instead. */
tci_transport_plan tci_transport_plan_for(tci_transport_kind kind, int nnodes, bool shm_refused);

/* A take of T ends after TRIES busy looks (0: it found the slot free),
 * the first at BUSY_SINCE (MPI_Wtime): add the wait to
 * T->slot_wait_seconds. */
void tci_transport_waited_for_slot(tci_transport *t, int tries, double busy_since);

/* In a wait for a slot (POLLS so far): let MPI progress on T's
 * progress_comm, if it has one (tci_mpi_progress every 16th poll while
 * tci_back_off yields, every poll once it sleeps). */
void tci_transport_wait_progress(tci_transport *t, int polls);

/* The point-to-point tags of the file's private communicator: a node's
 * forwards and their acknowledgements (forward.c), one that nothing is
 * ever sent with, which tci_mpi_progress probes for, the open's probe of
 * the target's progress (probe_progress: the target's "I am out of MPI
 * now"), and the tag of the
 * node communicator's creation (MPI_Comm_create_group, combiner.c; Open
 * MPI sends messages with it on the file's communicator).  Every probe
 * and receive names its tag: none may use MPI_ANY_TAG there. */
enum { TCI_TAG_PROGRESS = 7000, TCI_TAG_FORWARD = 7001, TCI_TAG_ACK = 7002,
       TCI_TAG_NODE_COMM = 7003, TCI_TAG_PROBE = 7004 };

/* Run MPI's whole progress engine once, so that other ranks' one-sided
 * operations on our windows that need it (MPICH's, Open MPI's osc/pt2pt
 * and osc/ucx with emulated atomics) move: under Open MPI, MPI_Test on a
 * generalized request of the library's that stays pending until
 * MPI_Finalize (its pml/ucx turns the whole engine only on every 100th
 * MPI_Iprobe); under other MPIs, or if that request cannot be made, an
 * MPI_Iprobe on COMM for TCI_TAG_PROGRESS, which finds nothing: a probe
 * that finds a message returns without turning the engine (MPICH's does),
 * and COMM carries forwards. */
void tci_mpi_progress(MPI_Comm comm);

/* Local: TCIO_SUCCESS unless KIND is shm and the communicator spans
 * NNODES > 1 nodes (TCIO_ERR_BAD_CONFIG, naming the node count).  Every
 * rank knows the same node count, so every rank gets the same result. */
int tci_transport_check_nodes(tci_transport_kind kind, int nnodes);

/* Whether WINDOWS level-2 memories of BYTES each may be allocated on this
 * node: together at most half its physical memory and the free space of
 * /dev/shm (where the shm transport's segment lives), and within the
 * process's address-space limit (shm maps a node's level 2 into every process
 * of the node).  Returns NULL if they fit, else the limit they exceed, in
 * words for tcio_last_error. */
const char *tci_transport_exceeds(int64_t bytes, int windows);

/* Whether BYTES more fit in this process's address space beside what it
 * maps now, under an address-space limit (RLIMIT_AS, ulimit -v; true
 * without one): a mapping that reserves no memory, made and unmapped at
 * once, answers with the kernel's own accounting.  Local.  An
 * MPI_Win_allocate that fails on some ranks only cannot be recovered from
 * (MPICH's waits forever for the others), so the open asks this before
 * the window is made and agrees on the answers. */
bool tci_address_space_fits(int64_t bytes);

/* Helpers of the transports that reach slots in a window. */

/* Give the processor away between two polls of a wait (POLLS so far) for
 * a slot or an operation: yield for the first TCI_BACK_OFF_YIELDS (1024)
 * polls (about a millisecond), then sleep 50 us per poll, so that a long wait for a rank
 * that shares our core leaves the core to it; sched_yield alone does not,
 * under Linux's fair scheduler.  With 4 ranks on 2 cores and one
 * aggregator this doubled the write throughput of Table II's shape; short
 * waits never sleep (doc/design.md has the measurements). */
enum { TCI_BACK_OFF_YIELDS = 1024 };   /* the polls that yield before sleeps */
void tci_back_off(int polls);

/* Whether WIN has MPI's unified memory model, in which local loads and
 * stores and one-sided operations reach the same memory.  The owner's
 * drains and in-place loads use plain loads and stores on its slots
 * (ordered by MPI_Win_sync and the slot locks); under the separate model
 * that is erroneous, so such a window is refused at open rather than
 * trusted with data.  Every MPI tested gives the unified model. */
bool tci_window_is_unified(MPI_Win win);

/* Empty T's slots for the next file (ops->empty): false if T's transport
 * cannot be kept.  Rebind an emptied T to the next file's MAP. */
bool tci_transport_empty(tci_transport *t);
void tci_transport_rebind(tci_transport *t, const tci_segmap *map);

/* Open the chosen transport OPS into T (collective): see ops->open. */
int  tci_transport_open(tci_transport *t, const tci_transport_ops *ops, MPI_Comm comm,
                        const tci_segmap *map, bool owner);
/* Collective: see ops->probe_progress. */
int  tci_transport_probe_progress(tci_transport *t, const int target[2], const int prober[2]);
/* Close T if it was opened (collective); safe to call twice. */
void tci_transport_close(tci_transport *t);

#endif
