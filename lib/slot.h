/* slot.h - what a level-2 slot holds, whatever the transport: its state
 * word (lock, the file segment held, flags), its written-byte bitmap, and
 * where they lie in an aggregator's level-2 memory.  How they are reached
 * is the transport's business (transport.h). */
#ifndef TCIO_SLOT_H
#define TCIO_SLOT_H

#include <stdint.h>
#include <string.h>

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
 *   state    TCI_STATE_LOCKED while a mover holds the slot exclusively,
 *            else the header packed as
 *              (segment + 1) << TCI_SEGMENT_SHIFT | sharers << TCI_SHARERS_SHIFT
 *              | TCI_STATE_READERS | TCI_STATE_WAITING | flags
 *            so that taking the lock and reading the header is one atomic
 *            swap (doc/design.md).  Zero is an empty, unlocked slot.  The
 *            sharer count, TCI_STATE_READERS (the sharers are readers) and
 *            TCI_STATE_WAITING (an exclusive taker waits for the sharers to
 *            leave: no new sharer may enter) belong to the transports with
 *            shared access (shm); tci_state_decode drops them, and the 6
 *            bits between them and the segment, which shm leaves zero.  A
 *            transport without shared access keeps its own count in these
 *            20 bits (rma: a version, transport_rma.c) and hides it from
 *            state_in_memory and peek_states.
 *   written  bytes moved into the segment since it was claimed (added by
 *            movers, reset by the holder of the lock): a cheap trigger for
 *            early drain; overwrites make it overcount, so the owner
 *            confirms with the bitmap.  A forward's merge into the file's
 *            level 2 (several nodes) sets it to the bitmap's set bits
 *            exactly, and a cut recounts it (owner.c).
 * Segment numbers must stay at or below TCI_MAX_SEGMENT (open.c bounds
 * offsets). */
#define TCI_STATE_LOCKED    INT64_MIN
#define TCI_STATE_WAITING   INT64_C(0x8)
#define TCI_STATE_READERS   INT64_C(0x10)
#define TCI_SHARERS_SHIFT   5
#define TCI_SHARERS_BITS    12
#define TCI_MAX_SHARERS     ((INT64_C(1) << TCI_SHARERS_BITS) - 1)
#define TCI_ONE_SHARER      (INT64_C(1) << TCI_SHARERS_SHIFT)
#define TCI_SEGMENT_SHIFT   (TCI_SHARERS_SHIFT + TCI_SHARERS_BITS + 6)
#define TCI_MAX_SEGMENT     ((INT64_C(1) << (63 - TCI_SEGMENT_SHIFT)) - 2)

static inline int64_t tci_state_encode(const tci_slot_header *h)
{
    return ((h->segment + 1) << TCI_SEGMENT_SHIFT) | h->flags;
}

static inline tci_slot_header tci_state_decode(int64_t state)
{
    tci_slot_header h = { .segment = (state >> TCI_SEGMENT_SHIFT) - 1,
                          .flags = state & ((1 << TCI_FLAG_BITS) - 1) };
    return h;
}

/* Movers sharing a slot whose state word is STATE (not locked). */
static inline int64_t tci_state_sharers(int64_t state)
{
    return (state >> TCI_SHARERS_SHIFT) & TCI_MAX_SHARERS;
}

/* Bytes of the written-byte bitmap of a SEGMENT_SIZE-byte segment: bit i
 * is set when byte i was written; rounded up to whole 64-bit words. */
static inline int tci_bitmap_bytes(int64_t segment_size)
{
    return (int)(((segment_size + 7) / 8 + 7) / 8 * 8);
}

/* The level-2 memory of one aggregator, laid out alike by every transport
 * that reaches slots through memory (doc/design.md, "Level 2: slots and the transport"):
 *   [ notice word (64 B) ][ N headers (32 B) ][ N bitmaps ][ N segments ]
 * A header holds the state word, then the written-byte counter, then the
 * loaded span (below; shm only, zero elsewhere).  The whole
 * is rounded up to a cache line: MPICH 4.0.2 misplaces other ranks'
 * accesses into windows whose size is not a multiple of 16 bytes. */
#define TCI_NOTICE_BYTES   64
#define TCI_HEADER_BYTES   32
#define TCI_WRITTEN_OFFSET 8
#define TCI_SPAN_OFFSET    16

/* The loaded span of a slot that is not TCI_SLOT_LOADED: the bytes
 * [lo, hi) of its segment hold the downstream's content (under the bytes
 * written since), loaded for readers that wanted only them (a node's
 * tier, level2.c "partial loads").  One int64 beside the state word,
 * touched only under the exclusive lock: lo << 32 | hi, zero for none.
 * Every clear of a slot's bitmap and counter (a claim's reset, a drain's
 * settle, emptying the window) zeroes it, so a span never outlives the
 * claim of the segment it was loaded for. */
