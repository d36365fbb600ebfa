/* level2.c - level 2's protocol: the moves into and out of the slots of
 * the level 2 it is given, the file's or a node's combining tier.
 *
 * A mover never waits, while holding a slot lock, for another rank to call
 * the library: inside the lock it may send the slot's previous segment
 * downstream (a spill) and load the segment from downstream (level2.h,
 * tci_downstream).  The file's level 2 has the file there (independent
 * MPI-IO, segio.c), and its movers hold one lock at a time.  A node's tier
 * has the file's level 2 there: its spill and load are a forward and a
 * fetch (combiner.c), which come back into this file on the file's level
 * 2 and take one of its slots (a fetch only when it cannot read the slot
 * without the lock); that is the only re-entry, always from the tier into
 * the file's level 2 and never back, so a mover holds at most two locks,
 * the tier's first, and no cycle can form.  How a slot is
 * locked and how bytes reach it is the transport's (transport.h);
 * doc/design.md has the protocol and why it cannot deadlock. */
#define _POSIX_C_SOURCE 200809L   /* access, nanosleep */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "file.h"
#include "segio.h"
#include "error.h"
#include "collective.h"
#include "pages.h"
#include "maskcopy.h"

/* A rank whose slots other ranks reach through a transport that needs
 * this rank's MPI progress (rma under MPICH: every move waits for the
 * target's next MPI call) must keep polling while it waits in the
 * library's collectives, or each of their moves waits for its sleep:
 * collective.c keeps its polls short while any such level 2 is open here.
 * Measured (MPICH, 2 ranks, rank 1 the only aggregator, test_mpi
 * concurrent_writes under rma): 58 s with 1-ms sleeps, 5.7-7.9 s with
 * 50-us, 0.56 s yielding for the first 100 ms of each wait. */
static void serve(tci_level2 *l2, bool on)
{
    on = on && l2->t.ops && l2->t.needs_progress && l2->t.local_slots > 0;
    if (on == l2->serving)
        return;
    l2->serving = on;
    tci_collective_serve(on ? 1 : -1);
}

int tci_level2_open(tci_level2 *l2, const tci_transport_ops *ops, MPI_Comm comm,
                    const tci_segmap *map, bool owner, const tci_downstream *down)
{
    memset(l2, 0, sizeof *l2);
    l2->down = down;
    int rc = tci_transport_open(&l2->t, ops, comm, map, owner);
    serve(l2, true);
    return rc;
}

int tci_level2_probe_progress(tci_level2 *l2, const int target[2], const int prober[2])
{
    int rc = tci_transport_probe_progress(&l2->t, target, prober);
    serve(l2, l2->serving);      /* off, if nobody needs this rank's progress */
    return rc;
}

void tci_level2_adopt(tci_level2 *l2, const tci_transport *kept, const tci_segmap *map,
                      const tci_downstream *down)
{
    memset(l2, 0, sizeof *l2);
    l2->down = down;
    l2->t = *kept;
    tci_transport_rebind(&l2->t, map);
    serve(l2, true);
}

bool tci_level2_keep(tci_level2 *l2, tci_transport *kept)
{
    if (!tci_transport_empty(&l2->t))
        return false;
    *kept = l2->t;
    serve(l2, false);            /* nobody reaches a kept window's slots */
    l2->t.ops = NULL;            /* tci_level2_free leaves it alone now */
    tci_level2_free(l2);
    return true;
}

int tci_level2_complete_all(tci_level2 *l2)
{
    return l2->t.ops->complete_all(&l2->t);
}

void tci_level2_free(tci_level2 *l2)
{
    serve(l2, false);
    tci_transport_close(&l2->t);
    free(l2->scratch);
    free(l2->loadbuf);
    free(l2->bitmap);
    l2->scratch = NULL;
    l2->loadbuf = NULL;
    l2->bitmap = NULL;
}

/* The scratch segment and bitmap are allocated at their first use: ranks
 * that never spill or load a written segment never hold them. */
static int have_scratch(tci_level2 *l2)
{
    /* Mapped at once: a spill or load copies a whole slot in (pages.h). */
    if (!l2->scratch && (l2->scratch = malloc((size_t)l2->t.map->segment_size)))
        tci_pages_populate(l2->scratch, (size_t)l2->t.map->segment_size);
    if (!l2->bitmap && (l2->bitmap = malloc((size_t)tci_bitmap_bytes(l2->t.map->segment_size))))
        tci_pages_populate(l2->bitmap, (size_t)tci_bitmap_bytes(l2->t.map->segment_size));
    if (l2->scratch && l2->bitmap)
        return TCIO_SUCCESS;
    return tci_error_set(TCIO_ERR_NO_MEMORY, "no memory for a %lld-byte scratch segment "
                         "(needed to spill or load a written segment)",
                         (long long)l2->t.map->segment_size);
}

/* Copy the locked slot's bitmap and data into the scratch buffers. */
static int fetch_slot(tci_level2 *l2, tci_location loc)
{
    int rc = have_scratch(l2);
    return rc != TCIO_SUCCESS ? rc : l2->t.ops->get_all(&l2->t, loc, l2->scratch, l2->bitmap);
}

/* Copy into DST the bytes of SRC in [LO, HI) whose BITMAP bits are WANT
 * (both a segment): the written bytes (1) laid over a load, or the
 * unwritten ones (0) filled from a load. */
static void copy_runs(char *dst, const char *src, const unsigned char *bitmap, int lo, int hi,
                      int want)
{
    int end, start = tci_bitmap_next_run(bitmap, lo, hi, want, &end);
    while (start < hi) {
        memcpy(dst + start, src + start, (size_t)(end - start));
        start = tci_bitmap_next_run(bitmap, end, hi, want, &end);
    }
}

/* The file's level 2: a spill writes the segment's bytes to the file. */
static int spill_to_file(tcio_file *fh, int64_t segment, const char *data,
                         const unsigned char *bitmap)
{
    double t0 = MPI_Wtime();
    int rc = tci_segio_write(tci_file_segio(fh), segment, data, bitmap);
    fh->stats.count[TCI_C_SPILLS] += rc == TCIO_SUCCESS;   /* segments written */
    fh->stats.time[TCI_T_SPILLS] += MPI_Wtime() - t0;
    return rc;
}

/* The file's level 2: a load reads the segment's bytes [LO, HI) from the
 * file (always the whole segment: loads_spans is false). */
