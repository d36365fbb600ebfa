/* drain.c - level-2 segments to and from the file.
 *
 * Only the bytes that were written are written: each run of set bits in a
 * slot's bitmap becomes one independent MPI_File_write_at inside the
 * segment (with the default segment size, the striping unit, no write
 * crosses a stripe).  Loads read whole segments. */
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
    int err = MPI_File_write_at(fh->file, offset, data, len, MPI_BYTE, &status);
    if (err != MPI_SUCCESS)
        return tci_error_from_io(err);
    int written = 0;
    MPI_Get_count(&status, MPI_BYTE, &written);
    return written == len ? TCIO_SUCCESS : TCIO_ERR_IO;
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
        int slot_rc = state == TCI_STATE_LOCKED ? TCIO_ERR_MPI
                    : !(h.flags & TCI_SLOT_DIRTY) ? TCIO_SUCCESS
                    : tci_drain_segment(fh, h.segment, l2->base + tci_data_disp(l2, s),
                                        (const unsigned char *)l2->base + tci_bitmap_disp(l2, s));
        if (rc == TCIO_SUCCESS)
            rc = slot_rc;
    }
    return rc;
}
