/* segmap.c - placement of file segments on level-2 slots. */
#include "segmap.h"

tci_location tci_segmap_locate(const tci_segmap *m, int64_t segment)
{
    tci_location loc;
    loc.rank = (int)(segment % m->nowners);
    loc.slot = (segment / m->nowners) % m->nslots;
    return loc;
}