static int load_from_file(tcio_file *fh, int64_t segment, char *buf, int lo, int hi)
{
    double t0 = MPI_Wtime();
    int rc = tci_segio_read_range(fh->file, &fh->map, segment, lo, hi, buf);
    fh->stats.count[TCI_C_LOADS] += rc == TCIO_SUCCESS;    /* segments read */
    fh->stats.time[TCI_T_LOADS] += MPI_Wtime() - t0;
    return rc;
}

/* The file's level 2: a drain writes the segment's bytes to the file. */
static int drain_to_file(tcio_file *fh, int64_t segment, const char *data,
                         const unsigned char *bitmap)
{
    return tci_segio_write(tci_file_segio(fh), segment, data, bitmap);
}

const tci_downstream tci_downstream_file = {
    .spill = spill_to_file, .drain = drain_to_file, .load = load_from_file, .is_file = true,
    .loads_spans = false
};

/* The slot holds another segment with unsaved bytes: send them downstream
 * before the slot changes hands (the spill path). */
static int spill_slot(tcio_file *fh, tci_level2 *l2, tci_location loc, int64_t victim)
{
    int rc = fetch_slot(l2, loc);
    if (rc != TCIO_SUCCESS)
        return rc;
    /* A failed spill keeps the victim in its slot (close tries again), but
     * the handle remembers it so that close cannot report success. */
    return tci_note_failure(fh, l2->down->spill(fh, victim, l2->scratch, l2->bitmap));
}

/* Make the locked slot hold SEGMENT, spilling its previous segment and
 * clearing its bitmap and written-byte counter.  *H becomes the header the
 * slot must end up with (published at release); on failure it is left as
 * it was, so the release keeps the victim.  *CHANGED says the slot's
 * contents were touched. */
static int claim_slot(tcio_file *fh, tci_level2 *l2, tci_location loc, int64_t segment,
                      tci_slot_header *h, bool *changed)
{
    tci_transport *t = &l2->t;
    *changed = false;
    if (h->segment == segment)
        return TCIO_SUCCESS;
    if (h->flags & TCI_SLOT_DIRTY) {
        int rc = spill_slot(fh, l2, loc, h->segment);
        if (rc != TCIO_SUCCESS)
            return rc;
    }
    int rc = t->ops->reset(t, loc);
    *changed = true;
    if (rc != TCIO_SUCCESS)
        return rc;
    h->segment = segment;
    h->flags = 0;
    return TCIO_SUCCESS;
}

/* ---- statistics ----------------------------------------------------------- */

/* A put or get of BYTES level-1 bytes into or out of slot LOC of L2:
 * counted apart when the slot is on another node (TCIO_STATS off_node_moves
 * and off_node_bytes), the traffic that crosses the network on a cluster.
 * A node's combining tier is on this node; the moves of its forwards and
 * fetches (combiner.c) into the file's level 2 count here as well. */
static void count_move(tcio_file *fh, const tci_level2 *l2, tci_location loc, int64_t bytes,
                       enum tci_counter kind)
{
    fh->stats.count[kind]++;
    const int *node_of = fh->aggr.node_of;
    if (l2->down->is_file && node_of && node_of[loc.rank] != node_of[fh->rank]) {
        fh->stats.count[TCI_C_OFF_NODE_MOVES]++;
        fh->stats.count[TCI_C_OFF_NODE_BYTES] += bytes;
    }
}

/* ---- write move ---------------------------------------------------------- */

/* Put the level-1 bytes of M into the locked slot, OR their bits into its
 * bitmap and, with early drain, add their length to its written-byte
 * counter.  Sets TCI_SLOT_FULL in *H when the counter reaches the segment
 * size. */
static int put_locked(tcio_file *fh, tci_level2 *l2, const tci_level1 *l1, tci_location loc,
                      tci_slot_header *h, const tci_move *m, bool *modified)
{
    tci_transport *t = &l2->t;
    int rc = claim_slot(fh, l2, loc, l1->segment, h, modified);
    if (rc != TCIO_SUCCESS)
        return rc;
    *modified = true;
    int64_t before = 0;
    rc = t->ops->put(t, loc, l1->buf, m, fh->config.early_drain ? &before : NULL);
    if (rc != TCIO_SUCCESS)
        return rc;
    h->flags |= TCI_SLOT_DIRTY;   /* published by the release */
    if (fh->config.early_drain && before + m->bytes >= fh->map.segment_size)
        h->flags |= TCI_SLOT_FULL;
    count_move(fh, l2, loc, m->bytes, TCI_C_PUTS);
    return TCIO_SUCCESS;
}

/* Count the transport's busy takes into the file's statistics. */
static void count_busy_takes(tcio_file *fh, tci_level2 *l2)
{
    fh->stats.count[TCI_C_BUSY_TAKES] += l2->t.busy_takes;
    l2->t.busy_takes = 0;
}

/* Put M's bytes sharing the slot with other writers of the segment, when
 * the transport can and the slot holds the segment already; *SHARED says
 * whether it did.  The flags this move earned (dirty, full) go into the
 * header at the shared release, and into *H for the caller. */
static int put_shared(tcio_file *fh, tci_level2 *l2, const tci_level1 *l1, tci_location loc,
                      const tci_move *m, tci_slot_header *h, bool *shared)
{
    tci_transport *t = &l2->t;
    *shared = false;
    if (!t->ops->take_shared)
        return TCIO_SUCCESS;
    int rc = t->ops->take_shared(t, loc, l1->segment, false, h, shared);
    if (rc != TCIO_SUCCESS || !*shared)
        return rc;
    int64_t before = 0, flags = 0;
    rc = t->ops->put(t, loc, l1->buf, m, fh->config.early_drain ? &before : NULL);
    if (rc == TCIO_SUCCESS) {
        flags = TCI_SLOT_DIRTY;
        if (fh->config.early_drain && before + m->bytes >= fh->map.segment_size)
            flags |= TCI_SLOT_FULL;
        count_move(fh, l2, loc, m->bytes, TCI_C_PUTS);
        fh->stats.count[TCI_C_SHARED_MOVES]++;
    }
    int release_rc = t->ops->release_shared(t, loc, flags);
    h->flags |= flags;
    return rc != TCIO_SUCCESS ? rc : release_rc;
}

/* ---- a rank ahead of the others (doc/design.md, of that name) ------------- */

