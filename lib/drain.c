/* drain.c - level-2 segments to and from the file.
 *
 * Only the bytes that were written are written: each run of set bits in a
 * slot's bitmap becomes one independent MPI_File_write_at inside the
 * segment (with the default segment size, the striping unit, no write
 * crosses a stripe).  Loads read whole segments.
 *
 * Early drain: a mover whose put brings a slot's written-byte counter to
 * the segment size marks the slot TCI_SLOT_FULL and adds one to the
 * owner's notice word.  The owner, whenever it enters the library, looks
 * at its slots if the notice word changed, confirms with the bitmap that
 * every byte was written, writes those segments and releases the slots
 * clean: they still serve reads, and a new segment can claim them without
 * a spill. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "file.h"
#include "drain.h"
#include "error.h"

static MPI_Offset segment_start(const tcio_file *fh, int64_t segment)
{
    return (MPI_Offset)segment * fh->config.segment_size;
}

static int write_run(tcio_file *fh, MPI_Offset offset, const char *data, int len)
{
    MPI_Status status;
    errno = 0;
    int err = MPI_File_write_at(fh->file, offset, data, len, MPI_BYTE, &status);
    if (err != MPI_SUCCESS)
        return tci_error_from_io(err);
    int written = 0;
    MPI_Get_count(&status, MPI_BYTE, &written);
    if (written == len)
        return TCIO_SUCCESS;
    /* A short write reported as a success: Open MPI 4.1's OMPIO does that
     * on a full file system (it prints the failed pwritev's error and
     * returns MPI_SUCCESS with a short count).  Its errno tells why. */
    return errno == ENOSPC || errno == EDQUOT ? TCIO_ERR_NO_SPACE : TCIO_ERR_IO;
}

int tci_drain_segment(tcio_file *fh, int64_t segment, const char *data,
                      const unsigned char *bitmap)
{
    int size = (int)fh->config.segment_size;
    MPI_Offset base = segment_start(fh, segment);
    int end, start = tci_bitmap_next_run(bitmap, 0, size, 1, &end);
    while (start < size) {
        int rc = write_run(fh, base + start, data + start, end - start);
        if (rc != TCIO_SUCCESS)
            return rc;
        start = tci_bitmap_next_run(bitmap, end, size, 1, &end);
    }
    return TCIO_SUCCESS;
}

int tci_load_segment(tcio_file *fh, int64_t segment, char *buf)
{
    int size = (int)fh->config.segment_size;
    MPI_Status status;
    int err = MPI_File_read_at(fh->file, segment_start(fh, segment), buf, size, MPI_BYTE,
                               &status);
    if (err != MPI_SUCCESS)
        return tci_error_from_io(err);
    int got = 0;
    MPI_Get_count(&status, MPI_BYTE, &got);
    if (got < 0 || got == MPI_UNDEFINED)
        got = 0;
    memset(buf + got, 0, (size_t)(size - got));   /* past the end reads as zero */
    return TCIO_SUCCESS;
}

int tci_drain_own_slots(tcio_file *fh)
{
    tci_level2 *l2 = &fh->l2;
    /* Called after every rank completed its operations and passed a
     * barrier: synchronise the public and private copies of the window,
     * then read the slots in place (MPI_Win_allocate gives the unified
     * memory model, where the two copies are the same memory). */
    int rc = tci_error_from_mpi(MPI_Win_sync(l2->win));
    for (int64_t s = 0; s < l2->local_slots; s++) {
        int64_t state = *(const int64_t *)(l2->base + tci_header_disp(l2, s));
        tci_slot_header h = tci_state_decode(state);
        /* Every rank released its slots before the barrier.  Keep going
         * after a failed slot, so that the others still reach the file. */
        if (state != TCI_STATE_LOCKED && (h.flags & TCI_SLOT_DIRTY))
            fh->stats.count[TCI_C_CLOSE_DRAINS]++;
        int slot_rc = state == TCI_STATE_LOCKED ? TCIO_ERR_MPI
                    : !(h.flags & TCI_SLOT_DIRTY) ? TCIO_SUCCESS
                    : tci_drain_segment(fh, h.segment, l2->base + tci_data_disp(l2, s),
                                        (const unsigned char *)l2->base + tci_bitmap_disp(l2, s));
        if (rc == TCIO_SUCCESS)
            rc = slot_rc;
    }
    return rc;
}

/* ---- early drain ---------------------------------------------------------- */

static tci_location own_slot(const tcio_file *fh, int64_t slot)
{
    return (tci_location){ .rank = fh->l2.self, .slot = slot };
}

static bool segment_complete(const tci_level2 *l2, int64_t slot)
{
    const unsigned char *bitmap = (const unsigned char *)l2->base + tci_bitmap_disp(l2, slot);
    int end;
    return tci_bitmap_next_run(bitmap, 0, l2->segment_size, 0, &end) == l2->segment_size;
}

