/* segmap.h - which rank and slot hold a file segment (equations 1-3 of the
 * TCIO paper).  This is the only place that knows the placement: moving
 * level-2 segments onto aggregators changes tci_segmap_locate alone. */
#ifndef TCIO_SEGMAP_H
#define TCIO_SEGMAP_H

#include <stdint.h>

typedef struct tci_segmap {
    int64_t segment_size;  /* bytes per segment */
    int     nowners;       /* ranks holding level-2 segments */
    int64_t nslots;        /* level-2 slots per owner */
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

/* Owner and slot of file segment SEGMENT (equations 1 and 2, the slot taken
 * modulo the slot count so that any file size fits). */
tci_location tci_segmap_locate(const tci_segmap *m, int64_t segment);

#endif