static inline int64_t tci_span_encode(int lo, int hi)
{
    return lo < hi ? (int64_t)lo << 32 | (int64_t)(uint32_t)hi : 0;
}
static inline void tci_span_decode(int64_t span, int *lo, int *hi)
{
    *lo = (int)(span >> 32);
    *hi = (int)(uint32_t)span;
}

static inline int64_t tci_layout_header(int64_t slot)
{
    return TCI_NOTICE_BYTES + slot * TCI_HEADER_BYTES;
}
static inline int64_t tci_layout_bitmap(int64_t nslots, int64_t segment_size, int64_t slot)
{
    return TCI_NOTICE_BYTES + nslots * TCI_HEADER_BYTES + slot * tci_bitmap_bytes(segment_size);
}
static inline int64_t tci_layout_data(int64_t nslots, int64_t segment_size, int64_t slot)
{
    return tci_layout_bitmap(nslots, segment_size, nslots) + slot * segment_size;
}
/* Bytes of an aggregator's level-2 memory for NSLOTS slots. */
static inline int64_t tci_layout_bytes(int64_t nslots, int64_t segment_size)
{
    return (tci_layout_data(nslots, segment_size, nslots) + 63) / 64 * 64;
}

/* The size to ask MPI_Win_allocate for LAYOUT bytes: never a whole number
 * of PAGE-byte pages.  When every rank's size is a page multiple, MPICH's
 * ch4 first tries a symmetric heap (one address on every rank), checking
 * each candidate address range with one msync(2) per page of the node's
 * whole window; at 4 ranks on two "nodes" that made a 16 MiB window cost
 * 96-136 ms against 32-80 ms one cache line larger (doc/records/nodes.md).
 * Still a multiple of 64 (see above). */
static inline int64_t tci_window_bytes(int64_t layout, int64_t page)
{
    return layout > 0 && page > 0 && layout % page == 0 ? layout + 64 : layout;
}

/* Bit I of BITMAP (byte I of the segment written or not). */
static inline int tci_bitmap_bit(const unsigned char *bitmap, int i)
{
    return (bitmap[i >> 3] >> (i & 7)) & 1;
}

/* Bits 64*WORD .. 64*WORD+63 of BITMAP, bit i of the result for byte
 * 64*WORD+i of the segment, whatever the machine's byte order. */
static inline uint64_t tci_bitmap_word(const unsigned char *bitmap, int64_t word)
{
    uint64_t w;
    memcpy(&w, bitmap + word * 8, sizeof w);      /* one load */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);                     /* byte 0 holds bits 0-7 */
#endif
    return w;
}

/* Store W as bits 64*WORD .. 64*WORD+63 of BITMAP (tci_bitmap_word's
 * inverse). */
static inline void tci_bitmap_set_word(unsigned char *bitmap, int64_t word, uint64_t w)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    memcpy(bitmap + word * 8, &w, sizeof w);      /* one store */
}

/* The number of set bits of W. */
static inline int tci_popcount64(uint64_t w)
{
    w = w - ((w >> 1) & UINT64_C(0x5555555555555555));
    w = (w & UINT64_C(0x3333333333333333)) + ((w >> 2) & UINT64_C(0x3333333333333333));
    w = (w + (w >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
    return (int)((w * UINT64_C(0x0101010101010101)) >> 56);
}

/* The number of set bits in words [FIRST, END) of BITMAP. */
static inline int64_t tci_bitmap_count(const unsigned char *bitmap, int first, int end)
{
    int64_t n = 0;
    for (int w = first; w < end; w++)
        n += tci_popcount64(tci_bitmap_word(bitmap, w));
    return n;
}

/* How the set bits of the first SIZE bits of BITMAP lie: returns the
 * number of runs, and stores the span [*LO, *HI) from the first to the
 * last set bit (both 0 when none is set).  One pass, a word at a time. */
int64_t tci_bitmap_shape(const unsigned char *bitmap, int size, int *lo, int *hi);

/* Set, or clear, bits [from, to) of BITMAP. */
void tci_bitmap_set_range(unsigned char *bitmap, int from, int to);
void tci_bitmap_clear_range(unsigned char *bitmap, int from, int to);

/* Next run of set (WANT=1) or clear (WANT=0) bits at or after FROM, below
 * LIMIT: returns its start (LIMIT if none) and stores its end in *END. */
int tci_bitmap_next_run(const unsigned char *bitmap, int from, int limit, int want, int *end);

#endif
