/* owner.c - an aggregator's duties to its own slots.
 *
 * Early drain: a mover whose put brings a slot's written-byte counter to
 * the segment size marks the slot TCI_SLOT_FULL and adds one to the
 * owner's notice word (level2.c).  The owner, whenever it enters the
 * library, looks at its slots if the notice word changed, confirms with
 * the bitmap that every byte was written, writes those segments and
 * releases the slots clean: they still serve reads, and a new segment can
 * claim them without a spill.
 *
 * Close drain: after the barrier of tcio_close, every dirty slot's written
 * bytes go to the file.
 *
 * Sync drain (tcio_sync): the same while the file stays open; the slots
 * stay with their segments, clean.  Cut (tcio_set_size): the slots drop
 * every byte past the file's new end.
 *
 * The owner reads its slots in place, through the transport's view of
 * them (transport.h). */
#include <stdlib.h>
#include <string.h>
#include "owner.h"
#include "segio.h"
#include "slot_drain.h"
#include "error.h"

static tci_location own_slot(const tcio_file *fh, int64_t slot)
{
    return (tci_location){ .rank = fh->l2.t.self, .slot = slot };
}

/* After the close barrier: whether own slot S holds written bytes (then
 * *D views them by address).  A slot still held is an error (every rank
 * released its slots before the barrier). */
static int close_slot(tcio_file *fh, int64_t s, tci_drain_slot *d, bool *dirty)
{
    tci_transport *t = &fh->l2.t;
    tci_location loc = own_slot(fh, s);
    int64_t state = t->ops->state_in_memory(t, loc);
    tci_slot_header h = tci_state_decode(state);
    *dirty = false;
    if (state == TCI_STATE_LOCKED || tci_state_sharers(state) != 0)
        return TCIO_ERR_MPI;
    if (h.flags & TCI_SLOT_DIRTY) {
        unsigned char *bitmap;
        d->segment = h.segment;
        d->data = t->ops->memory(t, loc, &bitmap);
        d->bitmap = bitmap;
        *dirty = true;
    }
    return TCIO_SUCCESS;
}

int tci_owner_dirty_slots(tcio_file *fh, tci_drain_slot *dirty, int *ndirty)
{
    tci_transport *t = &fh->l2.t;
    /* Called after every rank completed its operations and passed a
     * barrier: synchronise, then read the slots in place. */
    int rc = t->ops->sync(t);
    *ndirty = 0;
    for (int64_t s = 0; s < t->local_slots; s++) {
        bool is_dirty;
        int slot_rc = close_slot(fh, s, &dirty[*ndirty], &is_dirty);
        *ndirty += is_dirty;
        if (rc == TCIO_SUCCESS)
            rc = slot_rc;
    }
    return rc;
}

int tci_owner_drain_slots(tcio_file *fh, const tci_drain_slot *slots, int n)
{
    tci_first_failure first = { 0 };
    for (int i = 0; i < n; i++) {
        int rc = tci_segio_write(tci_file_segio(fh), slots[i].segment, slots[i].data,
                                 slots[i].bitmap);
        /* segments written, as the early and sync drains count them */
        fh->stats.count[TCI_C_CLOSE_DRAINS] += rc == TCIO_SUCCESS;
        tci_first_failure_note(&first, rc);
    }
    return tci_first_failure_result(&first);
}

int tci_owner_drain_all(tcio_file *fh)
{
    tci_transport *t = &fh->l2.t;
    tci_first_failure first = { 0 };
    tci_first_failure_note(&first, t->ops->sync(t));
    /* Keep going after a failed slot, so that the others still reach the
     * file; the first failure is returned, with its reason. */
    for (int64_t s = 0; s < t->local_slots; s++) {
        tci_drain_slot d;
        bool dirty;
        int slot_rc = close_slot(fh, s, &d, &dirty);
        if (slot_rc == TCIO_SUCCESS && dirty)
            slot_rc = tci_owner_drain_slots(fh, &d, 1);
        tci_first_failure_note(&first, slot_rc);
    }
    return tci_first_failure_result(&first);
}

/* ---- early drain ---------------------------------------------------------- */

/* Write slot LOC's segment if it is complete, straight from the slot's
 * memory while the slot is locked, and keep it clean and loaded (the drain
 * engine, slot_drain.h).  Returns whether it was written. */