/* Whether a writer of SEGMENT on FH finds in a slot whose header is H an
 * older segment that other ranks are still filling (dirty, not full): in
 * the streaming patterns libtcio serves, the sign of a rank that runs
 * ahead of the others by more than level 2 holds.  Evicting that segment
 * would write the others' bytes out half done and make each of them, when
 * it comes, evict this rank's segment in turn.  Only with early drain:
 * without it no segment is ever marked full, so every older segment would
 * look unfilled for ever and pin its slot until the close.  Not in a
 * node's combining tier: its segments fill only with every node's bytes,
 * which it never holds, and evicting one costs a forward, not a write. */
static bool older_being_filled(const tcio_file *fh, const tci_level2 *l2,
                               const tci_slot_header *h, int64_t segment)
{
    return fh->config.early_drain && l2->down->is_file && h->segment != TCI_SLOT_EMPTY &&
           h->segment < segment &&
           (h->flags & TCI_SLOT_DIRTY) && !(h->flags & TCI_SLOT_FULL);
}

/* Whether to wait at all: waits that keep ending with the older segment
 * still unfilled (patterns whose segments never fill up) are given up,
 * with a look now and then in case the pattern changed. */
static bool worth_waiting(tci_level2 *l2)
{
    enum { GIVE_UP = -8, LOOK_AGAIN_EVERY = 64 };
    return l2->wait_score > GIVE_UP || ++l2->waits_skipped % LOOK_AGAIN_EVERY == 0;
}

/* Give the ranks behind a moment to fill the older segment in slot LOC
 * before writing around it: at most about what a write around costs,
 * watching the slot's state word without taking it (where the transport
 * can: shm) and giving the processor away between looks, so that where
 * ranks share cores the ranks behind are the ones that run.  Nothing is
 * held; the wait is bounded whatever the others do. */
static void wait_for_older(tcio_file *fh, tci_level2 *l2, tci_location loc, int64_t segment)
{
    tci_transport *t = &l2->t;
    if (!t->ops->peeks_any_slot || !t->ops->memory(t, loc, NULL))
        return;
    int64_t state = t->ops->state_in_memory(t, loc);
    tci_slot_header h = tci_state_decode(state);
    if (state == TCI_STATE_LOCKED || !older_being_filled(fh, l2, &h, segment) ||
        !worth_waiting(l2))
        return;
    double t0 = MPI_Wtime(), budget = l2->around_cost > 0 ? l2->around_cost : 1e-3;
    bool filled = false;
    for (int polls = 0; !filled && MPI_Wtime() - t0 < budget; polls++) {
        tci_back_off(polls);
        state = t->ops->state_in_memory(t, loc);
        h = tci_state_decode(state);
        filled = state != TCI_STATE_LOCKED && !older_being_filled(fh, l2, &h, segment);
    }
    l2->wait_score = filled ? (l2->wait_score + 4 > 8 ? 8 : l2->wait_score + 4)
                            : (l2->wait_score - 1 < -8 ? -8 : l2->wait_score - 1);
    fh->stats.count[TCI_C_OLDER_WAITS]++;
    fh->stats.time[TCI_T_OLDER_WAITS] += MPI_Wtime() - t0;
}

/* Write level 1's bytes straight to the file, around the older segment
 * that holds their slot (locked by the caller): every write of this
 * segment's bytes to the file happens under this slot's lock (the segment
 * has no other slot), so the sieve's read-modify-write is as safe as a
 * spill's.  Only in the file's level 2 (older_being_filled).  The older
 * segment stays for the ranks filling it, and the rank ahead pays, which
 * slows it down without making it wait for them. */
static int write_around(tcio_file *fh, tci_level2 *l2, const tci_level1 *l1)
{
    int rc = have_scratch(l2);
    if (rc != TCIO_SUCCESS)
        return rc;
    double t0 = MPI_Wtime();
    const unsigned char *bitmap =
        tci_level1_marked_bitmap(l1, l2->bitmap, (int)fh->map.segment_size);
    rc = tci_note_failure(fh, tci_segio_write(tci_file_segio(fh), l1->segment, l1->buf, bitmap));
    double spent = MPI_Wtime() - t0;
    l2->around_cost = l2->around_cost > 0 ? 0.75 * l2->around_cost + 0.25 * spent : spent;
    fh->stats.count[TCI_C_WRITES_AROUND]++;
    fh->stats.time[TCI_T_WRITES_AROUND] += spent;
    return rc;
}

/* The exclusive write move: take, claim (spilling), put, release; or,
 * when the slot holds an older segment others still fill, a moment's wait
 * for them and then a write around it. */
static int put_exclusive(tcio_file *fh, tci_level2 *l2, const tci_level1 *l1,
                         tci_location loc, const tci_move *m, tci_slot_header *h)
{
    tci_transport *t = &l2->t;
    wait_for_older(fh, l2, loc, l1->segment);
    int rc = t->ops->take(t, loc, h);
    if (rc != TCIO_SUCCESS)
        return rc;
    bool modified = false;
    rc = older_being_filled(fh, l2, h, l1->segment) ? write_around(fh, l2, l1)
                                                    : put_locked(fh, l2, l1, loc, h, m, &modified);
    int release_rc = t->ops->release(t, loc, h, modified);
    return rc != TCIO_SUCCESS ? rc : release_rc;
}

/* Describe level 1's marked bytes (written, or wanted) for the transport:
 * the bitmap as it is, or (for a transport that moves extents) its runs.
 * *DESCRIBED says whether a description was made (to forget). */
static int describe_marked(tci_level2 *l2, tci_level1 *l1, tci_move *m, bool *described)
{
    tci_transport *t = &l2->t;
    *m = (tci_move){ .marked = l1->marked, .marked_lo = l1->marked_lo,
                     .marked_hi = l1->marked_hi };
    *described = false;
    if (t->ops->moves_bitmaps) {
        m->bytes = tci_level1_marked_bytes(l1);
        return TCIO_SUCCESS;
    }
    if (tci_level1_marked_extents(l1) != 0)
        return tci_error_set(TCIO_ERR_NO_MEMORY, "no memory for the extent list of a move");
    int rc = t->ops->describe(t, &l1->extents, m);
    *described = rc == TCIO_SUCCESS;
    return rc;
}

/* The tier that level 1's moves go to: the node's combining tier, when
 * the file has one, else the file's level 2. */
static tci_level2 *first_tier(tcio_file *fh)
{
    return fh->node.t.ops ? &fh->node : &fh->l2;
}

