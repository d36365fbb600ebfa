/* datatype.h - validating user datatypes and moving their bytes. */
#ifndef TCIO_DATATYPE_H
#define TCIO_DATATYPE_H

#include <stdbool.h>
#include <stdint.h>
#include <mpi.h>

typedef struct tci_type_info {
    int64_t size;        /* bytes of data per element */
    bool    contiguous;  /* element bytes lie in memory as in the file */
} tci_type_info;

/* Check that TYPE is a committed datatype and describe it (the slow path
 * of tci_type_inspect).  Returns TCIO_SUCCESS or TCIO_ERR_BAD_TYPE. */
int tci_type_inspect_slow(MPI_Datatype type, tci_type_info *info);

/* The predefined type most recently inspected: predefined types are never
 * freed, so this cannot go stale. */
extern MPI_Datatype tci_last_predefined;
extern tci_type_info tci_last_predefined_info;

/* Check that TYPE is a committed datatype and describe it.  Returns
 * TCIO_SUCCESS or TCIO_ERR_BAD_TYPE.  Predefined types are cached in the
 * library, derived ones in an attribute on the type itself, so repeated
 * calls with one type are cheap; the last predefined type costs one
 * comparison. */
static inline int tci_type_inspect(MPI_Datatype type, tci_type_info *info)
{
    if (type == tci_last_predefined && type != MPI_DATATYPE_NULL) {
        *info = tci_last_predefined_info;
        return 0;
    }
    return tci_type_inspect_slow(type, info);
}

/* Pack COUNT elements of TYPE at SRC into OUT (BYTES bytes). */
int tci_type_pack(const void *src, int count, MPI_Datatype type, void *out, int64_t bytes);

/* A read into a non-contiguous type lands in STAGING first and is
 * unpacked into the user's buffer when the reads complete. */
typedef struct tci_staged_read {
    char        *staging;
    void        *dst;
    int          count;
    MPI_Datatype type;    /* a duplicate: the user may free theirs */
    int64_t      bytes;
    struct tci_staged_read *next;
} tci_staged_read;

/* Allocate a staged read; NULL when out of memory (or MPI fails). */
tci_staged_read *tci_staged_new(void *dst, int count, MPI_Datatype type, int64_t bytes);

/* Unpack every staged read of LIST into its destination and free them.
 * Returns TCIO_SUCCESS or TCIO_ERR_MPI. */
int tci_staged_complete(tci_staged_read **list);

/* Free staged reads without delivering them (close after a failure). */
void tci_staged_discard(tci_staged_read **list);

#endif
