/* slot.h - what a level-2 slot holds, whatever the transport: its state
 * word (lock, the file segment held, flags) and its written-byte bitmap.
 * Where the words and bitmaps live, and how they are reached, is the
 * transport's business (transport.h). */
#ifndef TCIO_SLOT_H
#define TCIO_SLOT_H

#include <stdint.h>

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

/* Every slot has two int64 words besides its bitmap and data:
 *   state    TCI_STATE_LOCKED while a mover holds the slot, else the header
 *            packed as (segment + 1) << TCI_FLAG_BITS | flags, so that
 *            taking the lock and reading the header is one atomic swap
 *            (doc/design.md).  Zero is an empty, unlocked slot.
 *   written  bytes moved into the segment since it was claimed (added by
 *            movers, reset by the holder of the lock): a cheap trigger for
 *            early drain; overwrites make it overcount, so the owner
 *            confirms with the bitmap.
 * Segment numbers must stay at or below TCI_MAX_SEGMENT (api.c bounds
 * offsets). */
#define TCI_STATE_LOCKED    INT64_MIN
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

/* Bytes of the written-byte bitmap of a SEGMENT_SIZE-byte segment: bit i
 * is set when byte i was written; rounded up to whole 64-bit words. */
static inline int tci_bitmap_bytes(int64_t segment_size)
{
    return (int)(((segment_size + 7) / 8 + 7) / 8 * 8);
}

/* Set bits [from, to) of BITMAP. */
void tci_bitmap_set_range(unsigned char *bitmap, int from, int to);

/* Next run of set (WANT=1) or clear (WANT=0) bits at or after FROM, below
 * LIMIT: returns its start (LIMIT if none) and stores its end in *END. */
int tci_bitmap_next_run(const unsigned char *bitmap, int from, int limit, int want, int *end);

#endif