/* Move L1's writes into L2 (see tci_level2_put_writes). */
static int put_from(tcio_file *fh, tci_level2 *l2, tci_level1 *l1)
{
    tci_transport *t = &l2->t;
    if (l1->mode != TCI_L1_WRITING)
        return TCIO_SUCCESS;
    if (!tci_level1_has_writes(l1)) {
        tci_level1_reset(l1);
        return TCIO_SUCCESS;
    }
    double t0 = MPI_Wtime();
    tci_move m;
    bool described;
    int rc = describe_marked(l2, l1, &m, &described);   /* before the lock */
    if (rc != TCIO_SUCCESS)
        return rc;
    tci_location loc = tci_segmap_locate(t->map, l1->segment);
    tci_slot_header h = { .segment = TCI_SLOT_EMPTY, .flags = 0 };
    bool shared;
    rc = put_shared(fh, l2, l1, loc, &m, &h, &shared);
    if (rc == TCIO_SUCCESS && !shared)
        rc = put_exclusive(fh, l2, l1, loc, &m, &h);
    count_busy_takes(fh, l2);
    /* This move completed the segment: who writes it is the caller's
     * choice (owner.c, combiner.c), after the release, so that the slot
     * is free. */
    l2->filled_valid = rc == TCIO_SUCCESS && (h.flags & TCI_SLOT_FULL);
    l2->filled = loc;
    if (described)
        t->ops->forget(t, &m);
    if (rc == TCIO_SUCCESS) {
        int64_t end = tci_level1_marked_end(l1);
        if (l1 == &fh->l1 && end > fh->written_end)
            fh->written_end = end;
        tci_level1_reset(l1);
    }
    fh->stats.time[TCI_T_WRITE_MOVES] += MPI_Wtime() - t0;
    return rc;
}

int tci_level2_put_writes(tcio_file *fh)
{
    return put_from(fh, first_tier(fh), &fh->l1);
}

/* ---- a combined segment from a node's combining tier ---------------------- */

/* OR the marks of V into BITMAP, word by word where V marks anything (the
 * words of its ranges); returns how many bits were newly set (what the
 * slot's written-byte counter grows by).  One pass. */
static int64_t or_marks(unsigned char *bitmap, const tci_level1 *v)
{
    int64_t added = 0;
    for (int w = v->marked_lo; w < v->marked_hi; w++) {
        uint64_t old = tci_bitmap_word(bitmap, w), marks = v->marked[w];
        if (!marks)
            continue;               /* a stretch between ranges: not fetched */
        added += tci_popcount64(marks & ~old);
        tci_bitmap_set_word(bitmap, w, old | marks);
    }
    return added;
}

/* merge_locked in a slot this rank reaches by address (the aggregator's
 * own, merging what its nodes sent it, forward.c): V's bytes and bits
 * straight into the slot, between the syncs that order plain loads and
 * stores with other ranks' accesses (as the owner's drains do). */
static int merge_in_place(tci_transport *t, tci_location loc, char *data,
                          unsigned char *bitmap, const tci_slot_header *h,
                          const tci_level1 *v, int size, bool *full)
{
    int rc = t->ops->sync(t);
    if (rc != TCIO_SUCCESS)
        return rc;
    if (!(h->flags & (TCI_SLOT_DIRTY | TCI_SLOT_LOADED)))
        t->ops->clear_in_memory(t, loc);
    tci_copy_masked(data, v->buf, v->marked, v->marked_lo, v->marked_hi);
    *full = t->ops->add_written_in_memory(t, loc, or_marks(bitmap, v)) >= size;
    return t->ops->sync(t);
}

/* Under the slot lock, the slot claimed for V's segment: what it holds of
 * the segment in V's ranges (tci_level1_ranges: the bitmap words over V's
 * marks, and the bytes under them; nothing after a claim), V's bytes laid
 * over it, and back (in place when the slot is this rank's).  Only the
 * ranges cross: a node that wrote a tenth of the segment moves a tenth of
 * it, not the whole segment in and out (doc/design.md, *Several nodes*,
 * the merge).  The slot's written-byte counter, which a merge keeps equal
 * to the number of its bitmap's set bits, says whether the segment is now
 * full (*FULL); its owner checks the bitmap before it drains. */
static int merge_locked(tcio_file *fh, tci_location loc, const tci_slot_header *h,
                        const tci_level1 *v, bool *full)
{
    tci_level2 *l2 = &fh->l2;
    tci_transport *t = &l2->t;
    int size = (int)fh->map.segment_size;
    unsigned char *slot_bitmap = NULL;
    char *slot_data = t->ops->memory(t, loc, &slot_bitmap);
    if (slot_data)
        return merge_in_place(t, loc, slot_data, slot_bitmap, h, v, size, full);
    *full = false;
    tci_range range[TCI_MAX_RANGES];
    int n = tci_level1_ranges(v, size, range);
    if (n == 0)
        return TCIO_SUCCESS;             /* nothing marked: nothing to move */
    bool holds = h->flags & (TCI_SLOT_DIRTY | TCI_SLOT_LOADED);
    int64_t written = 0;
    int rc = TCIO_SUCCESS;
    if (holds) {
        rc = t->ops->get_range(t, loc, n, range, l2->scratch, l2->bitmap, &written);
    } else {                              /* a claimed slot: nothing written yet */
        for (int i = 0; i < n; i++) {
            int first = range[i].lo / 64, end = (range[i].hi + 63) / 64;
            memset(l2->bitmap + 8 * first, 0, (size_t)(8 * (end - first)));
        }
    }
    if (rc != TCIO_SUCCESS)
        return rc;
    /* Only the ranges' bytes and bitmap words are fresh: the masked copy
     * and the OR touch nothing outside them (V marks nothing there). */
    tci_copy_masked(l2->scratch, v->buf, v->marked, v->marked_lo, v->marked_hi);
    written += or_marks(l2->bitmap, v);
    *full = written >= size;
    rc = t->ops->put_range(t, loc, n, range, l2->scratch, l2->bitmap, &written);
    int64_t moved = 0;
    for (int i = 0; i < n; i++)
        moved += (range[i].hi - range[i].lo) + 8 * ((range[i].hi + 63) / 64 - range[i].lo / 64);
    if (rc == TCIO_SUCCESS)
        fh->stats.count[TCI_C_MERGE_BYTES] += holds ? 2 * moved : moved;
    return rc;
}

