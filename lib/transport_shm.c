/* transport_shm.c - the shm transport: level 2 in one POSIX shared-memory
 * segment of the node, mapped by every rank, every slot reached by address,
 * moves as plain copies and the slot's words as C11 atomics.
 *
 * Open asks for it only when every rank of the file's communicator shares
 * one node (open.c checks at open, before the file is created).  The
 * segment is libtcio's own (shm_open, ftruncate, mmap), not an
 * MPI_Win_allocate_shared window: MPICH 4.0.2 makes every new shared window
 * look for a free address range with one msync per page, 0.1 s for 32 MiB
 * on the development machine, while the segment costs a few system calls
 * and two agreements (doc/design.md, "The shm transport").  Each
 * aggregator's part is page-aligned, in the order of the segment map's
 * aggregators.
 *
 * The layout of every aggregator's part is rma's (transport_rma.c):
 *   [notice word: 64 B][headers: nslots x 32 B][bitmaps: nslots x bitmap_bytes]
 *   [data: nslots x segment]
 * The state word, the written-byte counter, the notice word and the bitmap
 * words are only ever accessed with CPU atomics (<stdatomic.h>), never with
 * MPI atomics.  The exclusive slot lock is a compare-and-swap of
 * TCI_STATE_LOCKED into a state word without sharers, with acquire
 * ordering; an atomic store of the new header with release ordering frees
 * it.  Movers of the segment a slot holds may instead share it (writers
 * together, or readers of a loaded segment together): a compare-and-swap
 * adds them to the sharer count in the state word (acquire) and another
 * removes them, OR-ing the flags they earned (release); an exclusive taker
 * that finds sharers sets TCI_STATE_WAITING, which keeps new sharers out
 * until it has had the slot.  Every plain load and store of a slot's data
 * happens under its exclusive lock or by a sharer, and the releases and
 * acquires on the state word order them (C11 5.1.2.4: a release
 * synchronizes with the acquire that reads it or a later read-modify-write
 * of its release sequence; lock-free atomics are address-free, C11 7.17.5,
 * so this holds between processes that map the same memory).  Bits are
 * ORed with atomic_fetch_or on whole 64-bit words and the counter grows
 * with atomic_fetch_add, both relaxed, so that sharers can update them at
 * once.  The notice word, which movers add to without the
 * owner's slot lock, is added to with release and read with acquire.
 *
 * A full fence (atomic_thread_fence, seq_cst) comes where data passes from
 * one rank to another through an MPI synchronisation rather than through a
 * slot's state word: after empty zeroes the slots (the next open's
 * agreement follows) and in complete_all (the close barrier follows).  A
 * new segment is zero (ftruncate), which is the empty state.  A move makes
 * no MPI call at all, and waits for no other rank's progress: the holder
 * of a slot lock copies and stores without help, so a waiter only yields
 * and sleeps.  (As a node's combining tier, lib/combiner.c, a holder may
 * forward the slot's segment with MPI one-sided operations, and a waiter
 * then turns its MPI progress engine too: tci_transport_wait_progress.) */
#define _POSIX_C_SOURCE 200809L   /* shm_open, ftruncate */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "transport.h"
#include "collective.h"
#include "error.h"
#include "pages.h"
#include "maskcopy.h"
#include "node_segment.h"


/* Atomics shared between processes must be lock-free (a lock-based
 * emulation's lock would be private to each process). */
#if ATOMIC_LLONG_LOCK_FREE != 2 && ATOMIC_LONG_LOCK_FREE != 2
#error "the shm transport needs lock-free 64-bit atomics"
#endif

typedef _Atomic int64_t  atomic_word;
typedef _Atomic uint64_t atomic_bits;

typedef struct shm {
    char    *segment;          /* the node's level 2, mapped here (NULL: none) */
    size_t   segment_bytes;
    char   **base;             /* every rank's part of it (NULL: no slots) */
    int      nranks;
    const tci_segmap *map;     /* the geometry, owned by the segment map */
    unsigned char *mapped;     /* one bit per slot of the node (rank x
                                  nslots): this process mapped its pages */
} shm;

