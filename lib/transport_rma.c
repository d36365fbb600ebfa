/* transport_rma.c - the rma transport: level 2 in one MPI_Win_allocate
 * window, reached with MPI one-sided operations.
 *
 * The window is opened once, at tcio_open, with a shared MPI_Win_lock_all
 * epoch that lasts as long as the window (after a successful tcio_close it
 * may be kept, emptied, for the next file on the same communicator:
 * rma_empty, rma_rebind); exclusive access to a slot comes from
 * its state word, taken with an atomic swap (MPI_REPLACE).  Extents move
 * with one MPI_Rput or MPI_Rget and a datatype that describes them, their
 * bits with one MPI_BOR accumulate.  Waits poll request-based operations
 * and yield the processor between polls, because with MPI libraries whose
 * one-sided operations need the target's progress engine (MPICH ch4 over
 * UCX, measured in doc/design.md) the target may be a process that shares
 * our core.  doc/design.md has the protocol and why it cannot deadlock.
 *
 * Window layout on every aggregator:
 *   [notice word: 64 B][headers: nslots x 32 B][bitmaps: nslots x bitmap_bytes]
 *   [data: nslots x segment]
 * A header holds the state word (with a version: "the version in the
 * state word" below) and, 8 bytes further, the written-byte counter
 * (slot.h).  The notice word counts segments that movers found full
 * (MPI_SUM): the owner looks at its slots only when it changed.
 *
 * The counter is reset to 0 by a mover that claims the slot for another
 * segment (an MPI_REPLACE accumulate, rma_reset) and by the owner after an
 * early drain (a plain store into its own window, under the slot lock,
 * followed by MPI_Win_sync).  A forward's merge (level2.c) gets it and
 * puts it back (rma_get_range, rma_put_range),
 * or, in the owner's own slot, adds to it with plain loads and stores
 * between MPI_Win_syncs.  Mixing operations on one location (the bitmap:
 * MPI_REPLACE when a slot is claimed, puts when a merge puts whole words
 * back, MPI_BOR for each write; the counter: MPI_REPLACE, MPI_SUM,
 * MPI_NO_OP, puts and the owner's loads and stores) is legal under the
 * window's default accumulate_ops (same_op_no_op), which only forbids
 * different operations that are concurrent: all of them happen under the
 * slot lock, a holder's own accumulates are ordered (the default
 * accumulate_ordering; its puts are not, so it does not mix the two on
 * one slot without a flush: held_slot.wrote), and a release completes
 * them at the owner (MPI_Win_flush) before the next holder can take the
 * lock.  Only the lock word itself is touched by every rank at once, and
 * only ever with MPI_REPLACE (and MPI_NO_OP reads: the owner's snapshot of
 * its state words reads those alone, rma_peek_states), and the notice
 * word, with MPI_SUM and MPI_NO_OP.  The one access outside the lock
 * besides: a node's fetch (level2.c) gets a slot's data and bitmap
 * between two peeks, racing the holders' puts, and keeps the bytes only
 * if the state word did not change meanwhile (doc/design.md). */
#define _POSIX_C_SOURCE 200809L   /* sysconf, clock_gettime, nanosleep */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "transport.h"
#include "error.h"
#include "pages.h"
#include "collective.h"


#define VECTOR_CACHE 4

/* Recently used vector types: regular, strided extent lists (the
 * interleaved patterns libtcio exists for) repeat from move to move. */
typedef struct vector_cache {
    MPI_Datatype type[VECTOR_CACHE];
    int          count[VECTOR_CACHE], len[VECTOR_CACHE], stride[VECTOR_CACHE];
    int          used, next;
} vector_cache;

/* How the holder of a slot has written its bitmap and counter since the
 * take or its last flush.  MPI orders one origin's accumulates to a
 * location (the default accumulate_ordering) but nothing else: after its
 * accumulates a holder writes them with accumulates again, and it
 * flushes before any other access of its own to them
 * (order_after_own_writes). */
enum { WROTE_NOTHING, WROTE_ACCUMULATES, WROTE_PUTS };

/* A slot this rank holds. */
typedef struct held_slot {
    tci_location loc;
    int64_t      version;      /* when taken */
    int          wrote;        /* WROTE_*, since the take or the last flush */
} held_slot;

typedef struct rma {
    MPI_Win  win;
    MPI_Comm comm;             /* the file's private communicator (not owned):
                                  probed while a slot lock is busy */
    int      rank;             /* this rank's in COMM */
    bool     epoch_open;       /* the MPI_Win_lock_all epoch of the open file */
    char    *base;
    const tci_segmap *map;     /* the geometry, owned by the segment map:
                                  segment size and slots give the layout */
    vector_cache vectors;
    int64_t  state_out;        /* origin of a release: lives until complete */
    unsigned char *mask;       /* one bitmap: zeros to clear, or an OR mask */
    int64_t *headers;          /* an owner's snapshot of its state words,
                                  allocated at the first look (peek_states) */
    MPI_Datatype state_words;  /* the state words among its headers (a vector:
                                  the counters beside them are not read
                                  there, puts may be writing them) */
    bool     state_words_made;
    /* The slots this rank holds and the version each had when taken, for
     * the release (at most one at a time today: level2.c). */
    held_slot held[4];
    int      nheld;
    bool     others_since_flush;  /* operations on other ranks' memory since
                                     the last flush of all: whether that
                                     flush may wait for another rank */
} rma;

/* A move's datatype, relative to the first extent (tci_move.impl). */
typedef struct move_type {
    MPI_Datatype type;
    int          count;      /* elements of TYPE */
    MPI_Aint     offset;     /* displacement of the first extent */
    bool         temporary;  /* built for this move only: free after it */
} move_type;

_Static_assert(sizeof(move_type) <= sizeof(((tci_move *)0)->impl),
               "tci_move.impl must hold the rma move type");
_Static_assert(sizeof(rma) <= sizeof(((tci_transport *)0)->impl),
               "tci_transport.impl must hold the rma state");

static inline rma *rma_of(tci_transport *t) { return (rma *)t->impl; }
static inline move_type *type_of(tci_move *m) { return (move_type *)m->impl; }
static inline const move_type *ctype_of(const tci_move *m)
{
    return (const move_type *)m->impl;
}

static inline int segment_bytes(const rma *r) { return (int)r->map->segment_size; }
static inline int bitmap_bytes(const rma *r) { return tci_bitmap_bytes(r->map->segment_size); }

static inline MPI_Aint header_disp(const rma *r, int64_t slot)
{
    (void)r;   /* headers come first: the layout needs no sizes */
    return (MPI_Aint)tci_layout_header(slot);
}
static inline MPI_Aint bitmap_disp(const rma *r, int64_t slot)
{
    return (MPI_Aint)tci_layout_bitmap(r->map->nslots, r->map->segment_size, slot);
}
static inline MPI_Aint data_disp(const rma *r, int64_t slot)
{
    return (MPI_Aint)tci_layout_data(r->map->nslots, r->map->segment_size, slot);
}

/* ---- datatypes of the moves -------------------------------------------- */

