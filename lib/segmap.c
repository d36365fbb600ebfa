/* segmap.c - placement of file segments on the aggregators' level-2 slots. */
#include "segmap.h"

int tci_segmap_aggregator(const tci_segmap *m, int64_t segment)
{
    return (int)(segment % m->naggregators);
}

tci_location tci_segmap_locate(const tci_segmap *m, int64_t segment)
{
    tci_location loc;
    loc.rank = m->aggregator_rank[tci_segmap_aggregator(m, segment)];
    loc.slot = (segment / m->naggregators) % m->nslots;
    return loc;
}

int64_t tci_segmap_first_in_slot(const tci_segmap *m, int aggregator, int64_t slot,
                                 int64_t from)
{
    /* Segments of one slot are aggregator + A * (slot + N * j), j >= 0. */
    int64_t period = (int64_t)m->naggregators * m->nslots;
    int64_t first = aggregator + (int64_t)m->naggregators * slot;
    if (first >= from)
        return first;
    return first + (from - first + period - 1) / period * period;
}
