/* maskcopy.c - copying the bytes of a segment that a bitmap marks
 * (maskcopy.h). */
#include <stdbool.h>
#include <string.h>
#include "maskcopy.h"

/* Store exactly N bytes of FROM at TO. */
static inline void copy_exact(char *to, const char *from, int n)
{
    for (; n >= 8; n -= 8, to += 8, from += 8)
        memcpy(to, from, 8);
    if (n >= 4) {
        memcpy(to, from, 4);
        to += 4, from += 4, n -= 4;
    }
    if (n >= 2) {
        memcpy(to, from, 2);
        to += 2, from += 2, n -= 2;
    }
    if (n)
        *to = *from;
}

/* The bytes of one 64-byte block whose bits are set in MASK, run by run. */
static inline void copy_block_runs(char *to, const char *from, uint64_t mask)
{
    if (mask == ~UINT64_C(0)) {
        memcpy(to, from, 64);
        return;
    }
    while (mask) {
        int start = __builtin_ctzll(mask);
        uint64_t above = ~(mask >> start);      /* zero while the run lasts */
        int len = above ? __builtin_ctzll(above) : 64 - start;
        copy_exact(to + start, from + start, len);
        if (start + len >= 64)
            break;
        mask &= ~UINT64_C(0) << (start + len);
    }
}

void tci_copy_masked_runs(char *to, const char *from, const uint64_t *marked, int lo, int hi)
{
    for (int w = lo; w < hi; w++)
        if (marked[w])
            copy_block_runs(to + (size_t)w * 64, from + (size_t)w * 64, marked[w]);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* The masked-off bytes are neither read (no fault past the source's end)
 * nor written (sharers' bytes around them stay theirs); bit b of the mask
 * is byte b of the block, the bitmap's numbering. */
__attribute__((target("avx512f,avx512bw")))
static void copy_masked_avx512(char *to, const char *from, const uint64_t *marked, int lo,
                                int hi)
{
    for (int w = lo; w < hi; w++) {
        __mmask64 mask = marked[w];
        if (mask)
            _mm512_mask_storeu_epi8(to + (size_t)w * 64, mask,
                                    _mm512_maskz_loadu_epi8(mask, from + (size_t)w * 64));
    }
}

tci_copy_masked_fn *const tci_copy_masked_avx512 = copy_masked_avx512;

bool tci_have_avx512bw(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bw") != 0;
}
#else
tci_copy_masked_fn *const tci_copy_masked_avx512 = 0;

bool tci_have_avx512bw(void)
{
    return 0;
}
#endif

void tci_copy_masked(char *to, const char *from, const uint64_t *marked, int lo, int hi)
{
    static tci_copy_masked_fn *copy;
    if (!copy)
        copy = tci_copy_masked_avx512 && tci_have_avx512bw() ? tci_copy_masked_avx512
                                                              : tci_copy_masked_runs;
    copy(to, from, marked, lo, hi);
}