_Static_assert(sizeof(shm) <= sizeof(((tci_transport *)0)->impl),
               "tci_transport.impl must hold the shm state");

static inline shm *shm_of(tci_transport *t) { return (shm *)t->impl; }

static inline int segment_bytes(const shm *s) { return (int)s->map->segment_size; }
static inline int bitmap_bytes(const shm *s) { return tci_bitmap_bytes(s->map->segment_size); }

static inline size_t header_off(int64_t slot) { return (size_t)tci_layout_header(slot); }
static inline size_t bitmap_off(const shm *s, int64_t slot)
{
    return (size_t)tci_layout_bitmap(s->map->nslots, s->map->segment_size, slot);
}
static inline size_t data_off(const shm *s, int64_t slot)
{
    return (size_t)tci_layout_data(s->map->nslots, s->map->segment_size, slot);
}

static inline atomic_word *state_word(shm *s, tci_location loc)
{
    return (atomic_word *)(s->base[loc.rank] + header_off(loc.slot));
}
static inline atomic_word *written_word(shm *s, tci_location loc)
{
    return (atomic_word *)(s->base[loc.rank] + header_off(loc.slot) + TCI_WRITTEN_OFFSET);
}
/* Plain: only the holder of the exclusive lock touches it (slot.h). */
static inline int64_t *span_word(shm *s, tci_location loc)
{
    return (int64_t *)(s->base[loc.rank] + header_off(loc.slot) + TCI_SPAN_OFFSET);
}
static inline atomic_word *notice_word(shm *s, int rank)
{
    return (atomic_word *)s->base[rank];
}
static inline atomic_bits *bitmap_words(shm *s, tci_location loc)
{
    return (atomic_bits *)(s->base[loc.rank] + bitmap_off(s, loc.slot));
}
static inline char *slot_data(shm *s, tci_location loc)
{
    return s->base[loc.rank] + data_off(s, loc.slot);
}

/* Before this process's first access to slot LOC's bitmap or data: map
 * their pages in two calls instead of a fault per page (pages.h).  Every
 * mover of an interleaved pattern touches every page of the slots it
 * moves into, so this maps nothing that the moves would not fault in;
 * the bit makes it once per slot and process, for the life of the window
 * (a window kept for the next file stays mapped). */
static void map_slot(shm *s, tci_location loc)
{
    size_t bit = (size_t)loc.rank * (size_t)s->map->nslots + (size_t)loc.slot;
    unsigned char flag = (unsigned char)(1u << (bit % 8));
    if (s->mapped[bit / 8] & flag)
        return;
    s->mapped[bit / 8] |= flag;
    tci_pages_populate(s->base[loc.rank] + bitmap_off(s, loc.slot), (size_t)bitmap_bytes(s));
    tci_pages_populate(slot_data(s, loc), (size_t)segment_bytes(s));
}

/* ---- the window ---------------------------------------------------------- */

static int64_t shm_memory_bytes(int64_t nslots, int64_t segment_size)
{
    return tci_layout_bytes(nslots, segment_size);
}

/* One aggregator's part of the segment: its layout, page-aligned. */
static size_t part_bytes(const tci_segmap *map)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t unit = page > 0 ? (size_t)page : 4096;
    size_t bytes = (size_t)shm_memory_bytes(map->nslots, map->segment_size);
    return (bytes + unit - 1) / unit * unit;
}

/* Every rank's part, by address: the aggregators' parts in the map's
 * order. */
static int find_bases(shm *s, const tci_segmap *map)
{
    s->base = calloc((size_t)s->nranks, sizeof *s->base);
    if (!s->base)
        return TCIO_ERR_NO_MEMORY;
    size_t part = part_bytes(map);
    for (int i = 0; i < map->naggregators; i++)
        s->base[map->aggregator_rank[i]] = s->segment + (size_t)i * part;
    return TCIO_SUCCESS;
}

/* Collective: the node's segment (node_segment.h), every aggregator's part
 * in it. */