/* Commit a newly created TYPE; free it if that fails, so that a failed
 * move leaks no datatype. */
static int commit_or_free(MPI_Datatype *type)
{
    int err = MPI_Type_commit(type);
    if (err != MPI_SUCCESS)
        MPI_Type_free(type);
    return err;
}

/* A vector type for COUNT blocks of LEN bytes STRIDE apart, from the cache
 * or newly built and cached (evicting the oldest). */
static int cached_vector(vector_cache *c, int count, int len, int stride, MPI_Datatype *type)
{
    for (int i = 0; i < c->used; i++)
        if (c->count[i] == count && c->len[i] == len && c->stride[i] == stride) {
            *type = c->type[i];
            return MPI_SUCCESS;
        }
    int err = MPI_Type_vector(count, len, stride, MPI_BYTE, type);
    if (err == MPI_SUCCESS)
        err = commit_or_free(type);
    if (err != MPI_SUCCESS)
        return err;
    int slot = c->next;
    if (c->used == VECTOR_CACHE)
        MPI_Type_free(&c->type[slot]);
    else
        c->used++;
    c->type[slot] = *type;
    c->count[slot] = count;
    c->len[slot] = len;
    c->stride[slot] = stride;
    c->next = (slot + 1) % VECTOR_CACHE;
    return MPI_SUCCESS;
}

static void free_vector_cache(vector_cache *c)
{
    for (int i = 0; i < c->used; i++)
        MPI_Type_free(&c->type[i]);
    c->used = c->next = 0;
}

/* Whether extents FROM..TO-1 (at least two) have one length and one
 * stride. */
static bool is_regular(const tci_extents *e, int from, int to)
{
    int stride = e->disp[from + 1] - e->disp[from];
    for (int i = from + 1; i < to; i++)
        if (e->len[i] != e->len[from] || e->disp[i] - e->disp[i - 1] != stride)
            return false;
    return true;
}

/* Regular extents framed by a first and a last one of other lengths (a
 * strided pattern cut by the segment boundaries): a struct of the first
 * extent, a cached vector of the middle ones and the last extent, built in
 * constant time.  Displacements are relative to the first extent. */
static int framed_vector(rma *r, const tci_extents *e, MPI_Datatype *type)
{
    int n = e->count;
    MPI_Datatype middle;
    int err = cached_vector(&r->vectors, n - 2, e->len[1], e->disp[2] - e->disp[1], &middle);
    if (err != MPI_SUCCESS)
        return err;
    int lengths[3] = { e->len[0], 1, e->len[n - 1] };
    MPI_Aint displs[3] = { 0, e->disp[1] - e->disp[0], e->disp[n - 1] - e->disp[0] };
    MPI_Datatype types[3] = { MPI_BYTE, middle, MPI_BYTE };
    err = MPI_Type_create_struct(3, lengths, displs, types, type);
    return err == MPI_SUCCESS ? commit_or_free(type) : err;
}

/* Describe the (normalised) extents of a move as one datatype, relative
 * to the first extent: plain bytes for one extent, a cached vector for
 * equal extents at a constant stride, a struct around a cached vector when
 * only the first and last extent break the pattern, else an indexed type
 * built for this move (MPI_Type_indexed costs about 1 ms, 6M
 * instructions, for 20,000 extents). */
static int build_move_type(rma *r, const tci_extents *e, move_type *m)
{
    m->offset = e->disp[0];
    m->temporary = false;
    if (e->count == 1) {
        m->type = MPI_BYTE;
        m->count = e->len[0];
        return MPI_SUCCESS;
    }
    m->count = 1;
    if (is_regular(e, 0, e->count))
        return cached_vector(&r->vectors, e->count, e->len[0], e->disp[1] - e->disp[0],
                             &m->type);
    if (e->count >= 4 && is_regular(e, 1, e->count - 1)) {
        m->temporary = true;
        return framed_vector(r, e, &m->type);
    }
    int err = MPI_Type_indexed(e->count, e->len, e->disp, MPI_BYTE, &m->type);
    if (err == MPI_SUCCESS)
        err = commit_or_free(&m->type);
    if (err == MPI_SUCCESS) {
        m->offset = 0;       /* the indexed type carries the displacements */
        m->temporary = true;
    }
    return err;
}

static int rma_describe(tci_transport *t, const tci_extents *e, tci_move *m)
{
    m->extents = e;
    int64_t sum = 0;
    for (int i = 0; i < e->count; i++)
        sum += e->len[i];
    m->bytes = sum;
    type_of(m)->temporary = false;
    return tci_error_from_mpi(build_move_type(rma_of(t), e, type_of(m)));
}

static void rma_forget(tci_transport *t, tci_move *m)
{
    (void)t;
    move_type *mt = type_of(m);
    if (mt->temporary)
        MPI_Type_free(&mt->type);
    mt->temporary = false;
}

/* ---- the window ---------------------------------------------------------- */

static int64_t rma_memory_bytes(int64_t nslots, int64_t segment_size)
{
    return tci_window_bytes(tci_layout_bytes(nslots, segment_size), sysconf(_SC_PAGESIZE));
}

static int rma_open(tci_transport *t, MPI_Comm comm, const tci_segmap *map, bool owner)
{
    rma *r = rma_of(t);        /* zeroed by tci_transport_open */
    r->win = MPI_WIN_NULL;
    r->comm = comm;
    MPI_Comm_rank(comm, &r->rank);
    r->map = map;
    /* MPICH 4.0.2 (ch4) places other ranks' accesses wrongly in a window
     * whose size is not a multiple of 16 bytes (doc/design.md): the size is
     * rounded up to a cache line. */
    MPI_Aint bytes = owner ? (MPI_Aint)rma_memory_bytes(map->nslots, map->segment_size) : 0;
    int err = MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, comm, &r->base, &r->win);
    if (err != MPI_SUCCESS) {
        r->win = MPI_WIN_NULL;
        return tci_error_from_mpi(err);
    }
    MPI_Win_set_errhandler(r->win, MPI_ERRORS_RETURN);
    if (!tci_window_is_unified(r->win))   /* rma_close releases the window */
        return tci_error_set(TCIO_ERR_MPI, "MPI_Win_allocate gave the level-2 window the "
                             "separate memory model, which libtcio does not support");
    /* Zero is the empty state, a zero counter, no notice, a clear bitmap. */
    if (owner) {
        memset(r->base, 0, (size_t)data_disp(r, 0));
        /* The slots' pages, mapped now in one call rather than faulted in
         * one by one by the first merge or put into each (pages.h). */
        tci_pages_populate(r->base, (size_t)bytes);
    }
    /* The caller synchronises all ranks before the first move, so nobody
     * reaches these slots before they are initialised. */
    err = MPI_Win_lock_all(MPI_MODE_NOCHECK, r->win);
    if (err != MPI_SUCCESS)
        return tci_error_from_mpi(err);
    r->epoch_open = true;
    MPI_Win_sync(r->win);
    r->mask = malloc((size_t)bitmap_bytes(r));
    return r->mask ? TCIO_SUCCESS : TCIO_ERR_NO_MEMORY;
}

