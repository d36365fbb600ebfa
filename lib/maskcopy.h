/* maskcopy.h - copying the bytes of a segment that a bitmap marks: a
 * 64-byte block per bitmap word, only the bytes whose bits are set.  A shm
 * write move (transport_shm.c) copies level 1 into a slot this way while
 * other writers of the segment store the bytes around them, so no byte
 * outside the set bits is ever stored (nor read past the end of the
 * source); a read move copies the wanted bytes out the same way. */
#ifndef TCIO_MASKCOPY_H
#define TCIO_MASKCOPY_H

#include <stdbool.h>
#include <stdint.h>

/* Copy every byte of FROM whose bit is set in words [LO, HI) of MARKED
 * (bit b of word w: byte 64w+b) to the same offset of TO.  Chooses the
 * fastest of the functions below that the processor has, once. */
void tci_copy_masked(char *to, const char *from, const uint64_t *marked, int lo, int hi);

/* The portable copy: run by run, each with stores of exactly its bytes. */
void tci_copy_masked_runs(char *to, const char *from, const uint64_t *marked, int lo,
                           int hi);

/* With AVX-512BW, one masked load and one masked store per block; NULL
 * where it is not compiled in, false when the processor lacks it. */
typedef void tci_copy_masked_fn(char *to, const char *from, const uint64_t *marked, int lo,
                                 int hi);
extern tci_copy_masked_fn *const tci_copy_masked_avx512;
bool tci_have_avx512bw(void);

#endif