static int open_level2(tci_transport *t, MPI_Comm comm, const tci_segmap *map, bool owner)
{
    (void)owner;                 /* the parts are the aggregators' of MAP */
    shm *s = shm_of(t);          /* zeroed by tci_transport_open */
    s->map = map;
    MPI_Comm_size(comm, &s->nranks);
    s->segment_bytes = part_bytes(map) * (size_t)map->naggregators;
    int rc = tci_node_segment_open(comm, t->self, s->segment_bytes,
                                   "the shm transport's level 2", &s->segment);
    if (rc != TCIO_SUCCESS)
        return rc;
    rc = find_bases(s, map);
    if (rc != TCIO_SUCCESS)
        return rc;
    s->mapped = calloc(((size_t)s->nranks * (size_t)map->nslots + 7) / 8, 1);
    return s->mapped ? TCIO_SUCCESS : TCIO_ERR_NO_MEMORY;
}

static void close_level2(tci_transport *t)
{
    shm *s = shm_of(t);
    tci_node_segment_close(s->segment, s->segment_bytes);
    s->segment = NULL;
    free(s->base);
    s->base = NULL;
    free(s->mapped);
    s->mapped = NULL;
}

/* Nothing is ever outstanding: every access completed when its call
 * returned.  The caller's barrier follows; a full fence on both sides of
 * it (the close drain does its own) orders our stores before the other
 * ranks' accesses after it. */
static int shm_complete_all(tci_transport *t)
{
    (void)t;
    atomic_thread_fence(memory_order_seq_cst);
    return TCIO_SUCCESS;
}

/* ---- the slot lock -------------------------------------------------------- */

/* Exclusive take.  A free word (not LOCKED, no sharer) is swapped for
 * LOCKED with a compare-and-swap (acquire): its old value is the header of
 * the slot now ours.  While sharers hold the slot, the taker sets
 * TCI_STATE_WAITING, which keeps new sharers out, and waits for the count
 * to drop to zero: a stream of sharers cannot starve it.  A relaxed look
 * first keeps waiters from bouncing the cache line while the holder works. */
static int shm_take(tci_transport *t, tci_location loc, tci_slot_header *h)
{
    atomic_word *state = state_word(shm_of(t), loc);
    double busy_since = 0;
    for (int tries = 0;; tries++) {
        int64_t old = atomic_load_explicit(state, memory_order_relaxed);
        if (old != TCI_STATE_LOCKED && tci_state_sharers(old) == 0) {
            if (atomic_compare_exchange_strong_explicit(state, &old, TCI_STATE_LOCKED,
                                                        memory_order_acquire,
                                                        memory_order_relaxed)) {
                *h = tci_state_decode(old);
                tci_transport_waited_for_slot(t, tries, busy_since);
                return TCIO_SUCCESS;
            }
        } else if (old != TCI_STATE_LOCKED && !(old & TCI_STATE_WAITING)) {
            /* May fail if the word changed; the next round looks again. */
            atomic_compare_exchange_strong_explicit(state, &old, old | TCI_STATE_WAITING,
                                                    memory_order_relaxed,
                                                    memory_order_relaxed);
        }
        if (tries == 0) {
            t->busy_takes++;
            busy_since = MPI_Wtime();
        } else {
            tci_collective_check_wait(busy_since, MPI_COMM_NULL, -1);
        }
        /* The holder and the sharers need nobody's progress to finish
         * their moves and leave, except a combining tier's forwarder
         * (progress_comm set), whose puts may need ours. */
        tci_transport_wait_progress(t, tries);
        tci_back_off(tries);
    }
}

/* Publish H and unlock in one store; its release ordering makes every
 * store of the holder (data, bits, counter) visible to the next holder.
 * No sharer can exist while the word is LOCKED, so the new word has none,
 * and no WAITING bit: waiting exclusive takers compete for it again. */
static int shm_release(tci_transport *t, tci_location loc, const tci_slot_header *h,
                       bool modified)
{
    (void)modified;
    atomic_store_explicit(state_word(shm_of(t), loc), tci_state_encode(h), memory_order_release);
    return TCIO_SUCCESS;
}

/* Whether a mover of SEGMENT (READING or writing) may join the sharers of
 * a slot whose unlocked word is OLD. */