static void rma_close(tci_transport *t)
{
    rma *r = rma_of(t);
    free_vector_cache(&r->vectors);
    if (r->win != MPI_WIN_NULL) {
        if (r->epoch_open)
            MPI_Win_unlock_all(r->win);
        MPI_Win_free(&r->win);
    }
    r->epoch_open = false;
    free(r->mask);
    r->mask = NULL;
    free(r->headers);
    r->headers = NULL;
    if (r->state_words_made)
        MPI_Type_free(&r->state_words);
    r->state_words_made = false;
}

static int rma_complete_all(tci_transport *t)
{
    rma *r = rma_of(t);
    double start = MPI_Wtime();
    int err = MPI_Win_flush_all(r->win);
    /* Operations on this rank's own memory wait for nobody (flush_counted):
     * a flush of only those is no wait for another rank (one rank, or one
     * aggregator flushing its own slots). */
    if (r->others_since_flush)
        t->op_wait_seconds += MPI_Wtime() - start;
    r->others_since_flush = false;
    return tci_error_from_mpi(err);
}

/* ---- waiting ------------------------------------------------------------ */

/* The most requests waited for at once: a range move's bitmap and data
 * per range, and the counter. */
#define MAX_REQUESTS (2 * TCI_MAX_RANGES + 1)

/* Complete request-based operations on TARGET, giving the processor away
 * between polls so that a target sharing our core can run its progress
 * engine.
 * The time until they complete is T's one-sided wait (TCIO_STATS
 * one_sided_waits): zero where the operations complete at once. */
static int wait_yielding(tci_transport *t, int target, int count, MPI_Request *requests)
{
    MPI_Status statuses[MAX_REQUESTS];   /* not MPI_STATUSES_IGNORE: gcc
                                            misreads MPICH's annotation */
    bool others = target != rma_of(t)->rank;
    rma_of(t)->others_since_flush |= others;
    double start = 0;
    for (int polls = 0;; polls++) {
        int done = 0;
        int err = MPI_Testall(count, requests, &done, statuses);
        if (err != MPI_SUCCESS || done) {
            if (polls > 0 && others)      /* one's own memory: no other rank */
                t->op_wait_seconds += MPI_Wtime() - start;
            return err;
        }
        if (polls == 0)
            start = MPI_Wtime();
        else
            tci_collective_check_wait(start, rma_of(t)->comm, target);
        tci_back_off(polls);
    }
}

/* Wait for the first N requests of REQ (all that were started), keeping
 * the first error: no request is left behind on a failure path. */
static int finish_started(tci_transport *t, int target, int n, MPI_Request *req, int err)
{
    int wait_err = n > 0 ? wait_yielding(t, target, n, req) : MPI_SUCCESS;
    return err != MPI_SUCCESS ? err : wait_err;
}

/* MPI_Win_flush to RANK, its time counted as a one-sided wait unless
 * RANK is this rank: operations on one's own window wait for nobody. */
static int flush_counted(tci_transport *t, int rank)
{
    double start = MPI_Wtime();
    int err = MPI_Win_flush(rank, rma_of(t)->win);
    if (rank != rma_of(t)->rank)
        t->op_wait_seconds += MPI_Wtime() - start;
    return err;
}

/* ---- the version in the state word -------------------------------------- */

/* The 20 bits of the state word below the segment that shm uses for
 * sharing or leaves zero (slot.h) hold, with rma, a version: every release
 * of a slot whose holder changed it adds one, modulo 2^20.  So one atomic
 * read of the word tells a reader that did not take the lock both what the
 * slot holds and whether it changed (rma_peek, level2.c's fetches). */
#define VERSION_SHIFT 3
#define VERSION_BITS  20
#define VERSION_MASK  (((INT64_C(1) << VERSION_BITS) - 1) << VERSION_SHIFT)
_Static_assert(VERSION_SHIFT + VERSION_BITS == TCI_SEGMENT_SHIFT &&
                   TCI_STATE_WAITING == (INT64_C(1) << VERSION_SHIFT),
               "the version takes the state word's bits between flags and segment");

/* 2^20 changes of one slot within a peek window would be one every 95 ns,
 * while each needs its holder's swap to complete at the slot's owner, then
 * a flush and a release accumulate, after the previous holder's release:
 * several round trips, over a microsecond even within one node.  A fetch's
 * two peeks and reads took 3 us at the median under Open MPI's osc/sm and
 * 0.16 ms under MPICH (99% under 8 ms) on two "nodes" of the development
 * machine; a slower one reads again, or takes the slot (level2.c). */
#define PEEK_WINDOW 0.1

/* The state word without the version: what the rest of libtcio decodes. */
static int64_t without_version(int64_t word)
{
    return word == TCI_STATE_LOCKED ? word : word & ~VERSION_MASK;
}

/* Remember that this rank took LOC, whose word was OLD; false if it holds
 * too many slots already (a defect of the caller). */
static bool remember_take(rma *r, tci_location loc, int64_t old)
{
    if (r->nheld == (int)(sizeof r->held / sizeof r->held[0]))
        return false;
    r->held[r->nheld].loc = loc;
    r->held[r->nheld].version = (old & VERSION_MASK) >> VERSION_SHIFT;
    r->held[r->nheld].wrote = WROTE_NOTHING;
    r->nheld++;
    return true;
}

/* The entry of held slot LOC, or NULL. */
static held_slot *held_entry(rma *r, tci_location loc)
{
    for (int i = 0; i < r->nheld; i++)
        if (r->held[i].loc.rank == loc.rank && r->held[i].loc.slot == loc.slot)
            return &r->held[i];
    return NULL;
}

/* This holder's unordered writes of LOC's bitmap and counter complete at
 * the owner: a flush, after which any operation is ordered after them.
 * Before a kind of access MPI does not order after what this holder
 * wrote (WROTE_* KIND: the kind it is about to write, or WROTE_NOTHING
 * for plain gets); no path needs the flush today, it keeps the rule. */
static int order_after_own_writes(tci_transport *t, tci_location loc, int kind)
{
    held_slot *e = held_entry(rma_of(t), loc);
    if (!e)
        return MPI_SUCCESS;
    int err = MPI_SUCCESS;
    bool ordered = e->wrote == WROTE_NOTHING ||
                   (e->wrote == WROTE_ACCUMULATES && kind == WROTE_ACCUMULATES);
    if (!ordered) {
        err = flush_counted(t, loc.rank);
        if (err != MPI_SUCCESS)
            return err;            /* not known to be complete: WROTE stays */
        e->wrote = WROTE_NOTHING;
    }
    if (kind != WROTE_NOTHING)
        e->wrote = kind;
    return err;
}

/* The version LOC had when this rank took it (forgotten now), or -1. */
static int64_t forget_take(rma *r, tci_location loc)
{
    held_slot *e = held_entry(r, loc);
    if (!e)
        return -1;
    int64_t version = e->version;
    *e = r->held[--r->nheld];
    return version;
}

/* ---- the slot lock ------------------------------------------------------- */

