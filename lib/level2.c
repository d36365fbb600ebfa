/* level2.c - the level-2 window and the one-sided moves into and out of it.
 *
 * Every move locks exactly one owner's window, exclusively, and never takes
 * a second lock while holding one: no lock-order cycle can form.  Inside
 * the lock the mover may write the slot's previous segment to the file
 * (independent MPI-IO, no other rank involved) and may load the segment
 * from the file; nothing in a move waits for another rank to call the
 * library.  See doc/design.md. */
#include <stdlib.h>
#include <string.h>
#include "file.h"
#include "drain.h"
#include "error.h"

int tci_level2_create(tci_level2 *l2, MPI_Comm comm, int64_t nslots, int segment_size)
{
    memset(l2, 0, sizeof *l2);
    l2->win = MPI_WIN_NULL;
    l2->nslots = nslots;
    l2->segment_size = segment_size;
    l2->bitmap_bytes = ((segment_size + 7) / 8 + 7) / 8 * 8;
    /* MPICH 4.0.2 (ch4) places other ranks' accesses wrongly in a window
     * whose size is not a multiple of 16 bytes (doc/design.md): round the
     * size up to a cache line. */
    MPI_Aint bytes = (tci_data_disp(l2, nslots) + 63) / 64 * 64;
    int err = MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, comm, &l2->base, &l2->win);
    if (err != MPI_SUCCESS) {
        l2->win = MPI_WIN_NULL;
        return tci_error_from_mpi(err);
    }
    MPI_Win_set_errhandler(l2->win, MPI_ERRORS_RETURN);
    l2->scratch = malloc((size_t)segment_size);
    l2->bitmap = malloc((size_t)l2->bitmap_bytes);
    if (!l2->scratch || !l2->bitmap)
        return TCIO_ERR_NO_MEMORY;

    /* Initialise the own slots inside an epoch; the caller synchronises
     * before any other rank can reach them. */
    int rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, l2->win);
    for (int64_t s = 0; s < nslots; s++) {
        tci_slot_header *h = (tci_slot_header *)(l2->base + tci_header_disp(l2, s));
        h->segment = TCI_SLOT_EMPTY;
        h->flags = 0;
    }
    memset(l2->base + tci_bitmap_disp(l2, 0), 0,
           (size_t)(tci_data_disp(l2, 0) - tci_bitmap_disp(l2, 0)));
    MPI_Win_unlock(rank, l2->win);
    return TCIO_SUCCESS;
}

void tci_level2_free(tci_level2 *l2)
{
    if (l2->win != MPI_WIN_NULL)
        MPI_Win_free(&l2->win);
    free(l2->scratch);
    free(l2->bitmap);
    l2->scratch = NULL;
    l2->bitmap = NULL;
}

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

/* ---- one-sided helpers: all inside an exclusive lock of RANK ---------- */

static int get_header(tci_level2 *l2, tci_location loc, tci_slot_header *h)
{
    return MPI_Get(h, 2, MPI_INT64_T, loc.rank, tci_header_disp(l2, loc.slot), 2,
                   MPI_INT64_T, l2->win);
}

/* The put completes only at unlock, after the caller's frame is gone: the
 * origin buffer is the persistent l2->outgoing. */
static int put_header(tci_level2 *l2, tci_location loc, const tci_slot_header *h)
{
    l2->outgoing = *h;
    return MPI_Put(&l2->outgoing, 2, MPI_INT64_T, loc.rank, tci_header_disp(l2, loc.slot), 2,
                   MPI_INT64_T, l2->win);
}

static int get_bitmap_and_data(tci_level2 *l2, tci_location loc)
{
    int err = MPI_Get(l2->bitmap, l2->bitmap_bytes, MPI_BYTE, loc.rank,
                      tci_bitmap_disp(l2, loc.slot), l2->bitmap_bytes, MPI_BYTE, l2->win);
    if (err == MPI_SUCCESS)
        err = MPI_Get(l2->scratch, l2->segment_size, MPI_BYTE, loc.rank,
                      tci_data_disp(l2, loc.slot), l2->segment_size, MPI_BYTE, l2->win);
    if (err == MPI_SUCCESS)
        err = MPI_Win_flush(loc.rank, l2->win);
    return err;
}