static bool may_share(int64_t old, int64_t segment, bool reading)
{
    tci_slot_header h = tci_state_decode(old);
    if (h.segment != segment || (reading && !(h.flags & TCI_SLOT_LOADED)))
        return false;
    int64_t n = tci_state_sharers(old);
    if (n == TCI_MAX_SHARERS)
        return false;
    return n == 0 || ((old & TCI_STATE_READERS) != 0) == reading;
}

/* Shared take: one compare-and-swap adds this mover to the sharer count
 * (acquire: it synchronizes with the release of the last exclusive holder,
 * and through the release sequence of the count's read-modify-writes with
 * every earlier sharer's release).  A locked slot, or one an exclusive taker
 * waits for, is waited for: its holder does bounded work and releases, the
 * waiting taker gets the slot once the present sharers leave. */
static int shm_take_shared(tci_transport *t, tci_location loc, int64_t segment, bool reading,
                           tci_slot_header *h, bool *shared)
{
    atomic_word *state = state_word(shm_of(t), loc);
    int64_t old = atomic_load_explicit(state, memory_order_relaxed);
    double busy_since = 0;
    for (int tries = 0;;) {
        if (old == TCI_STATE_LOCKED || (old & TCI_STATE_WAITING)) {
            if (tries == 0) {
                t->busy_takes++;
                busy_since = MPI_Wtime();
            } else {
                tci_collective_check_wait(busy_since, MPI_COMM_NULL, -1);
            }
            tci_transport_wait_progress(t, tries);
            tci_back_off(tries++);
            old = atomic_load_explicit(state, memory_order_relaxed);
            continue;
        }
        if (!may_share(old, segment, reading)) {
            *shared = false;
            tci_transport_waited_for_slot(t, tries, busy_since);
            return TCIO_SUCCESS;
        }
        int64_t joined = (old + TCI_ONE_SHARER) | (reading ? TCI_STATE_READERS : 0);
        /* On failure OLD is reloaded: another sharer came or went, or an
         * exclusive taker arrived; decide again at once. */
        if (atomic_compare_exchange_weak_explicit(state, &old, joined, memory_order_acquire,
                                                  memory_order_relaxed)) {
            *h = tci_state_decode(old);
            *shared = true;
            tci_transport_waited_for_slot(t, tries, busy_since);
            return TCIO_SUCCESS;
        }
    }
}

/* Leave the sharers, ORing FLAGS into the header in the same
 * read-modify-write (release: this sharer's copies, bits and counter
 * happen before the exclusive taker's acquire that sees the count drop).
 * The last sharer to leave clears TCI_STATE_READERS. */
static int shm_release_shared(tci_transport *t, tci_location loc, int64_t flags)
{
    atomic_word *state = state_word(shm_of(t), loc);
    int64_t old = atomic_load_explicit(state, memory_order_relaxed), left;
    do {
        left = (old - TCI_ONE_SHARER) | flags;
        if (tci_state_sharers(left) == 0)
            left &= ~TCI_STATE_READERS;
    } while (!atomic_compare_exchange_weak_explicit(state, &old, left, memory_order_release,
                                                    memory_order_relaxed));
    return TCIO_SUCCESS;
}

/* ---- the owner's words --------------------------------------------------- */

static int shm_notices(tci_transport *t, int64_t *count)
{
    *count = atomic_load_explicit(notice_word(shm_of(t), t->self), memory_order_acquire);
    return TCIO_SUCCESS;
}

static int shm_peek_states(tci_transport *t, int64_t *states)
{
    shm *s = shm_of(t);
    for (int64_t slot = 0; slot < t->local_slots; slot++)
        states[slot] = atomic_load_explicit(state_word(s, (tci_location){ t->self, slot }),
                                            memory_order_acquire);
    return TCIO_SUCCESS;
}

static int shm_notify(tci_transport *t, tci_location loc)
{
    atomic_fetch_add_explicit(notice_word(shm_of(t), loc.rank), 1, memory_order_release);
    return TCIO_SUCCESS;
}

/* ---- slots by address ----------------------------------------------------- */

