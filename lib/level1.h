/* level1.h - the per-rank level-1 buffer: one segment of data aligned to
 * one file segment, a bitmap of the bytes written into it (writing) or
 * requested from it (reading), and the pending reads waiting for their
 * data. */
#ifndef TCIO_LEVEL1_H
#define TCIO_LEVEL1_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

/* A set of byte ranges inside one segment, kept as two parallel arrays so
 * that it can be handed to MPI_Type_indexed as it is. */
typedef struct tci_extents {
    int    *disp;
    int    *len;
    int     count;
    int     capacity;
    bool    sorted;     /* disp ascending and no two ranges overlap/touch */
} tci_extents;

int  tci_extents_init(tci_extents *e, int segment_size);
void tci_extents_free(tci_extents *e);
static inline void tci_extents_clear(tci_extents *e) { e->count = 0; e->sorted = true; }

/* Make sure that the next tci_extents_add cannot fail.  Returns 0 or -1
 * (no memory; the set is unchanged). */
int tci_extents_reserve(tci_extents *e);

/* Append [disp, disp+len) as a new range (the slow half of
 * tci_extents_add).  Returns 0 or -1 (no memory; the set is unchanged). */
int tci_extents_append(tci_extents *e, int disp, int len);

/* Record [disp, disp+len).  Merges with the last range when they touch or
 * overlap, so a stream of adjacent writes stays one range.  Returns 0, or
 * -1 when memory runs out (the set is then unchanged).  Inline: it runs
 * once per tcio_write/tcio_read. */
static inline int tci_extents_add(tci_extents *e, int disp, int len)
{
    if (e->count > 0) {
        int last = e->count - 1;
        int last_end = e->disp[last] + e->len[last];
        if (disp >= e->disp[last] && disp <= last_end) {
            if (disp + len > last_end)
                e->len[last] = disp + len - e->disp[last];
            return 0;
        }
    }
    return len > 0 ? tci_extents_append(e, disp, len) : 0;
}

/* Sort and merge overlapping or touching ranges.  Returns 0 or -1 (no
 * memory; the set is unchanged). */
int tci_extents_normalize(tci_extents *e);

/* A read waiting for data: LEN bytes at DISP in the segment go to DST. */
typedef struct tci_read_piece {
    char *dst;
    int   disp;
    int   len;
} tci_read_piece;

typedef enum tci_l1_mode { TCI_L1_IDLE, TCI_L1_WRITING, TCI_L1_READING } tci_l1_mode;

typedef struct tci_level1 {
    char           *buf;       /* segment_size bytes */
    int64_t         segment;   /* file segment the buffer is aligned to */
    int64_t         start;     /* its first byte: segment x segment size */
    int64_t         end;       /* one past its last byte */
    tci_l1_mode     mode;
    /* Bit b of MARKED[w] is set when byte 64w+b of the buffer was written
     * (writing) or is to be read (reading): the level-2 bitmap's
     * numbering (slot.h).  Only words in [MARKED_LO, MARKED_HI) can have
     * set bits (LO >= HI: none). */
    uint64_t       *marked;
    int             marked_lo, marked_hi;
    tci_extents     extents;   /* the marked runs, for transports that move
                                  extents (tci_level1_marked_extents) */
    tci_read_piece *reads;
    int             nreads;
    int             reads_capacity;
} tci_level1;

int  tci_level1_init(tci_level1 *l1, int segment_size);
/* A view of a segment whose data live elsewhere (a node's forward,
 * combiner.c): the marks and extents of tci_level1_init, no buffer (BUF
 * is NULL until the user aims it), and nothing touched in advance, so
 * that a view set up at every open costs nothing until it is used. */
int  tci_level1_init_view(tci_level1 *l1, int segment_size);
void tci_level1_free(tci_level1 *l1);

/* Forget the buffered extents and reads (after they were moved). */
void tci_level1_reset(tci_level1 *l1);

/* Align the (empty) buffer to SEGMENT of SIZE bytes in MODE. */
void tci_level1_aim(tci_level1 *l1, tci_l1_mode mode, int64_t segment, int64_t size);

/* Whether [offset, offset+len) lies in the buffer's segment in MODE. */
static inline int tci_level1_holds(const tci_level1 *l1, tci_l1_mode mode, int64_t offset,
                                   int64_t len)
{
    return l1->mode == mode && offset >= l1->start && len <= l1->end - offset;
}

/* Copy LEN bytes from SRC to DST: the element sizes of the per-access
 * path as single moves, anything else through memcpy. */
static inline void tci_copy_small(char *dst, const void *src, int len)
{
    switch (len) {
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, (size_t)len);
    }
}

/* Set BITS in bitmap word WORD and widen the marked range to it: the
 * in-word case of every mark (tci_level1_mark, and the per-access fast
 * path's element writes and reads, whose checks already placed the bits). */
