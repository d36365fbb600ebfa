/* slot_drain.c - the drain engine (slot_drain.h; doc/design.md, "Early
 * drain" and "Several nodes: the combining tier"). */
#include "slot_drain.h"
#include "error.h"

/* Whether every byte of the segment in BITMAP was written. */
static bool segment_complete(int64_t segment_size, const unsigned char *bitmap)
{
    int size = (int)segment_size, end;
    return tci_bitmap_next_run(bitmap, 0, size, 0, &end) == size;
}

/* Whether the taken slot, under header *H, is to be drained by RULE; a
 * FULL mark that its bitmap refutes is dropped from *H. */
static bool wanted(tci_level2 *l2, tci_location loc, tci_slot_header *h, tci_drain_rule rule)
{
    tci_transport *t = &l2->t;
    if (!(h->flags & TCI_SLOT_DIRTY))
        return false;
    if (!rule.only_complete)
        return true;
    if (!(h->flags & TCI_SLOT_FULL))
        return false;
    unsigned char *bitmap;
    t->ops->memory(t, loc, &bitmap);
    if (segment_complete(t->map->segment_size, bitmap))
        return true;
    h->flags &= ~TCI_SLOT_FULL;          /* overwrites, not every byte */
    return false;
}

/* The taken slot's segment went downstream (or, emptying, was clean):
 * clear it, and keep it or empty it by RULE.  A kept slot is loaded when
 * every byte of it is the downstream's now: it was loaded before, or
 * every byte was written (a complete segment); a slot that held only some
 * written bytes (tcio_sync's drain of a partly written segment) stays
 * unloaded, and its first read loads it from downstream. */
static int settle_slot(tci_level2 *l2, tci_location loc, tci_slot_header *h,
                       tci_drain_rule rule)
{
    tci_transport *t = &l2->t;
    bool loaded = false;
    if (rule.keep) {
        unsigned char *bitmap;
        t->ops->memory(t, loc, &bitmap);
        loaded = rule.only_complete || (h->flags & TCI_SLOT_LOADED) ||
                 segment_complete(t->map->segment_size, bitmap);
    }
    t->ops->clear_in_memory(t, loc);
    if (rule.keep)
        h->flags = loaded ? TCI_SLOT_LOADED : 0;
    else
        *h = (tci_slot_header){ .segment = TCI_SLOT_EMPTY, .flags = 0 };
    return t->ops->sync(t);              /* our stores before the release */
}

int tci_slot_drain(tcio_file *fh, tci_level2 *l2, tci_location loc, tci_drain_rule rule,
                   bool *drained)
{
    tci_transport *t = &l2->t;
    tci_slot_header h;
    *drained = false;
    int rc = t->ops->take(t, loc, &h);
    fh->stats.count[TCI_C_BUSY_TAKES] += t->busy_takes;
    t->busy_takes = 0;
    if (rc != TCIO_SUCCESS)
        return rc;
    /* See the movers' completed updates of the slot before reading it. */
    rc = t->ops->sync(t);
    bool drain = rc == TCIO_SUCCESS && wanted(l2, loc, &h, rule);
    if (drain) {
        unsigned char *bitmap;
        const char *data = t->ops->memory(t, loc, &bitmap);
        rc = tci_note_failure(fh, l2->down->drain(fh, h.segment, data, bitmap));
        *drained = rc == TCIO_SUCCESS;
    }
    /* Emptying: a clean segment leaves the slot too. */
    bool settle = *drained || (rc == TCIO_SUCCESS && !rule.only_complete && !rule.keep &&
                               h.segment != TCI_SLOT_EMPTY);
    if (settle)
        rc = settle_slot(l2, loc, &h, rule);
    /* A settled slot's bitmap and counter were cleared (the release grows
     * its version: readers that did not lock it see the change). */
    int release_rc = t->ops->release(t, loc, &h, settle);
    return rc != TCIO_SUCCESS ? rc : release_rc;
}