static char *shm_memory(tci_transport *t, tci_location loc, unsigned char **bitmap)
{
    shm *s = shm_of(t);
    if (loc.rank < 0 || loc.rank >= s->nranks || !s->base[loc.rank])
        return NULL;
    map_slot(s, loc);
    if (bitmap)
        *bitmap = (unsigned char *)bitmap_words(s, loc);
    return slot_data(s, loc);
}

static int64_t shm_state_in_memory(tci_transport *t, tci_location loc)
{
    return atomic_load_explicit(state_word(shm_of(t), loc), memory_order_acquire);
}

/* Under the lock: a clear bitmap, a zero counter and no loaded span. */
static void clear_slot(shm *s, tci_location loc)
{
    map_slot(s, loc);
    atomic_bits *bits = bitmap_words(s, loc);
    size_t words = (size_t)bitmap_bytes(s) / sizeof(uint64_t);
    for (size_t i = 0; i < words; i++)
        atomic_store_explicit(&bits[i], 0, memory_order_relaxed);
    atomic_store_explicit(written_word(s, loc), 0, memory_order_relaxed);
    *span_word(s, loc) = 0;
}

static int64_t *shm_loaded_span(tci_transport *t, tci_location loc)
{
    shm *s = shm_of(t);
    return loc.rank >= 0 && loc.rank < s->nranks && s->base[loc.rank] ? span_word(s, loc) : NULL;
}

static void shm_clear_in_memory(tci_transport *t, tci_location loc)
{
    clear_slot(shm_of(t), loc);
}

static int64_t shm_add_written_in_memory(tci_transport *t, tci_location loc, int64_t delta)
{
    return atomic_fetch_add_explicit(written_word(shm_of(t), loc), delta,
                                     memory_order_relaxed) + delta;
}

/* Plain loads and stores of slots are ordered by the slot locks' acquire
 * and release; this fence only adds a full barrier, and no MPI call, as it
 * runs on the path of a load (level2.c). */
static int shm_sync(tci_transport *t)
{
    (void)t;
    atomic_thread_fence(memory_order_seq_cst);
    return TCIO_SUCCESS;
}

static int shm_reset(tci_transport *t, tci_location loc)
{
    clear_slot(shm_of(t), loc);
    return TCIO_SUCCESS;
}

/* ---- moves, under the exclusive lock or shared: the level-1 bitmap, a
 * 64-byte block per word (maskcopy.c) --------------------------------- */

/* The in-memory form of bitmap word VALUE (bit i: byte i of its block),
 * as slot.h's byte numbering lays it out. */
static inline uint64_t bitmap_memory_word(uint64_t value)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap64(value);
#else
    return value;
#endif
}

static int shm_put(tci_transport *t, tci_location loc, const char *buf, const tci_move *m,
                   int64_t *before)
{
    shm *s = shm_of(t);
    map_slot(s, loc);
    tci_copy_masked(slot_data(s, loc), buf, m->marked, m->marked_lo, m->marked_hi);
    atomic_bits *bits = bitmap_words(s, loc);
    for (int w = m->marked_lo; w < m->marked_hi; w++)
        if (m->marked[w])
            atomic_fetch_or_explicit(&bits[w], bitmap_memory_word(m->marked[w]),
                                     memory_order_relaxed);
    if (before)
        *before = atomic_fetch_add_explicit(written_word(s, loc), m->bytes,
                                            memory_order_relaxed);
    return TCIO_SUCCESS;
}

static int shm_get(tci_transport *t, tci_location loc, char *buf, const tci_move *m)
{
    shm *s = shm_of(t);
    map_slot(s, loc);
    tci_copy_masked(buf, slot_data(s, loc), m->marked, m->marked_lo, m->marked_hi);
    return TCIO_SUCCESS;
}

static int shm_get_all(tci_transport *t, tci_location loc, char *data, unsigned char *bitmap)
{
    shm *s = shm_of(t);
    map_slot(s, loc);
    memcpy(bitmap, bitmap_words(s, loc), (size_t)bitmap_bytes(s));
    memcpy(data, slot_data(s, loc), (size_t)segment_bytes(s));
    return TCIO_SUCCESS;
}