static inline void tci_level1_mark_word(tci_level1 *l1, int word, uint64_t bits)
{
    l1->marked[word] |= bits;
    if (word < l1->marked_lo)
        l1->marked_lo = word;
    if (word >= l1->marked_hi)
        l1->marked_hi = word + 1;
}

/* Mark [DISP, DISP+LEN) when it spans more than one word (the slow half
 * of tci_level1_mark). */
void tci_level1_mark_span(tci_level1 *l1, int disp, int len);

/* Mark [DISP, DISP+LEN) of the buffer as written or wanted (LEN > 0).
 * Inline: it runs once per tcio_write and tcio_read. */
static inline void tci_level1_mark(tci_level1 *l1, int disp, int len)
{
    int word = disp >> 6, bit = disp & 63;
    if (bit + len > 64) {
        tci_level1_mark_span(l1, disp, len);
        return;
    }
    uint64_t ones = len == 64 ? ~UINT64_C(0) : (UINT64_C(1) << len) - 1;
    tci_level1_mark_word(l1, word, ones << bit);
}

/* Copy LEN bytes of SRC into the buffer at DISP and mark them written.
 * The buffer must be in writing mode for the right segment. */
static inline void tci_level1_write(tci_level1 *l1, int disp, const void *src, int len)
{
    tci_copy_small(l1->buf + disp, src, len);
    tci_level1_mark(l1, disp, len);
}

/* Bytes marked: the set bits of MARKED. */
int64_t tci_level1_marked_bytes(const tci_level1 *l1);

/* One past the last marked byte of the buffer, as a file offset; -1 when
 * none is marked. */
int64_t tci_level1_marked_end(const tci_level1 *l1);

/* The bitmap of marked bytes in the layout of a slot's written-byte
 * bitmap (slot.h, whole 64-bit words): MARKED itself on little-endian
 * machines, else a copy in SCRATCH (tci_bitmap_bytes of the segment). */
const unsigned char *tci_level1_marked_bitmap(const tci_level1 *l1, unsigned char *scratch,
                                              int segment_size);

/* The marked runs as L1->extents (sorted, disjoint, each as long as it
 * can be), for transports that move extents.  Returns 0 or -1 (no
 * memory). */
int tci_level1_marked_extents(tci_level1 *l1);

/* Whether the buffer holds writes to move, or reads to fetch. */
static inline bool tci_level1_has_writes(const tci_level1 *l1)
{
    return l1->mode == TCI_L1_WRITING && l1->marked_lo < l1->marked_hi;
}
static inline bool tci_level1_has_reads(const tci_level1 *l1)
{
    return l1->mode == TCI_L1_READING && l1->nreads > 0;
}

/* Grow the pending reads' array (the slow half of tci_level1_add_read).
 * Returns 0 or -1 (no memory; nothing changed). */
int tci_level1_grow_reads(tci_level1 *l1);

/* Record a read of LEN bytes at DISP into DST (LEN > 0).  Returns 0, or
 * -1 when memory runs out (nothing recorded then).  Inline: it runs once
 * per tcio_read. */
static inline int tci_level1_add_read(tci_level1 *l1, int disp, void *dst, int len)
{
    if (l1->nreads == l1->reads_capacity && tci_level1_grow_reads(l1) != 0)
        return -1;
    tci_level1_mark(l1, disp, len);
    l1->reads[l1->nreads++] = (tci_read_piece){ .dst = dst, .disp = disp, .len = len };
    return 0;
}

/* Copy the fetched bytes from the buffer to each pending read's DST. */
void tci_level1_deliver_reads(tci_level1 *l1);

/* A range [lo, hi) of a segment's bytes. */
typedef struct tci_range {
    int lo, hi;
} tci_range;

/* The most ranges a forward moves (a merge's gets and puts, a staged
 * message), and the shortest stretch of unmarked bitmap words (32 KiB of
 * the segment) that splits a node's bytes into two ranges: each range is
 * two more one-sided operations in the same flight of a merge, worth it
 * once the stretch's bytes (in and out, with their bitmap) outweigh a
 * message's overhead on a network, a few microseconds, or tens of KiB. */
#define TCI_MAX_RANGES 4
#define TCI_RANGE_SPLIT_WORDS 512

/* The ranges of L1's segment (SEGMENT_SIZE bytes) that hold its marked
 * bytes, into R; returns how many (1 to TCI_MAX_RANGES; 0 when nothing is
 * marked): from the first to the last marked word, cut at the
 * TCI_MAX_RANGES - 1 longest stretches of unmarked words of at least
 * TCI_RANGE_SPLIT_WORDS.  In bytes, whole words, the last range ending at
 * SEGMENT_SIZE at most. */
int tci_level1_ranges(const tci_level1 *l1, int segment_size, tci_range *r);

#endif