/* The slot holds another segment with unsaved bytes: write them to the
 * file before the slot changes hands (the spill path). */
static int spill_slot(tcio_file *fh, tci_location loc, int64_t victim)
{
    int err = get_bitmap_and_data(&fh->l2, loc);
    if (err != MPI_SUCCESS)
        return tci_error_from_mpi(err);
    /* A failed spill keeps the victim in its slot (close tries again), but
     * the handle remembers it so that close cannot report success. */
    return tci_note_failure(fh, tci_drain_segment(fh, victim, fh->l2.scratch, fh->l2.bitmap));
}

/* Make the slot at LOC hold SEGMENT, spilling its previous segment.  On
 * return *H is the header as it must end up (written back by the caller,
 * once, at the end of the epoch). */
static int claim_slot(tcio_file *fh, tci_location loc, int64_t segment, tci_slot_header *h)
{
    tci_level2 *l2 = &fh->l2;
    int err = get_header(l2, loc, h);
    if (err == MPI_SUCCESS)
        err = MPI_Win_flush(loc.rank, l2->win);
    if (err != MPI_SUCCESS)
        return tci_error_from_mpi(err);
    if (h->segment == segment)
        return TCIO_SUCCESS;
    if (h->flags & TCI_SLOT_DIRTY) {
        int rc = spill_slot(fh, loc, h->segment);
        if (rc != TCIO_SUCCESS)
            return rc;
    }
    memset(l2->bitmap, 0, (size_t)l2->bitmap_bytes);
    err = MPI_Put(l2->bitmap, l2->bitmap_bytes, MPI_BYTE, loc.rank,
                  tci_bitmap_disp(l2, loc.slot), l2->bitmap_bytes, MPI_BYTE, l2->win);
    if (err == MPI_SUCCESS)
        err = MPI_Win_flush(loc.rank, l2->win);   /* before the bitmap OR */
    h->segment = segment;
    h->flags = 0;
    return tci_error_from_mpi(err);
}

static int indexed_type(const tci_extents *e, MPI_Datatype *type)
{
    int err = MPI_Type_indexed(e->count, e->len, e->disp, MPI_BYTE, type);
    if (err == MPI_SUCCESS)
        err = MPI_Type_commit(type);
    return err;
}

/* OR the written extents into the slot's bitmap: one accumulate over the
 * bitmap bytes they span. */
static int mark_written(tci_level2 *l2, tci_location loc, const tci_extents *e)
{
    int lo = e->disp[0] / 8;
    int hi = (e->disp[e->count - 1] + e->len[e->count - 1] + 7) / 8;
    memset(l2->bitmap + lo, 0, (size_t)(hi - lo));
    for (int i = 0; i < e->count; i++)
        tci_bitmap_set_range(l2->bitmap, e->disp[i], e->disp[i] + e->len[i]);
    return MPI_Accumulate(l2->bitmap + lo, hi - lo, MPI_UNSIGNED_CHAR, loc.rank,
                          tci_bitmap_disp(l2, loc.slot) + lo, hi - lo, MPI_UNSIGNED_CHAR,
                          MPI_BOR, l2->win);
}

static int put_extents_locked(tcio_file *fh, tci_location loc, MPI_Datatype type)
{
    tci_level2 *l2 = &fh->l2;
    tci_slot_header h;
    int rc = claim_slot(fh, loc, fh->l1.segment, &h);
    if (rc != TCIO_SUCCESS)
        return rc;
    int err = MPI_Put(fh->l1.buf, 1, type, loc.rank, tci_data_disp(l2, loc.slot), 1, type,
                      l2->win);
    if (err == MPI_SUCCESS)
        err = mark_written(l2, loc, &fh->l1.extents);
    if (err == MPI_SUCCESS && !(h.flags & TCI_SLOT_DIRTY)) {
        h.flags |= TCI_SLOT_DIRTY;
        err = put_header(l2, loc, &h);
    }
    return tci_error_from_mpi(err);
}

