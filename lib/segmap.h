/* segmap.h - which rank and slot hold a file segment (equations 1-3 of the
 * TCIO paper, with the owners restricted to the aggregators).  The
 * placement is defined here; prefetch.c's read sessions walk it in the
 * other direction for an aggregator's own segments (load_own_segments),
 * and must change with it. */
#ifndef TCIO_SEGMAP_H
#define TCIO_SEGMAP_H

#include <stdint.h>

typedef struct tci_segmap {
    int64_t    segment_size;    /* bytes per segment */
    int        naggregators;    /* ranks holding level-2 segments */
    const int *aggregator_rank; /* their ranks: segment k lives on
                                   aggregator_rank[k % naggregators] */
    int64_t    nslots;          /* level-2 slots per aggregator */
} tci_segmap;

typedef struct tci_location {
    int     rank;          /* owner of the segment's level-2 slot */
    int64_t slot;          /* slot index within the owner's window */
} tci_location;

/* File segment that holds byte OFFSET (>= 0). */
static inline int64_t tci_segment_of(const tci_segmap *m, int64_t offset)
{
    return offset / m->segment_size;
}

/* Displacement of byte OFFSET inside its segment (equation 3). */
static inline int64_t tci_disp_of(const tci_segmap *m, int64_t offset)
{
    return offset % m->segment_size;
}

/* The piece of [offset, offset+bytes) that lies in OFFSET's segment:
 * stores the segment and the displacement in it, returns the length. */
static inline int tci_segment_piece(const tci_segmap *m, int64_t offset, int64_t bytes,
                                    int64_t *segment, int *disp)
{
    *segment = tci_segment_of(m, offset);
    *disp = (int)tci_disp_of(m, offset);
    int64_t room = m->segment_size - *disp;
    return (int)(bytes < room ? bytes : room);
}

/* Owner and slot of file segment SEGMENT (equations 1 and 2 over the
 * aggregators, the slot taken modulo the slot count so that any file size
 * fits). */
/* The index in M's aggregators of the one that holds SEGMENT. */
int tci_segmap_aggregator(const tci_segmap *m, int64_t segment);

tci_location tci_segmap_locate(const tci_segmap *m, int64_t segment);

/* The segment that slot SLOT of aggregator AGGREGATOR holds first at or
 * after segment FROM (the inverse of tci_segmap_locate). */
int64_t tci_segmap_first_in_slot(const tci_segmap *m, int aggregator, int64_t slot,
                                 int64_t from);

#endif