static bool drain_if_complete(tcio_file *fh, tci_location loc)
{
    bool written = false;
    tci_note_failure(fh, tci_slot_drain(fh, &fh->l2, loc,
                                        (tci_drain_rule){ .only_complete = true,
                                                          .keep = true },
                                        &written));
    fh->stats.count[TCI_C_EARLY_DRAINS] += written;
    return written;
}

/* Write the complete segments of own slots, one at a time, each straight
 * from the slot's memory while its slot is locked.  Returns whether every
 * slot was looked at: a slot that another rank (a reader, a prefetcher)
 * held during the snapshot may be full, and as readers send no notice, the
 * notice that led here must stay unconsumed until a later look sees it.
 * A lock holder here waits only for its own file system, never for another rank, so the
 * protocol stays deadlock-free.  The writes are blocking: a write left in
 * flight would either keep its slot locked until this rank enters the
 * library again (movers would spin on it while this rank computes) or let
 * a load of the segment by another rank race it; and MPICH 4.0's
 * MPI_File_iwrite_at never completes when the device fails
 * (doc/design.md). */
static bool drain_complete_slots(tcio_file *fh)
{
    tci_transport *t = &fh->l2.t;
    /* Lock only the slots that a snapshot shows full: a lock round trip per
     * slot would cost more than the drains. */
    int64_t *states = malloc((size_t)t->local_slots * sizeof *states);
    if (!states)
        return false;     /* nothing lost: the next look tries again */
    int rc = t->ops->peek_states(t, states);
    if (rc != TCIO_SUCCESS) {
        free(states);
        /* Out of memory inside the transport loses nothing either. */
        if (rc != TCIO_ERR_NO_MEMORY)
            tci_note_failure(fh, rc);
        return false;
    }
    bool seen_all = true;
    for (int64_t slot = 0; slot < t->local_slots; slot++) {
        tci_slot_header h = tci_state_decode(states[slot]);
        /* A locked word hides the flags; sharers leave them visible. */
        if (states[slot] == TCI_STATE_LOCKED)
            seen_all = false;
        if (states[slot] == TCI_STATE_LOCKED || !(h.flags & TCI_SLOT_FULL))
            continue;
        drain_if_complete(fh, own_slot(fh, slot));
    }
    free(states);
    return seen_all;
}

void tci_owner_early_drains(tcio_file *fh)
{
    tci_transport *t = &fh->l2.t;
    /* A file opened MPI_MODE_RDONLY has nothing to drain, and the look
     * itself costs an atomic read and a flush of the window under rma. */
    if (t->local_slots == 0 || !fh->config.early_drain || !fh->can_write)
        return;
    double t0 = MPI_Wtime();
    int64_t notices = 0;
    if (tci_note_failure(fh, t->ops->notices(t, &notices)) != TCIO_SUCCESS)
        return;
    if (notices != fh->notices_seen && drain_complete_slots(fh))
        fh->notices_seen = notices;
    fh->stats.time[TCI_T_EARLY_DRAINS] += MPI_Wtime() - t0;
}

/* ---- who drains a segment that a move completed --------------------------- */

/* With tcio_early_drain=mover the mover writes the segment itself when it
 * reaches the slot by address (shm: every slot of the node; rma: its
 * own); otherwise (the default) the owner is notified, so that the file's
 * writes stay on the aggregators (stripe ownership, I/O nodes) and the
 * rank that completed the segment, often the one furthest behind, loses
 * no time to it.  doc/design.md, "Who drains", has the measurements. */
static bool mover_drains(tcio_file *fh, tci_location loc)
{
    tci_transport *t = &fh->l2.t;
    return fh->config.early_drain == TCI_DRAIN_MOVER && t->ops->memory(t, loc, NULL) != NULL;
}

int tci_owner_filled(tcio_file *fh)
{
    tci_level2 *l2 = &fh->l2;
    if (!l2->filled_valid)
        return TCIO_SUCCESS;
    l2->filled_valid = false;
    if (!mover_drains(fh, l2->filled))
        return l2->t.ops->notify(&l2->t, l2->filled);
    double t0 = MPI_Wtime();
    if (drain_if_complete(fh, l2->filled))
        fh->stats.count[TCI_C_MOVER_DRAINS]++;
    fh->stats.time[TCI_T_EARLY_DRAINS] += MPI_Wtime() - t0;
    return TCIO_SUCCESS;
}

/* ---- tcio_sync and tcio_set_size ------------------------------------------ */