/* Let MPI progress other ranks' operations on our window while we wait for
 * a slot lock.  MPI promises progress to a process that is blocked in an
 * MPI call or keeps calling a test procedure (MPI_Test*, MPI_Iprobe) that
 * returns false (MPI-3.1 sections 3.7.4 and 11.7.3; MPI-4.1 section 2.9).
 * The swap of the retry loop is neither when the slot is our own: it
 * completes at once, so MPI_Testall returns true and Open MPI 4.1 never
 * enters its progress engine.  The holder's MPI_Win_flush (osc/pt2pt) or
 * release accumulate (osc/ucx with emulated atomics), which need us to
 * progress, then wait forever while we wait for them (doc/design.md).
 * tci_mpi_progress makes such a test call, one that each MPI answers
 * with its whole engine (under Open MPI not MPI_Iprobe, which its pml/ucx
 * turns fully only every 100th time). */
static void let_others_progress(rma *r)
{
    tci_mpi_progress(r->comm);
}

/* Take the slot: swap TCI_STATE_LOCKED into its state word.  If the old word
 * was not LOCKED the slot is ours and the old word is its header; if it
 * was, the swap changed nothing (LOCKED over LOCKED) and we try again.
 * Only MPI_REPLACE ever touches the word, as the window's default
 * accumulate_ops (same_op_no_op) requires, and the swap is on one element,
 * which MPI makes atomic. */
static int rma_take(tci_transport *t, tci_location loc, tci_slot_header *h)
{
    rma *r = rma_of(t);
    static const int64_t locked = TCI_STATE_LOCKED;
    double busy_since = 0;
    for (int tries = 0;; tries++) {
        int64_t old;
        MPI_Request req;
        int err = MPI_Rget_accumulate(&locked, 1, MPI_INT64_T, &old, 1, MPI_INT64_T, loc.rank,
                                      header_disp(r, loc.slot), 1, MPI_INT64_T,
                                      MPI_REPLACE, r->win, &req);
        if (err == MPI_SUCCESS)
            err = wait_yielding(t, loc.rank, 1, &req);
        if (err != MPI_SUCCESS)
            return tci_error_from_mpi(err);
        if (old != TCI_STATE_LOCKED) {
            *h = tci_state_decode(old);
            tci_transport_waited_for_slot(t, tries, busy_since);
            if (remember_take(r, loc, old))
                return TCIO_SUCCESS;
            /* Give the slot back as it was. */
            r->state_out = old;
            err = MPI_Raccumulate(&r->state_out, 1, MPI_INT64_T, loc.rank,
                                  header_disp(r, loc.slot), 1, MPI_INT64_T, MPI_REPLACE,
                                  r->win, &req);
            if (err == MPI_SUCCESS)
                err = wait_yielding(t, loc.rank, 1, &req);
            if (err == MPI_SUCCESS)
                flush_counted(t, loc.rank);
            return tci_error_set(TCIO_ERR_MPI, "internal: this rank holds %d level-2 slots "
                                 "already", r->nheld);
        }
        if (tries == 0) {
            t->busy_takes++;
            busy_since = MPI_Wtime();
        } else {
            tci_collective_check_wait(busy_since, r->comm, -1);
        }
        let_others_progress(r);
        tci_back_off(tries);
    }
}

/* Release the slot, publishing header H in the same atomic write.  When
 * the slot's bitmap or data changed, MPI_Win_flush first makes those
 * updates complete at the owner: operations on different locations are not
 * ordered, and the next holder must not see the slot free before its
 * data.  A second MPI_Win_flush completes the release itself at the owner:
 * a completed MPI_Raccumulate request is only local completion, and in a
 * passive-target epoch MPI may hold the operation at the origin until the
 * origin's next flush or unlock (MPI-3.1 sections 11.5.4, 11.7.3); Open
 * MPI's osc/pt2pt does, so without it two ranks that each released the
 * other's slot and then waited for their own deadlocked.  The release is
 * attempted even if the first flush failed, so that an error here cannot
 * leave the slot locked for everybody. */
static int rma_release(tci_transport *t, tci_location loc, const tci_slot_header *h,
                       bool modified)
{
    rma *r = rma_of(t);
    int flush_err = modified ? flush_counted(t, loc.rank) : MPI_SUCCESS;
    /* The version grows with the header it is published with, in the same
     * atomic write (a changed slot's changes complete first). */
    int64_t version = forget_take(r, loc);
    bool known = version >= 0;
    if (known && modified)
        version = (version + 1) & (VERSION_MASK >> VERSION_SHIFT);
    r->state_out = tci_state_encode(h) | (known ? version << VERSION_SHIFT : 0);
    MPI_Request req;
    int err = MPI_Raccumulate(&r->state_out, 1, MPI_INT64_T, loc.rank,
                              header_disp(r, loc.slot), 1, MPI_INT64_T, MPI_REPLACE,
                              r->win, &req);
    if (err == MPI_SUCCESS)
        err = wait_yielding(t, loc.rank, 1, &req);   /* state_out may be reused after this */
    if (err == MPI_SUCCESS)
        err = flush_counted(t, loc.rank);
    if (!known)
        return tci_error_set(TCIO_ERR_MPI, "internal: a level-2 slot released that this "
                             "rank did not take");
    return tci_error_from_mpi(flush_err != MPI_SUCCESS ? flush_err : err);
}

/* ---- the owner's words --------------------------------------------------- */

static int rma_notices(tci_transport *t, int64_t *count)
{
    rma *r = rma_of(t);
    static const int64_t unused = 0;
    int err = MPI_Fetch_and_op(&unused, count, MPI_INT64_T, t->self, 0, MPI_NO_OP, r->win);
    if (err == MPI_SUCCESS)
        err = MPI_Win_flush(t->self, r->win);   /* local: no wait counted */
    return tci_error_from_mpi(err);
}

static int rma_peek_states(tci_transport *t, int64_t *states)
{
    rma *r = rma_of(t);
    /* One read of every state word (MPI_NO_OP, atomic per word): a
     * snapshot to decide which slots are worth locking. */
    const int words_per_slot = TCI_HEADER_BYTES / 8;
    int count = (int)t->local_slots;
    if (count == 0)
        return TCIO_SUCCESS;
    if (!r->headers && !(r->headers = malloc((size_t)count * sizeof *r->headers)))
        return TCIO_ERR_NO_MEMORY;
    /* Only the state words: a merge may be putting a slot's counter,
     * beside them, and MPI allows concurrent accesses to a location only
     * where all are accumulates (rma_put_range). */
    /* One slot: the word itself, not a vector of one block, which MPICH
     * 4.0.2's active-message path packs wrongly (it asserts
     * "actual_pack_bytes == result_data_sz") once the process holds about
     * 1,000 derived datatypes, as parallel HDF5's collective chunk I/O
     * does (test_mpi many_live_datatypes). */
    int err = MPI_SUCCESS;
    if (count > 1 && !r->state_words_made) {
        err = MPI_Type_vector(count, 1, words_per_slot, MPI_INT64_T, &r->state_words);
        if (err == MPI_SUCCESS)
            err = commit_or_free(&r->state_words);
        r->state_words_made = err == MPI_SUCCESS;
    }
    MPI_Datatype target = count > 1 ? r->state_words : MPI_INT64_T;
    int64_t *words = r->headers;
    if (err == MPI_SUCCESS)
        err = MPI_Get_accumulate(NULL, 0, MPI_INT64_T, words, count, MPI_INT64_T, t->self,
                                 header_disp(r, 0), 1, target, MPI_NO_OP, r->win);
    if (err == MPI_SUCCESS)
        err = MPI_Win_flush(t->self, r->win);   /* local: no wait counted */
    for (int64_t s = 0; err == MPI_SUCCESS && s < count; s++)
        states[s] = without_version(words[s]);
    return tci_error_from_mpi(err);
}

