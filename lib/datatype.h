/* datatype.h - validating user datatypes and moving their bytes. */
#ifndef TCIO_DATATYPE_H
#define TCIO_DATATYPE_H

#include <stdbool.h>
#include <stdint.h>
#include <mpi.h>

typedef struct tci_type_info {
    int64_t size;        /* bytes of data per element */
    int64_t extent;      /* bytes from one element to the next in memory */
    bool    contiguous;  /* element bytes lie in memory as in the file: a
                            predefined type without padding, or a derived
                            type whose typemap walks memory in order with
                            no gap (contiguous, vector with stride =
                            block, adjacent indexed/struct blocks...) */
} tci_type_info;

/* MPI_Pack and MPI_Unpack take int sizes: requests of non-contiguous types
 * are packed and unpacked in pieces of whole elements of at most this many
 * bytes (a variable so that the tests can make it small). */
extern int64_t tci_pack_piece_bytes;

/* Check that TYPE is a committed datatype and describe it (the slow path
 * of tci_type_inspect).  Returns TCIO_SUCCESS or TCIO_ERR_BAD_TYPE, or
 * TCIO_ERR_MPI or TCIO_ERR_NO_MEMORY where the library's own cache could
 * not be set up (its keyval, communicator or finalize hook). */
int tci_type_inspect_slow(MPI_Datatype type, tci_type_info *info);

/* The two predefined types most recently inspected, most recent first
 * (codes that alternate two types, as Table II's int and double, find
 * both here).  Predefined types are never freed, so these cannot go stale;
 * an unused entry is MPI_DATATYPE_NULL. */
extern MPI_Datatype tci_recent_type[2];
extern tci_type_info tci_recent_info[2];
extern int64_t tci_recent_contiguous_size[2];   /* size if contiguous, else 0 */

/* The size of TYPE if it is one of the two recent predefined types and
 * contiguous, else 0: the per-access fast path's whole type check. */
static inline int64_t tci_type_recent_size(MPI_Datatype type)
{
    if (type == tci_recent_type[0])
        return tci_recent_contiguous_size[0];
    if (type == tci_recent_type[1])
        return tci_recent_contiguous_size[1];
    return 0;
}

/* The description of TYPE if it is one of the two recent predefined
 * types, else NULL.  Inline: it runs once per tcio_write/tcio_read. */
static inline const tci_type_info *tci_type_recent(MPI_Datatype type)
{
    if (type == MPI_DATATYPE_NULL)
        return NULL;
    if (type == tci_recent_type[0])
        return &tci_recent_info[0];
    if (type == tci_recent_type[1])
        return &tci_recent_info[1];
    return NULL;
}

/* Check that TYPE is a committed datatype and describe it.  Returns
 * TCIO_SUCCESS or TCIO_ERR_BAD_TYPE (or, as tci_type_inspect_slow,
 * TCIO_ERR_MPI or TCIO_ERR_NO_MEMORY).  Predefined types are cached in the
 * library, derived ones in an attribute on the type itself, so repeated
 * calls with one type are cheap; the two most recent predefined types
 * cost two comparisons. */
static inline int tci_type_inspect(MPI_Datatype type, tci_type_info *info)
{
    const tci_type_info *recent = tci_type_recent(type);
    if (recent) {
        *info = *recent;
        return 0;
    }
    return tci_type_inspect_slow(type, info);
}

/* Pack COUNT elements of TYPE (described by INFO) at SRC into OUT,
 * count x size bytes, in pieces of at most tci_pack_piece_bytes (one
 * element if it is larger: then at most INT32_MAX bytes, which
 * tci_type_fits_pack checks).  Returns TCIO_SUCCESS or TCIO_ERR_MPI. */
int tci_type_pack(const void *src, int count, MPI_Datatype type, const tci_type_info *info,
                  void *out);

/* Whether elements of a non-contiguous type INFO can go through MPI_Pack
 * (one element at most INT32_MAX bytes). */
static inline bool tci_type_fits_pack(const tci_type_info *info)
{
    return info->contiguous || info->size <= INT32_MAX;
}

/* A read into a non-contiguous type lands in STAGING first and is
 * unpacked into the user's buffer when the reads complete. */
typedef struct tci_staged_read {
    char        *staging;
    void        *dst;
    int          count;
    MPI_Datatype type;    /* a duplicate: the user may free theirs */
    tci_type_info info;
    int64_t      bytes;
    struct tci_staged_read *next;
} tci_staged_read;

/* Allocate a staged read of COUNT elements of TYPE (INFO); NULL when out
 * of memory (or MPI fails). */
tci_staged_read *tci_staged_new(void *dst, int count, MPI_Datatype type,
                                const tci_type_info *info);

/* Unpack every staged read of LIST into its destination and free them.
 * Returns TCIO_SUCCESS or TCIO_ERR_MPI. */
int tci_staged_complete(tci_staged_read **list);

/* Free staged reads without delivering them (close after a failure). */
void tci_staged_discard(tci_staged_read **list);

#endif
