/* level1.c - the level-1 buffer, its bitmap of marked bytes, extent lists. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "level1.h"
#include "pages.h"
#include "slot.h"

#define INITIAL_EXTENTS 64

int tci_extents_init(tci_extents *e, int segment_size)
{
    (void)segment_size;    /* the list grows as needed (see reserve_one) */
    e->disp = malloc(INITIAL_EXTENTS * sizeof *e->disp);
    e->len = malloc(INITIAL_EXTENTS * sizeof *e->len);
    e->capacity = INITIAL_EXTENTS;
    tci_extents_clear(e);
    if (!e->disp || !e->len) {
        tci_extents_free(e);
        return -1;
    }
    return 0;
}

void tci_extents_free(tci_extents *e)
{
    free(e->disp);
    free(e->len);
    e->disp = e->len = NULL;
    e->count = e->capacity = 0;
}

static int grow_extents(tci_extents *e)
{
    int cap = e->capacity * 2;
    int *d = realloc(e->disp, (size_t)cap * sizeof *d);
    if (!d)
        return -1;
    e->disp = d;
    int *l = realloc(e->len, (size_t)cap * sizeof *l);
    if (!l)
        return -1;
    e->len = l;
    e->capacity = cap;
    return 0;
}

/* Make room for one more range.  Rewrites of the same bytes would grow the
 * list without bound, so a full list is normalised first: a normalised list
 * holds at most segment size / 2 + 1 ranges, which bounds the memory. */
static int reserve_one(tci_extents *e)
{
    if (e->count < e->capacity)
        return 0;
    if (!e->sorted && tci_extents_normalize(e) != 0)
        return -1;
    if (e->count * 2 < e->capacity)
        return 0;
    return grow_extents(e);
}

int tci_extents_reserve(tci_extents *e)
{
    return reserve_one(e);
}

int tci_extents_append(tci_extents *e, int disp, int len)
{
    if (e->count > 0 && disp < e->disp[e->count - 1] + e->len[e->count - 1])
        e->sorted = false;
    if (reserve_one(e) != 0)
        return -1;
    e->disp[e->count] = disp;
    e->len[e->count] = len;
    e->count++;
    return 0;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int tci_extents_normalize(tci_extents *e)
{
    if (e->sorted || e->count < 2) {
        e->sorted = true;
        return 0;
    }
    /* Sort (disp, len) pairs as one 64-bit key each: disp decides. */
    uint64_t *keys = malloc((size_t)e->count * sizeof *keys);
    if (!keys)
        return -1;
    for (int i = 0; i < e->count; i++)
        keys[i] = ((uint64_t)(uint32_t)e->disp[i] << 32) | (uint32_t)e->len[i];
    qsort(keys, (size_t)e->count, sizeof *keys, compare_u64);
    int n = 0;
    for (int i = 0; i < e->count; i++) {
        int d = (int)(keys[i] >> 32), l = (int)(uint32_t)keys[i];
        if (n > 0 && d <= e->disp[n - 1] + e->len[n - 1]) {
            int end = d + l;
            if (end > e->disp[n - 1] + e->len[n - 1])
                e->len[n - 1] = end - e->disp[n - 1];
        } else {
            e->disp[n] = d;
            e->len[n] = l;
            n++;
        }
    }
    free(keys);
    e->count = n;
    e->sorted = true;
    return 0;
}

static size_t marked_words(int segment_size)
{
    return ((size_t)segment_size + 63) / 64;
}

int tci_level1_init(tci_level1 *l1, int segment_size)
{
    memset(l1, 0, sizeof *l1);
    l1->buf = malloc((size_t)segment_size);
    tci_pages_populate(l1->buf, (size_t)segment_size);   /* every byte will be used */
    l1->marked = calloc(marked_words(segment_size), sizeof *l1->marked);
    tci_pages_populate(l1->marked, marked_words(segment_size) * sizeof *l1->marked);
    l1->marked_lo = INT_MAX;
    l1->marked_hi = 0;
    tci_level1_reset(l1);
    if (!l1->buf || !l1->marked || tci_extents_init(&l1->extents, segment_size) != 0) {
        tci_level1_free(l1);
        return -1;
    }
    return 0;
}

int tci_level1_init_view(tci_level1 *l1, int segment_size)
{
    memset(l1, 0, sizeof *l1);
    l1->marked = calloc(marked_words(segment_size), sizeof *l1->marked);
    l1->marked_lo = INT_MAX;
    l1->marked_hi = 0;
    if (!l1->marked || tci_extents_init(&l1->extents, segment_size) != 0) {
        tci_level1_free(l1);
        return -1;
    }
    tci_level1_reset(l1);
    return 0;
}

void tci_level1_free(tci_level1 *l1)
{
    free(l1->buf);
    free(l1->marked);
    free(l1->reads);
    tci_extents_free(&l1->extents);
    memset(l1, 0, sizeof *l1);
}

void tci_level1_reset(tci_level1 *l1)
{
    tci_extents_clear(&l1->extents);
    if (l1->marked_lo < l1->marked_hi)
        memset(l1->marked + l1->marked_lo, 0,
               (size_t)(l1->marked_hi - l1->marked_lo) * sizeof *l1->marked);
    l1->marked_lo = INT_MAX;
    l1->marked_hi = 0;
    l1->nreads = 0;
    l1->mode = TCI_L1_IDLE;
    l1->segment = -1;
    l1->start = l1->end = -1;
}

/* ---- the bitmap of marked bytes ----------------------------------------------- */

void tci_level1_mark_span(tci_level1 *l1, int disp, int len)
{
    int first = disp >> 6, last = (disp + len - 1) >> 6;
    int lo_bit = disp & 63, hi_bit = (disp + len - 1) & 63;
    uint64_t head = ~UINT64_C(0) << lo_bit;
    uint64_t tail = ~UINT64_C(0) >> (63 - hi_bit);
    if (first == last) {
        l1->marked[first] |= head & tail;
    } else {
        l1->marked[first] |= head;
        for (int w = first + 1; w < last; w++)
            l1->marked[w] = ~UINT64_C(0);
        l1->marked[last] |= tail;
    }
    if (first < l1->marked_lo)
        l1->marked_lo = first;
    if (last >= l1->marked_hi)
        l1->marked_hi = last + 1;
}

int64_t tci_level1_marked_bytes(const tci_level1 *l1)
{
    int64_t bytes = 0;
    for (int w = l1->marked_lo; w < l1->marked_hi; w++)
        bytes += tci_popcount64(l1->marked[w]);
    return bytes;
}

int64_t tci_level1_marked_end(const tci_level1 *l1)
{
    for (int w = l1->marked_hi - 1; w >= l1->marked_lo && w >= 0; w--) {
        uint64_t bits = l1->marked[w];
        if (bits) {
            int top = 63;
            while (!(bits >> top))
                top--;
            return l1->start + (int64_t)w * 64 + top + 1;
        }
    }
    return -1;
}

const unsigned char *tci_level1_marked_bitmap(const tci_level1 *l1, unsigned char *scratch,
                                              int segment_size)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    size_t words = marked_words(segment_size);
    for (size_t w = 0; w < words; w++)
        for (int k = 0; k < 8; k++)
            scratch[w * 8 + k] = (unsigned char)(l1->marked[w] >> (8 * k));
    return scratch;
#else
    (void)scratch, (void)segment_size;
    return (const unsigned char *)l1->marked;    /* bit i: byte i/8, bit i%8 */
#endif
}