int tci_level2_merge(tcio_file *fh, const tci_level1 *v, const tci_under_lock *after)
{
    tci_level2 *l2 = &fh->l2;
    tci_transport *t = &l2->t;
    int rc = have_scratch(l2);
    if (rc != TCIO_SUCCESS)
        return rc;
    tci_location loc = tci_segmap_locate(&fh->map, v->segment);
    tci_slot_header h;
    rc = t->ops->take(t, loc, &h);
    if (rc != TCIO_SUCCESS)
        return rc;
    bool modified = false, full = false;
    rc = claim_slot(fh, l2, loc, v->segment, &h, &modified);
    if (rc == TCIO_SUCCESS) {
        modified = true;
        rc = merge_locked(fh, loc, &h, v, &full);
    }
    if (rc == TCIO_SUCCESS) {
        h.flags |= TCI_SLOT_DIRTY;
        if (full && fh->config.early_drain)
            h.flags |= TCI_SLOT_FULL;
        if (after)
            rc = after->run(fh, after->arg);
    }
    int release_rc = t->ops->release(t, loc, &h, modified);
    count_busy_takes(fh, l2);
    l2->filled_valid = rc == TCIO_SUCCESS && (h.flags & TCI_SLOT_FULL);
    l2->filled = loc;
    if (rc == TCIO_SUCCESS)
        count_move(fh, l2, loc, tci_level1_marked_bytes(v), TCI_C_PUTS);
    return rc != TCIO_SUCCESS ? rc : release_rc;
}

/* ---- read move ----------------------------------------------------------- */

/* The slot does not hold the file's bytes yet: read the segment into SEG
 * (a segment-sized buffer), lay the bytes already written on top, and
 * store the result in the slot so later readers find it loaded.
 * NEED_COPY: the caller uses the segment in SEG afterwards. */
static int load_into_slot(tcio_file *fh, tci_level2 *l2, tci_location loc, tci_slot_header *h,
                          char *seg, bool need_copy)
{
    tci_transport *t = &l2->t;
    /* A clean slot that this rank reaches by address (an aggregator's own,
     * with rma) is loaded straight from the file (no copy, no put), unless
     * the caller needs the segment in SEG as well. */
    char *direct = !need_copy && !(h->flags & TCI_SLOT_DIRTY) ? t->ops->memory(t, loc, NULL)
                                                              : NULL;
    int rc = TCIO_SUCCESS;
    if (direct) {
        seg = direct;
        /* Order the earlier holders' completed updates of the slot before
         * our stores into it (as the owner's early drain does before it
         * reads). */
        rc = t->ops->sync(t);
        if (rc != TCIO_SUCCESS)
            return rc;
    }
    int size = (int)fh->map.segment_size;
    rc = l2->down->load(fh, h->segment, seg, 0, size);
    if (rc != TCIO_SUCCESS)
        return rc;
    if (h->flags & TCI_SLOT_DIRTY) {
        rc = fetch_slot(l2, loc);
        if (rc != TCIO_SUCCESS)
            return rc;
        copy_runs(seg, l2->scratch, l2->bitmap, 0, size, 1);   /* the writes are newer */
    }
    rc = direct ? t->ops->sync(t)               /* our stores, before the release */
                : t->ops->put_range(t, loc, 1, &(tci_range){ 0, size }, seg, NULL, NULL);
    if (rc == TCIO_SUCCESS)
        h->flags |= TCI_SLOT_LOADED;   /* published by the release */
    return rc;
}

/* Copy the bytes level 1 wants from the (taken) slot LOC into level 1. */
static int copy_marked_out(tcio_file *fh, tci_level2 *l2, tci_location loc)
{
    tci_transport *t = &l2->t;
    tci_move m;
    bool described;
    int rc = describe_marked(l2, &fh->l1, &m, &described);
    if (rc == TCIO_SUCCESS)
        rc = t->ops->get(t, loc, fh->l1.buf, &m);
    if (described)
        t->ops->forget(t, &m);
    return rc;
}

/* ---- partial loads: a reader's span of a node's tier --------------------- */

/* The bytes [*LO, *HI) from the first to the last byte level 1 marks (its
 * whole segment if it marks none). */
static void wanted_span(const tci_level1 *l1, int size, int *lo, int *hi)
{
    int first = l1->marked_lo, last = l1->marked_hi - 1;
    while (first <= last && !l1->marked[first])
        first++;
    while (last >= first && !l1->marked[last])
        last--;
    if (first > last) {
        *lo = 0;
        *hi = size;
        return;
    }
    *lo = 64 * first + __builtin_ctzll(l1->marked[first]);
    *hi = 64 * last + 64 - __builtin_clzll(l1->marked[last]);
    if (*hi > size)
        *hi = size;
}

/* The locked slot LOC holds level 1's segment, not loaded: where its
 * downstream loads spans and its transport keeps a loaded span for it
 * (a node's tier, level2.h), the span word, else NULL (load it whole). */
static int64_t *span_word_of(tci_level2 *l2, tci_location loc)
{
    return l2->down->loads_spans ? l2->t.ops->loaded_span(&l2->t, loc) : NULL;
}

/* The range [*LO, *HI) a partial load of a slot whose loaded span is
 * [HAD_LO, HAD_HI) (empty: none) makes for level 1's wanted bytes, which
 * it covers: the wanted bytes alone at first; once some are loaded, one
 * range over what was loaded, the wanted bytes and what lies between,
 * and at least twice as long as what was loaded, grown on the side the
 * wanted bytes lie (a few fetches for many scattered reads, not one per
 * read; nothing is loaded twice, and at most twice the bytes from the
 * first wanted to the last).  Wanted bytes that begin where the span
 * ends, or end where it begins, are a stream of reads through the
 * segment (the MPI-IO interposer reads in 64 KiB blocks): the whole
 * segment, as does a range of half the segment or more. */
static void span_to_load(int size, int had_lo, int had_hi, int *lo, int *hi)
{
    if (had_lo < had_hi && (*lo == had_hi || *hi == had_lo)) {
        *lo = 0;
        *hi = size;
    } else if (had_lo < had_hi) {
        int64_t at_least = 2 * (int64_t)(had_hi - had_lo);
        bool right = *hi > had_hi;
        *lo = *lo < had_lo ? *lo : had_lo;
        *hi = *hi > had_hi ? *hi : had_hi;
        if (*hi - *lo < at_least) {
            if (right)
                *hi = (int)(*lo + at_least < size ? *lo + at_least : size);
            else
                *lo = (int)(*hi - at_least > 0 ? *hi - at_least : 0);
        }
    }
    if (2 * (int64_t)(*hi - *lo) >= size) {
        *lo = 0;
        *hi = size;
    }
}