/* One atomic read of LOC's state word, version included (transport.h):
 * MPI_NO_OP, which the window's same_op_no_op accumulate ordering allows
 * beside the swaps and releases (MPI_REPLACE) that write it. */
static int rma_peek(tci_transport *t, tci_location loc, int64_t *state)
{
    rma *r = rma_of(t);
    MPI_Request req;
    int err = MPI_Rget_accumulate(NULL, 0, MPI_INT64_T, state, 1, MPI_INT64_T, loc.rank,
                                  header_disp(r, loc.slot), 1, MPI_INT64_T, MPI_NO_OP,
                                  r->win, &req);
    if (err == MPI_SUCCESS)
        err = wait_yielding(t, loc.rank, 1, &req);
    return tci_error_from_mpi(err);
}

/* Tell the owner of LOC that a segment there may be full. */
static int rma_notify(tci_transport *t, tci_location loc)
{
    rma *r = rma_of(t);
    static const int64_t one = 1;
    MPI_Request req;
    int err = MPI_Raccumulate(&one, 1, MPI_INT64_T, loc.rank, 0, 1, MPI_INT64_T, MPI_SUM,
                              r->win, &req);
    if (err == MPI_SUCCESS)
        err = wait_yielding(t, loc.rank, 1, &req);
    /* As with the release: without a flush the notice may stay at the
     * origin (osc/pt2pt), and the early drain would wait for close. */
    if (err == MPI_SUCCESS)
        err = flush_counted(t, loc.rank);
    return tci_error_from_mpi(err);
}

/* ---- own slots by address (unified memory model) ------------------------- */

static char *rma_memory(tci_transport *t, tci_location loc, unsigned char **bitmap)
{
    rma *r = rma_of(t);
    if (loc.rank != t->self || t->local_slots == 0)
        return NULL;
    if (bitmap)
        *bitmap = (unsigned char *)r->base + bitmap_disp(r, loc.slot);
    return r->base + data_disp(r, loc.slot);
}

static int64_t rma_state_in_memory(tci_transport *t, tci_location loc)
{
    rma *r = rma_of(t);
    return without_version(*(const int64_t *)(r->base + header_disp(r, loc.slot)));
}

static void rma_clear_in_memory(tci_transport *t, tci_location loc)
{
    rma *r = rma_of(t);
    memset(r->base + bitmap_disp(r, loc.slot), 0, (size_t)bitmap_bytes(r));
    *(int64_t *)(r->base + header_disp(r, loc.slot) + TCI_WRITTEN_OFFSET) = 0;
}

static int64_t rma_add_written_in_memory(tci_transport *t, tci_location loc, int64_t delta)
{
    rma *r = rma_of(t);
    int64_t *written = (int64_t *)(r->base + header_disp(r, loc.slot) + TCI_WRITTEN_OFFSET);
    return *written += delta;
}

static int rma_sync(tci_transport *t)
{
    return tci_error_from_mpi(MPI_Win_sync(rma_of(t)->win));
}

/* ---- moves, under the slot lock (get_all also without: rma_peek) -------- */

/* Clear the slot's bitmap and written-byte counter, with accumulates so
 * that later MPI_BOR/MPI_SUM on the same bytes are ordered after them. */
static int rma_reset(tci_transport *t, tci_location loc)
{
    rma *r = rma_of(t);
    static const int64_t zero = 0;
    memset(r->mask, 0, (size_t)bitmap_bytes(r));
    MPI_Request req[2];
    int n = 0;
    int err = order_after_own_writes(t, loc, WROTE_ACCUMULATES);
    if (err == MPI_SUCCESS)
        err = MPI_Raccumulate(r->mask, bitmap_bytes(r), MPI_UNSIGNED_CHAR, loc.rank,
                              bitmap_disp(r, loc.slot), bitmap_bytes(r),
                              MPI_UNSIGNED_CHAR, MPI_REPLACE, r->win, &req[n]);
    if (err == MPI_SUCCESS && ++n)
        err = MPI_Raccumulate(&zero, 1, MPI_INT64_T, loc.rank,
                              header_disp(r, loc.slot) + TCI_WRITTEN_OFFSET, 1,
                              MPI_INT64_T, MPI_REPLACE, r->win, &req[n]);
    if (err == MPI_SUCCESS)
        n++;
    err = finish_started(t, loc.rank, n, req, err);   /* the mask is reused at once */
    /* In its own slot the owner goes on with plain loads and stores
     * (level2.c, merge_in_place), which MPI orders after the accumulates
     * only once they are complete at the target: here, a local flush. */
    if (err == MPI_SUCCESS && loc.rank == t->self)
        err = MPI_Win_flush(t->self, r->win);
    return tci_error_from_mpi(err);
}

/* OR the written extents into the slot's bitmap: one accumulate over the
 * bitmap bytes they span. */
static int mark_written(rma *r, tci_location loc, const tci_extents *e, MPI_Request *req)
{
    int lo = e->disp[0] / 8;
    int hi = (e->disp[e->count - 1] + e->len[e->count - 1] + 7) / 8;
    memset(r->mask + lo, 0, (size_t)(hi - lo));
    for (int i = 0; i < e->count; i++)
        tci_bitmap_set_range(r->mask, e->disp[i], e->disp[i] + e->len[i]);
    return MPI_Raccumulate(r->mask + lo, hi - lo, MPI_UNSIGNED_CHAR, loc.rank,
                           bitmap_disp(r, loc.slot) + lo, hi - lo, MPI_UNSIGNED_CHAR,
                           MPI_BOR, r->win, req);
}

/* The put, the bits and the counter in flight together. */
static int rma_put(tci_transport *t, tci_location loc, const char *buf, const tci_move *m,
                   int64_t *before)
{
    rma *r = rma_of(t);
    const move_type *mt = ctype_of(m);
    MPI_Request req[MAX_REQUESTS];
    int n = 0;
    int err = order_after_own_writes(t, loc, WROTE_ACCUMULATES);
    if (err == MPI_SUCCESS)
        err = MPI_Rput(buf + mt->offset, mt->count, mt->type, loc.rank,
                       data_disp(r, loc.slot) + mt->offset, mt->count, mt->type, r->win,
                       &req[n]);
    if (err == MPI_SUCCESS && ++n)
        err = mark_written(r, loc, m->extents, &req[n]);
    if (err == MPI_SUCCESS && ++n && before) {
        err = MPI_Rget_accumulate(&m->bytes, 1, MPI_INT64_T, before, 1, MPI_INT64_T, loc.rank,
                                  header_disp(r, loc.slot) + TCI_WRITTEN_OFFSET, 1,
                                  MPI_INT64_T, MPI_SUM, r->win, &req[n]);
        if (err == MPI_SUCCESS)
            n++;                  /* counted only once it has started */
    }
    return tci_error_from_mpi(finish_started(t, loc.rank, n, req, err));
}

