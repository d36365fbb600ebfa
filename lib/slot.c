/* slot.c - the written-byte bitmaps of level-2 slots. */
#include <string.h>
#include "slot.h"

void tci_bitmap_set_range(unsigned char *bitmap, int from, int to)
{
    while (from < to && (from & 7)) {
        bitmap[from >> 3] |= (unsigned char)(1u << (from & 7));
        from++;
    }
    if (to - from >= 8) {
        memset(bitmap + (from >> 3), 0xff, (size_t)((to - from) >> 3));
        from += (to - from) & ~7;
    }
    while (from < to) {
        bitmap[from >> 3] |= (unsigned char)(1u << (from & 7));
        from++;
    }
}

static inline int bit_is(const unsigned char *bitmap, int i)
{
    return (bitmap[i >> 3] >> (i & 7)) & 1;
}

/* First index in [from, limit) whose bit equals WANT, skipping whole bytes
 * that cannot contain it. */
static int scan_for(const unsigned char *bitmap, int from, int limit, int want)
{
    const unsigned char skip = want ? 0x00 : 0xff;
    int i = from;
    while (i < limit) {
        if ((i & 7) == 0 && bitmap[i >> 3] == skip) {
            i += 8;
            continue;
        }
        if (bit_is(bitmap, i) == want)
            return i;
        i++;
    }
    return limit;
}

int tci_bitmap_next_run(const unsigned char *bitmap, int from, int limit, int want, int *end)
{
    int start = scan_for(bitmap, from, limit, want);
    *end = start < limit ? scan_for(bitmap, start, limit, !want) : limit;
    if (*end > limit)
        *end = limit;
    return start;
}