int tci_level1_marked_extents(tci_level1 *l1)
{
    tci_extents *e = &l1->extents;
    tci_extents_clear(e);
    int run_start = -1;
    for (int w = l1->marked_lo; w < l1->marked_hi; w++) {
        uint64_t bits = l1->marked[w];
        for (int b = 0; b < 64;) {
            /* Skip to the next change of state within the word. */
            uint64_t rest = run_start < 0 ? bits >> b : ~bits >> b;
            if (rest == 0)
                break;
            b += __builtin_ctzll(rest);
            if (run_start < 0) {
                run_start = w * 64 + b;
            } else {
                if (tci_extents_add(e, run_start, w * 64 + b - run_start) != 0)
                    return -1;
                run_start = -1;
            }
        }
    }
    if (run_start >= 0 &&
        tci_extents_add(e, run_start, l1->marked_hi * 64 - run_start) != 0)
        return -1;
    return 0;
}

void tci_level1_aim(tci_level1 *l1, tci_l1_mode mode, int64_t segment, int64_t size)
{
    l1->mode = mode;
    l1->segment = segment;
    l1->start = segment * size;
    l1->end = l1->start + size;
}

int tci_level1_grow_reads(tci_level1 *l1)
{
    int cap = l1->reads_capacity ? l1->reads_capacity * 2 : 64;
    tci_read_piece *r = realloc(l1->reads, (size_t)cap * sizeof *r);
    if (!r)
        return -1;
    l1->reads = r;
    l1->reads_capacity = cap;
    return 0;
}

void tci_level1_deliver_reads(tci_level1 *l1)
{
    for (int i = 0; i < l1->nreads; i++)
        memcpy(l1->reads[i].dst, l1->buf + l1->reads[i].disp, (size_t)l1->reads[i].len);
}

int tci_level1_ranges(const tci_level1 *v, int size, tci_range *r)
{
    enum { MAX_GAPS = TCI_MAX_RANGES - 1 };
    if (v->marked_lo >= v->marked_hi)
        return 0;
    tci_range gap[MAX_GAPS];              /* the longest so far, longest first */
    int ngaps = 0;
    for (int w = v->marked_lo; w < v->marked_hi; w++) {
        if (v->marked[w])
            continue;
        int start = w;
        while (w < v->marked_hi && !v->marked[w])
            w++;
        int len = w - start;
        if (w == v->marked_hi || len < TCI_RANGE_SPLIT_WORDS ||
            (ngaps == MAX_GAPS && len <= gap[MAX_GAPS - 1].hi - gap[MAX_GAPS - 1].lo))
            continue;
        int at = ngaps < MAX_GAPS ? ngaps++ : MAX_GAPS - 1;   /* the shortest goes */
        for (; at > 0 && gap[at - 1].hi - gap[at - 1].lo < len; at--)
            gap[at] = gap[at - 1];
        gap[at] = (tci_range){ start, w };
    }
    for (int i = 1; i < ngaps; i++)       /* in the segment's order */
        for (int j = i; j > 0 && gap[j - 1].lo > gap[j].lo; j--) {
            tci_range g = gap[j];
            gap[j] = gap[j - 1];
            gap[j - 1] = g;
        }
    int n = 0, from = v->marked_lo;
    for (int i = 0; i < ngaps; i++) {
        r[n++] = (tci_range){ from * 64, gap[i].lo * 64 };
        from = gap[i].hi;
    }
    r[n++] = (tci_range){ from * 64, v->marked_hi * 64 < size ? v->marked_hi * 64 : size };
    return n;
}