static int rma_get(tci_transport *t, tci_location loc, char *buf, const tci_move *m)
{
    rma *r = rma_of(t);
    const move_type *mt = ctype_of(m);
    MPI_Request req;
    int err = MPI_Rget(buf + mt->offset, mt->count, mt->type, loc.rank,
                       data_disp(r, loc.slot) + mt->offset, mt->count, mt->type, r->win, &req);
    if (err == MPI_SUCCESS)
        err = wait_yielding(t, loc.rank, 1, &req);
    return tci_error_from_mpi(err);
}

static int rma_get_all(tci_transport *t, tci_location loc, char *data, unsigned char *bitmap)
{
    rma *r = rma_of(t);
    MPI_Request req[2];
    int n = 0;
    int err = order_after_own_writes(t, loc, WROTE_NOTHING);
    if (err == MPI_SUCCESS)
        err = MPI_Rget(bitmap, bitmap_bytes(r), MPI_BYTE, loc.rank, bitmap_disp(r, loc.slot),
                       bitmap_bytes(r), MPI_BYTE, r->win, &req[n]);
    if (err == MPI_SUCCESS && ++n)
        err = MPI_Rget(data, segment_bytes(r), MPI_BYTE, loc.rank, data_disp(r, loc.slot),
                       segment_bytes(r), MPI_BYTE, r->win, &req[n]);
    if (err == MPI_SUCCESS)
        n++;
    return tci_error_from_mpi(finish_started(t, loc.rank, n, req, err));
}

static int rma_get_range(tci_transport *t, tci_location loc, int nranges,
                         const tci_range *range, char *data, unsigned char *bitmap,
                         int64_t *written)
{
    rma *r = rma_of(t);
    MPI_Request req[MAX_REQUESTS];
    int n = 0, err = MPI_SUCCESS;
    held_slot *e = held_entry(r, loc);
    if (bitmap || written)
        err = order_after_own_writes(t, loc, WROTE_NOTHING);
    if (written && err == MPI_SUCCESS) {
        /* The counter.  Under the slot lock (E) the earlier holders' writes
         * of it were flushed before their release and this holder's are
         * ordered above, so a plain get reads it: a transfer, where an
         * MPI_NO_OP accumulate may take a lock at the target
         * (rma_put_range).  Outside the lock, an MPI_NO_OP accumulate, as
         * the state word is peeked. */
        MPI_Aint disp = header_disp(r, loc.slot) + TCI_WRITTEN_OFFSET;
        err = e ? MPI_Rget(written, 1, MPI_INT64_T, loc.rank, disp, 1, MPI_INT64_T, r->win,
                           &req[n])
                : MPI_Rget_accumulate(NULL, 0, MPI_INT64_T, written, 1, MPI_INT64_T, loc.rank,
                                      disp, 1, MPI_INT64_T, MPI_NO_OP, r->win, &req[n]);
        if (err == MPI_SUCCESS)
            n++;
    }
    for (int i = 0; i < nranges && err == MPI_SUCCESS; i++) {
        int lo = range[i].lo, hi = range[i].hi;
        if (bitmap) {
            int first = lo / 64 * 8, end = (hi + 63) / 64 * 8;
            err = MPI_Rget(bitmap + first, end - first, MPI_BYTE, loc.rank,
                           bitmap_disp(r, loc.slot) + first, end - first, MPI_BYTE, r->win,
                           &req[n]);
            if (err == MPI_SUCCESS)
                n++;
        }
        if (err == MPI_SUCCESS)
            err = MPI_Rget(data + lo, hi - lo, MPI_BYTE, loc.rank, data_disp(r, loc.slot) + lo,
                           hi - lo, MPI_BYTE, r->win, &req[n]);
        if (err == MPI_SUCCESS)
            n++;
    }
    return tci_error_from_mpi(finish_started(t, loc.rank, n, req, err));
}

/* rma keeps no loaded span: its slots are loaded whole (transport.h). */
static int64_t *rma_loaded_span(tci_transport *t, tci_location loc)
{
    (void)t;
    (void)loc;
    return NULL;
}

static int rma_put_range(tci_transport *t, tci_location loc, int nranges,
                         const tci_range *range, const char *data, const unsigned char *bitmap,
                         const int64_t *written)
{
    rma *r = rma_of(t);
    MPI_Request req[MAX_REQUESTS];
    int n = 0, err = MPI_SUCCESS;
    /* The bitmap's words and the counter go back with plain puts: under
     * the slot lock nobody else writes them, and the release flushes them
     * before the next holder can take the lock, so mixing puts with the
     * other holders' accumulates (MPI_BOR, MPI_SUM, MPI_REPLACE) is not
     * concurrent, which is all MPI asks.  Puts cost one transfer where
     * some MPI libraries make an accumulate take a lock of their own and
     * flush (Open MPI 4.1's osc/ucx and osc/rdma).  Only after this
     * holder's own unflushed accumulates on them (a claim's rma_reset)
     * are they accumulates too, ordered after those. */
    held_slot *e = held_entry(r, loc);
    bool puts = e && e->wrote != WROTE_ACCUMULATES;
    if (puts && (bitmap || written))
        err = order_after_own_writes(t, loc, WROTE_PUTS);   /* MPI orders no two puts */
    for (int i = 0; i < nranges && err == MPI_SUCCESS; i++) {
        int lo = range[i].lo, hi = range[i].hi;
        err = MPI_Rput(data + lo, hi - lo, MPI_BYTE, loc.rank, data_disp(r, loc.slot) + lo,
                       hi - lo, MPI_BYTE, r->win, &req[n]);
        if (err == MPI_SUCCESS && ++n && bitmap) {
            int first = lo / 64 * 8, end = (hi + 63) / 64 * 8;
            MPI_Aint disp = bitmap_disp(r, loc.slot) + first;
            err = puts ? MPI_Rput(bitmap + first, end - first, MPI_UNSIGNED_CHAR, loc.rank, disp,
                                  end - first, MPI_UNSIGNED_CHAR, r->win, &req[n])
                       : MPI_Raccumulate(bitmap + first, end - first, MPI_UNSIGNED_CHAR,
                                         loc.rank, disp, end - first, MPI_UNSIGNED_CHAR,
                                         MPI_REPLACE, r->win, &req[n]);
            if (err == MPI_SUCCESS)
                n++;
        }
    }
    if (err == MPI_SUCCESS && written) {
        MPI_Aint disp = header_disp(r, loc.slot) + TCI_WRITTEN_OFFSET;
        err = puts ? MPI_Rput(written, 1, MPI_INT64_T, loc.rank, disp, 1, MPI_INT64_T, r->win,
                              &req[n])
                   : MPI_Raccumulate(written, 1, MPI_INT64_T, loc.rank, disp, 1, MPI_INT64_T,
                                     MPI_REPLACE, r->win, &req[n]);
        if (err == MPI_SUCCESS)
            n++;
    }
    return tci_error_from_mpi(finish_started(t, loc.rank, n, req, err));
}

