/* slot.c - the written-byte bitmaps of level-2 slots: setting ranges,
 * finding runs, and the shape of the written bytes (segio.c sieves by it). */
#include <stdbool.h>
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

void tci_bitmap_clear_range(unsigned char *bitmap, int from, int to)
{
    while (from < to && (from & 7)) {
        bitmap[from >> 3] &= (unsigned char)~(1u << (from & 7));
        from++;
    }
    if (to - from >= 8) {
        memset(bitmap + (from >> 3), 0, (size_t)((to - from) >> 3));
        from += (to - from) & ~7;
    }
    while (from < to) {
        bitmap[from >> 3] &= (unsigned char)~(1u << (from & 7));
        from++;
    }
}

/* First index in [from, limit) whose bit equals WANT, a 64-bit word at a
 * time: a drain's check that a segment is complete and a spill's runs
 * cost a few instructions per 64 bytes, not per byte. */
static int scan_for(const unsigned char *bitmap, int from, int limit, int want)
{
    int i = from;
    while (i < limit) {
        uint64_t w = tci_bitmap_word(bitmap, i / 64);
        if (!want)
            w = ~w;
        w >>= i % 64;                   /* bits from I on */
        if (w)
            return i + __builtin_ctzll(w) < limit ? i + __builtin_ctzll(w) : limit;
        i = (i / 64 + 1) * 64;
    }
    return limit;
}

int tci_bitmap_next_run(const unsigned char *bitmap, int from, int limit, int want, int *end)
{
    int start = scan_for(bitmap, from, limit, want);
    *end = start < limit ? scan_for(bitmap, start, limit, !want) : limit;
    return start;
}

static int lowest_bit(uint64_t w)     /* W != 0 */
{
    return __builtin_ctzll(w);
}

static int highest_bit(uint64_t w)    /* W != 0 */
{
    return 63 - __builtin_clzll(w);
}

/* A run starts at every set bit whose predecessor is clear. */
int64_t tci_bitmap_shape(const unsigned char *bitmap, int size, int *lo, int *hi)
{
    int64_t runs = 0, nwords = (size + 63) / 64;
    uint64_t carry = 0;     /* the last bit of the previous word */
    *lo = *hi = 0;
    bool any = false;
    for (int64_t i = 0; i < nwords; i++) {
        uint64_t w = tci_bitmap_word(bitmap, i);
        if (i == nwords - 1 && size % 64)
            w &= (UINT64_C(1) << (size % 64)) - 1;    /* bits past the segment */
        if (w) {
            runs += tci_popcount64(w & ~(w << 1 | carry));
            if (!any)
                *lo = (int)(i * 64 + lowest_bit(w));
            *hi = (int)(i * 64 + highest_bit(w) + 1);
            any = true;
        }
        carry = w >> 63;
    }
    return runs;
}