/* Lock own slot SLOT and decide: returns true, keeping the lock, when the
 * slot holds a complete segment to drain; otherwise releases it (dropping
 * a FULL mark that overwrites caused). */
static bool take_if_complete(tcio_file *fh, int64_t slot, tci_slot_header *h)
{
    tci_level2 *l2 = &fh->l2;
    tci_location loc = own_slot(fh, slot);
    if (tci_level2_lock(l2, loc, h) != MPI_SUCCESS) {
        tci_note_failure(fh, TCIO_ERR_MPI);
        return false;
    }
    if ((h->flags & TCI_SLOT_FULL) && (h->flags & TCI_SLOT_DIRTY)) {
        MPI_Win_sync(l2->win);       /* see the movers' completed updates */
        if (segment_complete(l2, slot))
            return true;
        h->flags &= ~TCI_SLOT_FULL;  /* overwrites, not every byte */
    }
    if (tci_level2_unlock(l2, loc, h, false) != MPI_SUCCESS)
        tci_note_failure(fh, TCIO_ERR_MPI);
    return false;
}

/* The segment of locked own slot SLOT reached the file: the slot is clean
 * and loaded (its bytes are the file's), its bitmap and counter cleared. */
static void release_drained(tcio_file *fh, int64_t slot, tci_slot_header *h, bool written)
{
    tci_level2 *l2 = &fh->l2;
    if (written) {
        memset(l2->base + tci_bitmap_disp(l2, slot), 0, (size_t)l2->bitmap_bytes);
        *(int64_t *)(l2->base + tci_header_disp(l2, slot) + TCI_WRITTEN_OFFSET) = 0;
        h->flags = TCI_SLOT_LOADED;
        MPI_Win_sync(l2->win);       /* our stores before the release */
        fh->stats.count[TCI_C_EARLY_DRAINS]++;
    }
    if (tci_level2_unlock(l2, own_slot(fh, slot), h, false) != MPI_SUCCESS)
        tci_note_failure(fh, TCIO_ERR_MPI);
}

/* Write the complete segments of own slots, one at a time, each straight
 * from the window while its slot is locked.  Returns whether every slot
 * was looked at: a slot that another rank (a reader, a prefetcher) held
 * during the snapshot may be full, and as readers send no notice, the
 * notice that led here must stay unconsumed until a later look sees it.  A lock holder here waits only
 * for its own file system, never for another rank, so the protocol stays
 * deadlock-free.  The writes are blocking: a write left in flight would
 * either keep its slot locked until this rank enters the library again
 * (movers would spin on it while this rank computes) or let a load of the
 * segment by another rank race it; and MPICH 4.0's MPI_File_iwrite_at
 * never completes when the device fails (doc/design.md). */
static bool drain_complete_slots(tcio_file *fh)
{
    tci_level2 *l2 = &fh->l2;
    /* Lock only the slots that a snapshot shows full: a lock round trip per
     * slot would cost more than the drains. */
    const int words_per_slot = TCI_HEADER_BYTES / 8;
    int64_t *words = malloc((size_t)(l2->local_slots * words_per_slot) * sizeof *words);
    if (!words)
        return false;     /* nothing lost: the next look tries again */
    if (tci_level2_peek_states(l2, words) != MPI_SUCCESS) {
        free(words);
        tci_note_failure(fh, TCIO_ERR_MPI);
        return false;
    }
    bool seen_all = true;
    for (int64_t slot = 0; slot < l2->local_slots; slot++) {
        int64_t state = words[slot * words_per_slot];
        tci_slot_header h = tci_state_decode(state);
        if (state == TCI_STATE_LOCKED)
            seen_all = false;
        if (state == TCI_STATE_LOCKED || !(h.flags & TCI_SLOT_FULL))
            continue;
        if (!take_if_complete(fh, slot, &h))
            continue;
        /* The bitmap is complete: one write of the whole segment. */
        int rc = tci_drain_segment(fh, h.segment, l2->base + tci_data_disp(l2, slot),
                                   (const unsigned char *)l2->base + tci_bitmap_disp(l2, slot));
        /* A failed write keeps the segment dirty (close tries again), but
         * the handle remembers it so that close cannot report success. */
        tci_note_failure(fh, rc);
        release_drained(fh, slot, &h, rc == TCIO_SUCCESS);
    }
    free(words);
    return seen_all;
}

void tci_drain_full_slots(tcio_file *fh)
{
    tci_level2 *l2 = &fh->l2;
    if (l2->local_slots == 0 || !fh->config.early_drain)
        return;
    double t0 = MPI_Wtime();
    int64_t notices = 0;
    if (tci_level2_notices(l2, &notices) != MPI_SUCCESS) {
        tci_note_failure(fh, TCIO_ERR_MPI);
        return;
    }
    if (notices != fh->notices_seen && drain_complete_slots(fh))
        fh->notices_seen = notices;
    fh->stats.time[TCI_T_EARLY_DRAINS] += MPI_Wtime() - t0;
}