/* Load into the locked slot LOC, under *H, with loaded span *SPAN, the
 * bytes [LO, HI) that level 1 wants, as far as the span lacks them: the
 * range span_to_load makes, fetched in the one or two pieces the span
 * does not hold.  Written bytes stay (they are newer).  A range of the
 * whole segment loads the slot (TCI_SLOT_LOADED), and its readers share
 * it again.  The caller copies the wanted bytes out of the slot
 * afterwards.  *MODIFIED: something was loaded. */
static int load_span_into_slot(tcio_file *fh, tci_level2 *l2, tci_location loc,
                               tci_slot_header *h, int64_t *span, int lo, int hi, bool *modified)
{
    tci_transport *t = &l2->t;
    int size = (int)fh->map.segment_size;
    int had_lo, had_hi;
    tci_span_decode(*span, &had_lo, &had_hi);
    if (*span && lo >= had_lo && hi <= had_hi)
        return TCIO_SUCCESS;                     /* loaded by an earlier reader */
    span_to_load(size, had_lo, had_hi, &lo, &hi);
    if (!*span)
        had_lo = had_hi = lo;                    /* nothing loaded: one piece */
    *modified = true;
    unsigned char *bitmap;
    char *data = t->ops->memory(t, loc, &bitmap);
    /* The earlier holders' completed updates before our stores. */
    int rc = t->ops->sync(t);
    const int pieces[2][2] = { { lo, had_lo }, { had_hi, hi } };
    for (int i = 0; i < 2 && rc == TCIO_SUCCESS; i++) {
        if (pieces[i][0] >= pieces[i][1])
            continue;
        rc = l2->down->load(fh, h->segment, fh->l1.buf, pieces[i][0], pieces[i][1]);
        if (rc == TCIO_SUCCESS)
            copy_runs(data, fh->l1.buf, bitmap, pieces[i][0], pieces[i][1], 0);
    }
    if (rc == TCIO_SUCCESS)
        rc = t->ops->sync(t);                    /* our stores, before the release */
    if (rc != TCIO_SUCCESS)
        return rc;
    if (lo == 0 && hi == size) {
        h->flags |= TCI_SLOT_LOADED;             /* published by the release */
        *span = 0;
    } else {
        *span = tci_span_encode(lo, hi);
    }
    return TCIO_SUCCESS;
}

/* Load the locked slot LOC, level 1's segment not loaded there, for level
 * 1's reads: in part (load_span_into_slot) where its level 2 keeps spans
 * and either part of the segment is loaded already or level 1 wants less
 * than half of it; else whole (load_into_slot: the segment stays in
 * level 1, and the reads are delivered from there).  *FROM_SLOT: the
 * caller still copies the wanted bytes out of the slot. */
static int load_for_reads(tcio_file *fh, tci_level2 *l2, tci_location loc, tci_slot_header *h,
                          bool *modified, bool *from_slot)
{
    int size = (int)fh->map.segment_size, lo = 0, hi = size;
    int64_t *span = span_word_of(l2, loc);
    if (span)
        wanted_span(&fh->l1, size, &lo, &hi);
    *from_slot = span && (*span || 2 * (int64_t)(hi - lo) < size);
    if (*from_slot)
        return load_span_into_slot(fh, l2, loc, h, span, lo, hi, modified);
    *modified = true;
    return load_into_slot(fh, l2, loc, h, fh->l1.buf, true);
}

/* Fetch the wanted bytes; returns whether the slot was modified (loaded
 * or claimed), which decides if the release must complete them first. */
static int get_locked(tcio_file *fh, tci_level2 *l2, tci_location loc, tci_slot_header *h,
                      bool *modified)
{
    int rc = claim_slot(fh, l2, loc, fh->l1.segment, h, modified);
    if (rc != TCIO_SUCCESS)
        return rc;
    if (!(h->flags & TCI_SLOT_LOADED)) {
        bool from_slot;
        rc = load_for_reads(fh, l2, loc, h, modified, &from_slot);
        if (rc != TCIO_SUCCESS || !from_slot)
            return rc;
    }
    return copy_marked_out(fh, l2, loc);
}

/* Fetch the wanted bytes sharing the slot with other readers, when the
 * transport can and the slot holds the segment loaded; *SHARED says
 * whether it did.  Nothing in the slot changes. */
static int get_shared(tcio_file *fh, tci_level2 *l2, tci_location loc, bool *shared)
{
    tci_transport *t = &l2->t;
    *shared = false;
    if (!t->ops->take_shared)
        return TCIO_SUCCESS;
    tci_slot_header h;
    int rc = t->ops->take_shared(t, loc, fh->l1.segment, true, &h, shared);
    if (rc != TCIO_SUCCESS || !*shared)
        return rc;
    rc = copy_marked_out(fh, l2, loc);
    if (rc == TCIO_SUCCESS)
        fh->stats.count[TCI_C_SHARED_MOVES]++;
    int release_rc = t->ops->release_shared(t, loc, 0);
    return rc != TCIO_SUCCESS ? rc : release_rc;
}

int tci_level2_get_reads(tcio_file *fh)
{
    tci_level1 *l1 = &fh->l1;
    tci_level2 *l2 = first_tier(fh);
    tci_transport *t = &l2->t;
    if (l1->mode != TCI_L1_READING)
        return TCIO_SUCCESS;
    if (l1->nreads == 0) {
        tci_level1_reset(l1);
        return TCIO_SUCCESS;
    }
    double t0 = MPI_Wtime();
    tci_location loc = tci_segmap_locate(t->map, l1->segment);
    bool shared;
    int rc = get_shared(fh, l2, loc, &shared);
    if (rc == TCIO_SUCCESS && !shared) {
        tci_slot_header h;
        rc = t->ops->take(t, loc, &h);
        if (rc == TCIO_SUCCESS) {
            bool modified = false;
            rc = get_locked(fh, l2, loc, &h, &modified);
            int release_rc = t->ops->release(t, loc, &h, modified);
            if (rc == TCIO_SUCCESS)
                rc = release_rc;
        }
    }
    count_busy_takes(fh, l2);
    if (rc == TCIO_SUCCESS) {
        count_move(fh, l2, loc, tci_level1_marked_bytes(l1), TCI_C_GETS);
        tci_level1_deliver_reads(l1);
        tci_level1_reset(l1);
    }
    fh->stats.time[TCI_T_READ_MOVES] += MPI_Wtime() - t0;
    return rc;
}