/* ---- keeping the window for the next file -------------------------------- */

/* Zero is the empty state, as after rma_open.  A slot whose state word is
 * zero has a zero counter and bitmap too (never claimed, or emptied by a
 * drain or a truncation, which clear them; its version may have come
 * round to zero): only the other slots are cleared.  The next open's first
 * agreement orders this before any access of the next file. */
static void rma_empty(tci_transport *t)
{
    rma *r = rma_of(t);
    if (r->win == MPI_WIN_NULL || t->local_slots == 0)
        return;
    memset(r->base, 0, TCI_NOTICE_BYTES);
    for (int64_t s = 0; s < t->local_slots; s++) {
        char *header = r->base + header_disp(r, s);
        if (*(const int64_t *)header == 0)
            continue;
        memset(header, 0, TCI_HEADER_BYTES);
        memset(r->base + bitmap_disp(r, s), 0, (size_t)bitmap_bytes(r));
    }
    MPI_Win_sync(r->win);
}

static void rma_rebind(tci_transport *t, const tci_segmap *map)
{
    rma_of(t)->map = map;
    rma_of(t)->others_since_flush = false;   /* the last file's flushes are done */
}

/* ---- does the target's progress matter? ---------------------------------- */

/* How long the probe's target stays out of MPI waiting for the prober's
 * operations: long enough for a prober that shares a core with others to
 * get it (they wait yielding) and issue a few operations that need
 * nobody, microseconds each. */
#define PROBE_WAIT 0.005

/* The most of a segment the probe puts: the size of a forward's bulk
 * (a component may move large puts another way than small ones). */
#define PROBE_BULK (1 << 20)

/* Bytes of the target's notice block past the notice word, which nothing
 * else uses: the probe's operations touch only them and the data of the
 * target's first slot, which no move reaches before every rank has left
 * the probe's reductions (slot.h).  PROBE_PUT's vector covers bytes 32-35
 * and 40-43, PROBE_GET 36-39. */
enum { PROBE_WORD = 8, PROBE_SUM = 16, PROBE_BYTES = 24, PROBE_PUT = 32, PROBE_GET = 36,
       PROBE_READY = 48, PROBE_FLAG = 56 };
_Static_assert(PROBE_FLAG + 8 <= TCI_NOTICE_BYTES, "the probe's bytes are the notice block's");

static double monotonic_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

/* The target's side, outside MPI (not even MPI_Wtime): whether the word
 * at FLAG became VALUE within SECONDS.  The window's unified memory model
 * makes a completed put visible to loads without RMA calls, and an
 * aligned 8-byte load does not tear. */
static bool flag_rises(const int64_t *flag, int64_t value, double seconds)
{
    const volatile int64_t *word = flag;
    const struct timespec step = { .tv_sec = 0, .tv_nsec = 50000L };
    double end = monotonic_seconds() + seconds;
    while (*word != value) {
        if (monotonic_seconds() >= end)
            return *word == value;
        nanosleep(&step, NULL);
    }
    return true;
}

/* The prober's side, before its operations: wait (atomic reads of the
 * target's ready word) until the target said VALUE there, which it does
 * only once out of MPI.  A read that needs the target's progress waits
 * until the target is back in MPI, and the flag then comes too late. */
static int wait_until_ready(rma *r, int target, int64_t value)
{
    int64_t ready = 0;
    for (int polls = 0;; polls++) {
        MPI_Request req;
        int err = MPI_Rget_accumulate(NULL, 0, MPI_INT64_T, &ready, 1, MPI_INT64_T, target,
                                      PROBE_READY, 1, MPI_INT64_T, MPI_NO_OP, r->win, &req);
        if (err == MPI_SUCCESS)
            err = MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS || ready == value)
            return err;
        tci_back_off(polls);
    }
}

#define PROBE_OPS 10
#define PROBE_OP(call)                                                        \
    do {                                                                      \
        if (err == MPI_SUCCESS && (err = (call)) == MPI_SUCCESS)              \
            n++;                                                              \
    } while (0)

/* The prober's operations: the forms the moves use on an aggregator's
 * window, request-based as theirs: a swap and an atomic read of a word
 * (take, peek), a fetching and a plain add and a replace of a word
 * (counter, notice), an OR and a replace of bytes (bitmaps), a contiguous
 * get, a put to a non-contiguous target (extent moves) and a segment's
 * worth of bytes (a forward's bulk: a component may move large puts
 * another way), completed and flushed.  MPI_SUCCESS or the first error. */
static int probe_operations(rma *r, int target, MPI_Datatype two_words,
                            const unsigned char *bulk_zeros, int bulk)
{
    static const int64_t zero = 0;
    static const unsigned char zeros[8] = { 0 };
    int64_t fetched[3] = { 0 };
    int32_t got = 0;
    MPI_Request req[PROBE_OPS];
    int n = 0, err = MPI_SUCCESS;
    PROBE_OP(MPI_Rget_accumulate(&zero, 1, MPI_INT64_T, &fetched[0], 1, MPI_INT64_T, target,
                                 PROBE_WORD, 1, MPI_INT64_T, MPI_REPLACE, r->win, &req[n]));
    PROBE_OP(MPI_Rget_accumulate(NULL, 0, MPI_INT64_T, &fetched[1], 1, MPI_INT64_T, target,
                                 PROBE_WORD, 1, MPI_INT64_T, MPI_NO_OP, r->win, &req[n]));
    PROBE_OP(MPI_Rget_accumulate(&zero, 1, MPI_INT64_T, &fetched[2], 1, MPI_INT64_T, target,
                                 PROBE_SUM, 1, MPI_INT64_T, MPI_SUM, r->win, &req[n]));
    PROBE_OP(MPI_Raccumulate(&zero, 1, MPI_INT64_T, target, PROBE_SUM, 1, MPI_INT64_T, MPI_SUM,
                             r->win, &req[n]));
    PROBE_OP(MPI_Raccumulate(&zero, 1, MPI_INT64_T, target, PROBE_SUM, 1, MPI_INT64_T,
                             MPI_REPLACE, r->win, &req[n]));
    PROBE_OP(MPI_Raccumulate(zeros, 8, MPI_UNSIGNED_CHAR, target, PROBE_BYTES, 8,
                             MPI_UNSIGNED_CHAR, MPI_BOR, r->win, &req[n]));
    PROBE_OP(MPI_Raccumulate(zeros, 8, MPI_UNSIGNED_CHAR, target, PROBE_BYTES, 8,
                             MPI_UNSIGNED_CHAR, MPI_REPLACE, r->win, &req[n]));
    PROBE_OP(MPI_Rget(&got, 4, MPI_BYTE, target, PROBE_GET, 4, MPI_BYTE, r->win, &req[n]));
    PROBE_OP(MPI_Rput(zeros, 8, MPI_BYTE, target, PROBE_PUT, 1, two_words, r->win, &req[n]));
    PROBE_OP(MPI_Rput(bulk_zeros, bulk, MPI_BYTE, target, data_disp(r, 0), bulk, MPI_BYTE,
                      r->win, &req[n]));
    MPI_Status statuses[PROBE_OPS];   /* not MPI_STATUSES_IGNORE: see wait_yielding */
    int wait_err = n > 0 ? MPI_Waitall(n, req, statuses) : MPI_SUCCESS;
    int flush_err = MPI_Win_flush(target, r->win);   /* after a failure too */
    return err != MPI_SUCCESS ? err : wait_err != MPI_SUCCESS ? wait_err : flush_err;
}
#undef PROBE_OP