/* The slot engine drains each dirty own slot (slot_drain.c) and keeps it,
 * clean: its bitmap and counter cleared, so that later writes of the
 * segment mark their own bytes only and the next write-back (a sieve's
 * read-modify-write too) takes the bytes written now from the file; a
 * slot stays loaded if it was (its bytes and the file's agree now) and
 * one that held only some written bytes stays unloaded (its other bytes
 * are not the file's): the first read loads it from the file, which holds
 * the bytes written now. */
int tci_owner_sync_slots(tcio_file *fh)
{
    tci_transport *t = &fh->l2.t;
    const tci_drain_rule every_dirty = { .only_complete = false, .keep = true };
    tci_first_failure first = { 0 };
    /* Keep going after a failed slot, so that the others still reach the
     * file (the engine makes a failure stick); the first failure is
     * returned, with its reason. */
    for (int64_t s = 0; s < t->local_slots; s++) {
        bool drained = false;
        int slot_rc = tci_slot_drain(fh, &fh->l2, own_slot(fh, s), every_dirty, &drained);
        fh->stats.count[TCI_C_SYNC_DRAINS] += drained;
        tci_first_failure_note(&first, tci_note_failure(fh, slot_rc));
    }
    return tci_first_failure_result(&first);
}

/* In the slot at DATA and BITMAP, holding a segment of SIZE bytes under
 * header H, drop the bytes from FROM on: unmarked, so that no write-back
 * puts them into the file again, and zeroed if the slot holds the file's
 * bytes (the file has zeros there now: nothing, or an extension).
 * Returns whether any byte is still marked. */
static bool cut_inside(char *data, unsigned char *bitmap, int size, int from,
                       const tci_slot_header *h)
{
    tci_bitmap_clear_range(bitmap, from, size);
    if (h->flags & TCI_SLOT_LOADED)
        memset(data + from, 0, (size_t)(size - from));
    int lo, hi;
    return tci_bitmap_shape(bitmap, size, &lo, &hi) > 0;
}

/* Own slot LOC, taken, under header *H: cut at the file offset END.
 * *CHANGED: the slot's memory was (for the release). */
static int cut_taken(tcio_file *fh, tci_location loc, tci_slot_header *h, MPI_Offset end,
                     bool *changed)
{
    tci_transport *t = &fh->l2.t;
    int64_t size = fh->map.segment_size;
    *changed = false;
    if (h->segment == TCI_SLOT_EMPTY || end >= (MPI_Offset)(h->segment + 1) * size)
        return TCIO_SUCCESS;             /* wholly below the end: kept */
    *changed = true;
    int rc = t->ops->sync(t);            /* see the movers' completed updates */
    if (rc != TCIO_SUCCESS)
        return rc;
    MPI_Offset start = (MPI_Offset)h->segment * size;
    unsigned char *bitmap;
    char *data = t->ops->memory(t, loc, &bitmap);
    if (end <= start) {                  /* wholly past it: the slot is empty */
        t->ops->clear_in_memory(t, loc);
        *h = (tci_slot_header){ .segment = TCI_SLOT_EMPTY, .flags = 0 };
    } else if (!cut_inside(data, bitmap, (int)size, (int)(end - start), h)) {
        t->ops->clear_in_memory(t, loc);  /* nothing of it left to write */
        h->flags &= TCI_SLOT_LOADED;
    } else {
        h->flags &= ~TCI_SLOT_FULL;      /* not full any more */
        /* The written-byte counter counted the bytes cut too: it is the
         * bits left now (merges keep it so, level2.c). */
        int64_t left = tci_bitmap_count(bitmap, 0, tci_bitmap_bytes(size) / 8);
        t->ops->add_written_in_memory(t, loc, left - t->ops->add_written_in_memory(t, loc, 0));
    }
    return t->ops->sync(t);              /* our stores before the release */
}

int tci_owner_cut_slots(tcio_file *fh, MPI_Offset size)
{
    tci_transport *t = &fh->l2.t;
    tci_first_failure first = { 0 };
    for (int64_t s = 0; s < t->local_slots; s++) {
        tci_location loc = own_slot(fh, s);
        tci_slot_header h;
        int slot_rc = t->ops->take(t, loc, &h);
        if (slot_rc == TCIO_SUCCESS) {
            bool changed;
            slot_rc = cut_taken(fh, loc, &h, size, &changed);
            int release_rc = t->ops->release(t, loc, &h, changed);
            if (slot_rc == TCIO_SUCCESS)
                slot_rc = release_rc;
        }
        tci_first_failure_note(&first, tci_note_failure(fh, slot_rc));
    }
    return tci_first_failure_result(&first);
}