static int shm_get_range(tci_transport *t, tci_location loc, int n, const tci_range *r,
                         char *data, unsigned char *bitmap, int64_t *written)
{
    shm *s = shm_of(t);
    map_slot(s, loc);
    if (written)
        *written = atomic_load_explicit(written_word(s, loc), memory_order_relaxed);
    for (int i = 0; i < n; i++) {
        int lo = r[i].lo, hi = r[i].hi;
        if (bitmap) {
            size_t first = (size_t)lo / 64 * 8, end = ((size_t)hi + 63) / 64 * 8;
            memcpy(bitmap + first, (unsigned char *)bitmap_words(s, loc) + first, end - first);
        }
        memcpy(data + lo, slot_data(s, loc) + lo, (size_t)(hi - lo));
    }
    return TCIO_SUCCESS;
}

static int shm_put_range(tci_transport *t, tci_location loc, int n, const tci_range *r,
                         const char *data, const unsigned char *bitmap, const int64_t *written)
{
    shm *s = shm_of(t);
    map_slot(s, loc);
    atomic_bits *words = bitmap_words(s, loc);
    for (int i = 0; i < n; i++) {
        int lo = r[i].lo, hi = r[i].hi;
        memcpy(slot_data(s, loc) + lo, data + lo, (size_t)(hi - lo));
        for (int w = lo / 64; bitmap && w < (hi + 63) / 64; w++) {
            uint64_t value;      /* under the lock: no sharer ORs bits now */
            memcpy(&value, bitmap + 8 * w, sizeof value);
            atomic_store_explicit(&words[w], value, memory_order_relaxed);
        }
    }
    if (written)
        atomic_store_explicit(written_word(s, loc), *written, memory_order_relaxed);
    return TCIO_SUCCESS;
}

/* ---- keeping the window for the next file -------------------------------- */

/* As rma_empty: only slots the file claimed (a nonzero state word) need
 * clearing.  No other rank accesses the slots now; the next open's
 * agreement, after a full fence, orders this before its accesses. */
static void shm_empty(tci_transport *t)
{
    shm *s = shm_of(t);
    if (!s->segment || t->local_slots == 0)
        return;
    atomic_store_explicit(notice_word(s, t->self), 0, memory_order_relaxed);
    for (int64_t slot = 0; slot < t->local_slots; slot++) {
        tci_location loc = { t->self, slot };
        if (atomic_load_explicit(state_word(s, loc), memory_order_relaxed) == 0)
            continue;
        clear_slot(s, loc);
        atomic_store_explicit(state_word(s, loc), 0, memory_order_relaxed);
    }
    atomic_thread_fence(memory_order_seq_cst);
}

/* Moves through node-shared memory need nobody's progress: nothing to
 * probe (needs_progress is false from the open). */
static int shm_probe_progress(tci_transport *t, const int target[2], const int prober[2])
{
    (void)t;
    (void)target;
    (void)prober;
    return TCIO_SUCCESS;
}

static void shm_rebind(tci_transport *t, const tci_segmap *map)
{
    shm_of(t)->map = map;
}

const tci_transport_ops tci_transport_shm = {
    .name = "shm",
    .moves_bitmaps = true,
    .peeks_any_slot = true,
    .memory_bytes = shm_memory_bytes,
    .open = open_level2,
    .close = close_level2,
    .take = shm_take,
    .release = shm_release,
    .take_shared = shm_take_shared,
    .release_shared = shm_release_shared,
    .reset = shm_reset,
    .describe = NULL,             /* moves bitmaps */
    .forget = NULL,
    .put = shm_put,
    .get = shm_get,
    .get_all = shm_get_all,
    .put_range = shm_put_range,
    .get_range = shm_get_range,
    .loaded_span = shm_loaded_span,
    .notify = shm_notify,
    .memory = shm_memory,
    .state_in_memory = shm_state_in_memory,
    .clear_in_memory = shm_clear_in_memory,
    .add_written_in_memory = shm_add_written_in_memory,
    .sync = shm_sync,
    .notices = shm_notices,
    .peek_states = shm_peek_states,
    .complete_all = shm_complete_all,
    .empty = shm_empty,
    .rebind = shm_rebind,
    .probe_progress = shm_probe_progress,
};