/* ---- prefetch ------------------------------------------------------------ */

/* Whether a prefetch of SEGMENT may take a slot holding H: never at the
 * price of a spill (a hint must not write another segment out), and only
 * when the slot does not hold the segment's file bytes already. */
static bool worth_loading(const tci_slot_header *h, int64_t segment, bool *mine)
{
    *mine = h->segment == segment;
    if (*mine)
        return !(h->flags & TCI_SLOT_LOADED);
    return !(h->flags & TCI_SLOT_DIRTY);
}

int tci_level2_prefetch(tcio_file *fh, tci_level2 *l2, int64_t segment, bool *loaded)
{
    tci_transport *t = &l2->t;
    *loaded = false;
    if (!l2->loadbuf && !(l2->loadbuf = malloc((size_t)fh->map.segment_size)))
        return TCIO_ERR_NO_MEMORY;
    tci_location loc = tci_segmap_locate(t->map, segment);
    tci_slot_header h;
    int rc = t->ops->take(t, loc, &h);
    if (rc != TCIO_SUCCESS)
        return rc;
    bool mine, modified = false;
    if (worth_loading(&h, segment, &mine)) {
        /* After a failed load the slot holds SEGMENT, not loaded: a valid
         * state, which the first read loads again. */
        rc = mine ? TCIO_SUCCESS : claim_slot(fh, l2, loc, segment, &h, &modified);
        if (rc == TCIO_SUCCESS) {
            /* A tier slot loaded in part is loaded whole in place: its
             * span must not vouch for bytes the load overwrites (or, if
             * it fails, leaves half written). */
            int64_t *span = span_word_of(l2, loc);
            if (span)
                *span = 0;
            modified = true;
            rc = load_into_slot(fh, l2, loc, &h, l2->loadbuf, false);
        }
        *loaded = rc == TCIO_SUCCESS;
    }
    int release_rc = t->ops->release(t, loc, &h, modified);
    count_busy_takes(fh, l2);
    return rc != TCIO_SUCCESS ? rc : release_rc;
}

/* ---- a segment's span for a node's combining tier ------------------------ */

/* Read SEGMENT's bytes [LO, HI) from the file into BUF + LO for a fetch
 * (a segment load): all a fetch needs when its slot holds another segment
 * or none (every byte of it that left a node's combining tier is in the
 * file: the slot spilled it before it was released for another segment),
 * else what the slot's bytes are laid over. */
static int fetch_from_file(tcio_file *fh, int64_t segment, char *buf, int lo, int hi)
{
    double t0 = MPI_Wtime();
    int rc = tci_segio_read_range(fh->file, &fh->map, segment, lo, hi, buf);
    fh->stats.count[TCI_C_LOADS] += rc == TCIO_SUCCESS;    /* segments read */
    fh->stats.time[TCI_T_LOADS] += MPI_Wtime() - t0;
    return rc;
}

/* Tests only: with TCIO_TEST_FETCH_PAUSE set to a path P, a fetch's first
 * try creates P.paused just before it reads the slot (after the file,
 * where it reads that first) and waits until P.go exists (at most 60 s),
 * so that a test can change the slot meanwhile (test_mpi's
 * unlocked_fetches).  Returns the seconds it waited, which the peek
 * window does not count.  Costs one getenv per such fetch otherwise. */
static double pause_for_tests(void)
{
    const char *path = getenv("TCIO_TEST_FETCH_PAUSE");
    if (!path || strlen(path) > 4000)
        return 0;
    double start = MPI_Wtime();
    char name[4096 + 8];
    snprintf(name, sizeof name, "%s.paused", path);
    FILE *f = fopen(name, "w");
    if (f)
        fclose(f);
    snprintf(name, sizeof name, "%s.go", path);
    while (MPI_Wtime() < start + 60 && access(name, F_OK) != 0)
        nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
    return MPI_Wtime() - start;
}

/* One read of SEGMENT's bytes [LO, HI) for a fetch without the slot
 * lock, the slot's header H as the first peek saw it: what the slot holds
 * of them, over the file's bytes where it holds no loaded copy.  A clean
 * slot that is not loaded holds nothing the file lacks.  *FROM_SLOT: the
 * slot's bytes were read (a move to count).  FIRST: the fetch's first
 * try; *PAUSED: seconds a test held it (pause_for_tests). */
static int read_unlocked(tcio_file *fh, tci_level2 *l2, tci_location loc,
                         const tci_slot_header *h, char *buf, int lo, int hi, bool first,
                         bool *from_slot, double *paused)
{
    tci_transport *t = &l2->t;
    *from_slot = h->flags & (TCI_SLOT_LOADED | TCI_SLOT_DIRTY);
    *paused = 0;
    bool loaded = h->flags & TCI_SLOT_LOADED;
    int rc = loaded ? TCIO_SUCCESS : fetch_from_file(fh, h->segment, buf, lo, hi);
    if (rc == TCIO_SUCCESS && *from_slot && !loaded)
        rc = have_scratch(l2);               /* the written bytes, to lay over the file's */
    if (rc != TCIO_SUCCESS || !*from_slot)
        return rc;
    *paused = first ? pause_for_tests() : 0;
    const tci_range range = { lo, hi };
    if (loaded)
        return t->ops->get_range(t, loc, 1, &range, buf, NULL, NULL);
    rc = t->ops->get_range(t, loc, 1, &range, l2->scratch, l2->bitmap, NULL);
    if (rc == TCIO_SUCCESS)
        copy_runs(buf, l2->scratch, l2->bitmap, lo, hi, 1);
    return rc;
}

/* Count a fetch of WANTED bytes; FROM_SLOT: MOVED bytes came out of the
 * slot or went into it (a move, which may cross nodes), else the bytes
 * came from the file. */
static void count_fetch(tcio_file *fh, tci_level2 *l2, tci_location loc, bool from_slot,
                        int64_t wanted, int64_t moved)
{
    fh->stats.count[TCI_C_FETCH_BYTES] += wanted;
    if (from_slot)
        count_move(fh, l2, loc, moved, TCI_C_FETCHES);
    else
        fh->stats.count[TCI_C_FETCHES]++;
}