int tci_level2_put_writes(tcio_file *fh)
{
    tci_level1 *l1 = &fh->l1;
    if (l1->mode != TCI_L1_WRITING)
        return TCIO_SUCCESS;
    if (l1->extents.count == 0) {
        tci_level1_reset(l1);
        return TCIO_SUCCESS;
    }
    if (tci_extents_normalize(&l1->extents) != 0)
        return TCIO_ERR_NO_MEMORY;
    MPI_Datatype type;
    int err = indexed_type(&l1->extents, &type);
    if (err != MPI_SUCCESS)
        return tci_error_from_mpi(err);
    tci_location loc = tci_segmap_locate(&fh->map, l1->segment);
    int rc = tci_error_from_mpi(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, loc.rank, 0, fh->l2.win));
    if (rc == TCIO_SUCCESS) {
        rc = put_extents_locked(fh, loc, type);
        int unlock_rc = tci_error_from_mpi(MPI_Win_unlock(loc.rank, fh->l2.win));
        if (rc == TCIO_SUCCESS)
            rc = unlock_rc;
    }
    MPI_Type_free(&type);
    if (rc == TCIO_SUCCESS)
        tci_level1_reset(l1);
    return rc;
}

/* The slot does not hold the file's bytes yet: read the segment into the
 * level-1 buffer, lay the bytes already written on top, and store the
 * result in the slot so later readers find it loaded. */
static int load_into_slot(tcio_file *fh, tci_location loc, tci_slot_header *h)
{
    tci_level2 *l2 = &fh->l2;
    char *seg = fh->l1.buf;
    int rc = tci_load_segment(fh, h->segment, seg);
    if (rc != TCIO_SUCCESS)
        return rc;
    if (h->flags & TCI_SLOT_DIRTY) {
        int err = get_bitmap_and_data(l2, loc);
        if (err != MPI_SUCCESS)
            return tci_error_from_mpi(err);
        int end, start = tci_bitmap_next_run(l2->bitmap, 0, l2->segment_size, 1, &end);
        while (start < l2->segment_size) {
            memcpy(seg + start, l2->scratch + start, (size_t)(end - start));
            start = tci_bitmap_next_run(l2->bitmap, end, l2->segment_size, 1, &end);
        }
    }
    h->flags |= TCI_SLOT_LOADED;
    int err = MPI_Put(seg, l2->segment_size, MPI_BYTE, loc.rank, tci_data_disp(l2, loc.slot),
                      l2->segment_size, MPI_BYTE, l2->win);
    if (err == MPI_SUCCESS)
        err = put_header(l2, loc, h);
    return tci_error_from_mpi(err);
}

static int get_extents_locked(tcio_file *fh, tci_location loc)
{
    tci_slot_header h;
    int rc = claim_slot(fh, loc, fh->l1.segment, &h);
    if (rc != TCIO_SUCCESS)
        return rc;
    if (!(h.flags & TCI_SLOT_LOADED))
        return load_into_slot(fh, loc, &h);   /* leaves the whole segment in l1 */
    MPI_Datatype type;
    int err = indexed_type(&fh->l1.extents, &type);
    if (err != MPI_SUCCESS)
        return tci_error_from_mpi(err);
    err = MPI_Get(fh->l1.buf, 1, type, loc.rank, tci_data_disp(&fh->l2, loc.slot), 1, type,
                  fh->l2.win);
    if (err == MPI_SUCCESS)
        err = MPI_Win_flush(loc.rank, fh->l2.win);
    MPI_Type_free(&type);
    return tci_error_from_mpi(err);
}

int tci_level2_get_reads(tcio_file *fh)
{
    tci_level1 *l1 = &fh->l1;
    if (l1->mode != TCI_L1_READING)
        return TCIO_SUCCESS;
    if (l1->nreads == 0) {
        tci_level1_reset(l1);
        return TCIO_SUCCESS;
    }
    if (tci_extents_normalize(&l1->extents) != 0)
        return TCIO_ERR_NO_MEMORY;
    tci_location loc = tci_segmap_locate(&fh->map, l1->segment);
    int rc = tci_error_from_mpi(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, loc.rank, 0, fh->l2.win));
    if (rc == TCIO_SUCCESS) {
        rc = get_extents_locked(fh, loc);
        int unlock_rc = tci_error_from_mpi(MPI_Win_unlock(loc.rank, fh->l2.win));
        if (rc == TCIO_SUCCESS)
            rc = unlock_rc;
    }
    if (rc == TCIO_SUCCESS) {
        tci_level1_deliver_reads(l1);
        tci_level1_reset(l1);
    }
    return rc;
}