/* The prober's whole turn, told by the target's one int whether to take
 * it (received yielding, as the library's collective steps wait): wait
 * for the ready word, operate, then put the flag (VALUE) and flush: it
 * reaches the target only after all of the operations completed there.
 * Whether an MPI call failed. */
static bool prober_turn(rma *r, int target, int64_t value)
{
    int go = 0;
    MPI_Request req = MPI_REQUEST_NULL;
    int err = MPI_Irecv(&go, 1, MPI_INT, target, TCI_TAG_PROBE, r->comm, &req);
    if (err == MPI_SUCCESS)
        err = tci_collective_wait(&req);
    if (err != MPI_SUCCESS || !go)
        return err != MPI_SUCCESS;
    int bulk = r->map->segment_size < PROBE_BULK ? (int)r->map->segment_size : PROBE_BULK;
    unsigned char *bulk_zeros = calloc((size_t)bulk, 1);
    MPI_Datatype two_words = MPI_DATATYPE_NULL;
    if (!bulk_zeros || MPI_Type_vector(2, 4, 8, MPI_BYTE, &two_words) != MPI_SUCCESS ||
        MPI_Type_commit(&two_words) != MPI_SUCCESS) {
        if (two_words != MPI_DATATYPE_NULL)
            MPI_Type_free(&two_words);
        free(bulk_zeros);
        return false;           /* no flag: "needed", the behaviour without a probe */
    }
    tci_pages_populate(bulk_zeros, (size_t)bulk);
    err = wait_until_ready(r, target, value);
    if (err == MPI_SUCCESS)
        err = probe_operations(r, target, two_words, bulk_zeros, bulk);
    if (err == MPI_SUCCESS)
        err = MPI_Put(&value, 1, MPI_INT64_T, target, PROBE_FLAG, 1, MPI_INT64_T, r->win);
    if (err == MPI_SUCCESS)
        err = MPI_Win_flush(target, r->win);
    MPI_Type_free(&two_words);
    free(bulk_zeros);
    return err != MPI_SUCCESS;
}

/* The target's turn: tell the prober to take its turn, then say VALUE in
 * the ready word (out of MPI from here on) and wait for the flag.
 * Whether the flag rose, i.e. nobody needed this rank's progress; false
 * also if the send failed. */
static bool target_turn(rma *r, int prober, int64_t value)
{
    int go = 1;
    if (MPI_Send(&go, 1, MPI_INT, prober, TCI_TAG_PROBE, r->comm) != MPI_SUCCESS)
        return false;
    volatile int64_t *ready = (volatile int64_t *)(void *)(r->base + PROBE_READY);
    *ready = value;
    return flag_rises((const int64_t *)(const void *)(r->base + PROBE_FLAG), value,
                      PROBE_WAIT);
}

/* See tci_transport_ops.probe_progress.  Each (target, prober) pair takes
 * a turn; the pairs' values 1 and 2 tell their ready words and flags
 * apart, so nothing is reset between them.  The target sends one int
 * (eager under every MPI; a send that waited for its match would wait only
 * until the prober, which leaves the same agreement, posts its receive),
 * leaves MPI, says so in its ready word and waits, up to PROBE_WAIT, for
 * the flag.  The prober starts its operations only once it read the ready
 * word, so all of them and the flag complete, if they do, while the target
 * makes no MPI call; only the target's progress engine serves its window.
 * So a risen flag means nobody needed the target.  A prober that the
 * scheduler kept from running, or operations slower than the wait, give
 * "needed", the behaviour without a probe.  A reduction after each turn
 * (maximum of "needed" and of the MPI failures) gives every rank the
 * verdict, stops the turns at the first "needed", and lets no rank move
 * before the prober's operations completed: none lands in a first slot
 * after a move.  A rank whose send or receive of the one int fails leaves
 * the others waiting, as a rank that skips a collective does
 * (TCIO_COLLECTIVE_TIMEOUT, lib/collective.c). */
static int rma_probe_progress(tci_transport *t, const int target[2], const int prober[2])
{
    rma *r = rma_of(t);
    t->needs_progress = false;
    for (int i = 0; i < 2; i++) {
        if (prober[i] < 0)
            continue;
        int64_t value = i + 1;
        int mine[2] = { 0, 0 }, all[2] = { 1, 1 };   /* needed, failed */
        if (t->self == target[i])
            mine[0] = !target_turn(r, prober[i], value);
        else if (t->self == prober[i])
            mine[1] = prober_turn(r, target[i], value);
        MPI_Request req = MPI_REQUEST_NULL;
        int err = MPI_Iallreduce(mine, all, 2, MPI_INT, MPI_MAX, r->comm, &req);
        if (err == MPI_SUCCESS)
            err = tci_collective_wait(&req);      /* yielding: a prober gets the core */
        if (err != MPI_SUCCESS || all[1]) {
            t->needs_progress = true;
            return err != MPI_SUCCESS ? tci_error_from_mpi(err)
                   : tci_error_set(TCIO_ERR_MPI, "a one-sided operation of the probe of "
                                   "rank %d's progress by rank %d failed", target[i],
                                   prober[i]);
        }
        if (all[0]) {
            t->needs_progress = true;
            return TCIO_SUCCESS;
        }
    }
    return TCIO_SUCCESS;
}

const tci_transport_ops tci_transport_rma = {
    .name = "rma",
    .needs_progress = true,
    .notices_by_mpi = true,
    .memory_bytes = rma_memory_bytes,
    .open = rma_open,
    .close = rma_close,
    .take = rma_take,
    .release = rma_release,
    .reset = rma_reset,
    .describe = rma_describe,
    .forget = rma_forget,
    .put = rma_put,
    .get = rma_get,
    .get_all = rma_get_all,
    .put_range = rma_put_range,
    .get_range = rma_get_range,
    .loaded_span = rma_loaded_span,
    .notify = rma_notify,
    .peek = rma_peek,
    .peek_window = PEEK_WINDOW,
    .memory = rma_memory,
    .state_in_memory = rma_state_in_memory,
    .clear_in_memory = rma_clear_in_memory,
    .add_written_in_memory = rma_add_written_in_memory,
    .sync = rma_sync,
    .notices = rma_notices,
    .peek_states = rma_peek_states,
    .complete_all = rma_complete_all,
    .empty = rma_empty,
    .rebind = rma_rebind,
    .probe_progress = rma_probe_progress,
};