/* Count a fetch done without the slot lock, of BYTES from the slot
 * (FROM_SLOT) or from the file. */
static void count_unlocked(tcio_file *fh, tci_level2 *l2, tci_location loc, bool from_slot,
                           int64_t bytes)
{
    fh->stats.count[TCI_C_UNLOCKED_FETCHES]++;
    count_fetch(fh, l2, loc, from_slot, bytes, bytes);
}

/* A fetch that never takes the slot.  A slot holding another segment (or
 * none) sends it to the file.  Otherwise the slot is read between two
 * peeks, and the read is kept only if both return the same unlocked word
 * within the transport's peek window (transport.h): a merge, spill, drain
 * or reuse of the slot meanwhile changes the word.  A slot found locked
 * or changed is tried again, at most TRIES times; reads slower than the
 * window would be as slow again, and go to the lock at once.  *DONE: BUF
 * holds the bytes [LO, HI); false otherwise: the caller takes the slot. */
static int fetch_unlocked(tcio_file *fh, tci_level2 *l2, tci_location loc, int64_t segment,
                          char *buf, int lo, int hi, bool *done)
{
    enum { TRIES = 3 };
    tci_transport *t = &l2->t;
    *done = false;
    for (int tries = 0; tries < TRIES; tries++) {
        int64_t state, state_after;
        double started = MPI_Wtime();
        int rc = t->ops->peek(t, loc, &state);
        if (rc != TCIO_SUCCESS)
            return rc;
        tci_slot_header h = tci_state_decode(state);
        if (state != TCI_STATE_LOCKED && h.segment != segment) {
            /* Every byte of it that left a node's tier is in the file (the
             * slot spilled it before it was released for another segment);
             * a forward that claims the slot after the peek is a write
             * racing this fetch, which the visibility contract leaves
             * either way (doc/semantics.md). */
            rc = fetch_from_file(fh, segment, buf, lo, hi);
            *done = rc == TCIO_SUCCESS;
            if (*done)
                count_unlocked(fh, l2, loc, false, hi - lo);
            return rc;
        }
        bool from_slot = false;
        if (state != TCI_STATE_LOCKED) {
            double paused;
            rc = read_unlocked(fh, l2, loc, &h, buf, lo, hi, tries == 0, &from_slot,
                               &paused);
            if (rc == TCIO_SUCCESS)
                rc = t->ops->peek(t, loc, &state_after);
            if (rc != TCIO_SUCCESS)
                return rc;
            bool in_time = MPI_Wtime() - started - paused <= t->ops->peek_window;
            if (state_after == state && in_time) {
                *done = true;
                count_unlocked(fh, l2, loc, from_slot, hi - lo);
                return TCIO_SUCCESS;
            }
            fh->stats.count[TCI_C_FETCH_RETRIES]++;
            if (!in_time)
                break;
        } else {
            fh->stats.count[TCI_C_FETCH_RETRIES]++;
            tci_back_off(tries);
        }
    }
    return TCIO_SUCCESS;
}

bool tci_level2_reached_by_others(const tcio_file *fh)
{
    return fh->can_write || !fh->node.t.ops || fh->read_session;
}

void tci_level2_update_serving(tcio_file *fh)
{
    serve(&fh->l2, tci_level2_reached_by_others(fh));
}

/* A fetch for a file opened MPI_MODE_RDONLY (on every rank: open agrees on
 * the access mode): nobody writes it through libtcio, so every slot of the
 * file's level 2 holds the file's bytes or nothing, and the file is read
 * at once.  The peeks it spares wait for the aggregator's MPI progress
 * under MPICH between nodes.  After a read session the fetches look in
 * the slots first instead: the aggregators loaded them so that nodes
 * would not each read the file. */
static int fetch_read_only(tcio_file *fh, tci_level2 *l2, tci_location loc, int64_t segment,
                           char *buf, int lo, int hi)
{
    int rc = fetch_from_file(fh, segment, buf, lo, hi);
    if (rc == TCIO_SUCCESS)
        count_unlocked(fh, l2, loc, false, hi - lo);
    return rc;
}

int tci_level2_fetch(tcio_file *fh, int64_t segment, char *buf, int lo, int hi,
                     const tci_under_lock *under_lock)
{
    tci_level2 *l2 = &fh->l2;
    tci_transport *t = &l2->t;
    tci_location loc = tci_segmap_locate(&fh->map, segment);
    if (!tci_level2_reached_by_others(fh) && !under_lock)
        return fetch_read_only(fh, l2, loc, segment, buf, lo, hi);
    /* Without the slot lock where the transport can peek, unless work must
     * be done under it (a node's staged forwards laid over the fetch,
     * forward.c): fetches from every node leave the aggregator's slot to
     * its movers, and cost two peeks and the reads instead of a take, the
     * reads and a release. */
    bool done = false;
    int rc = !under_lock && t->ops->peek
                 ? fetch_unlocked(fh, l2, loc, segment, buf, lo, hi, &done)
                 : TCIO_SUCCESS;
    if (rc != TCIO_SUCCESS || done)
        return rc;
    tci_slot_header h;
    rc = t->ops->take(t, loc, &h);
    if (rc != TCIO_SUCCESS)
        return rc;
    bool modified = false, from_file = h.segment != segment;
    int64_t moved = hi - lo;
    if (from_file) {
        rc = fetch_from_file(fh, segment, buf, lo, hi);
    } else if (!(h.flags & TCI_SLOT_LOADED)) {
        modified = true;                 /* loaded whole for the next fetch too */
        moved = fh->map.segment_size;    /* put whole into the slot */
        rc = load_into_slot(fh, l2, loc, &h, buf, true);
    } else {
        rc = t->ops->get_range(t, loc, 1, &(tci_range){ lo, hi }, buf, NULL, NULL);
    }
    if (rc == TCIO_SUCCESS && under_lock)
        rc = under_lock->run(fh, under_lock->arg);
    int release_rc = t->ops->release(t, loc, &h, modified);
    count_busy_takes(fh, l2);
    /* Only bytes that came out of the slot or went into it crossed nodes;
     * a read from the file is a segment load (and fetch_from_file counted
     * it so). */
    if (rc == TCIO_SUCCESS)
        count_fetch(fh, l2, loc, !from_file, hi - lo, moved);
    return rc != TCIO_SUCCESS ? rc : release_rc;
}
