/* segio.c - segments between memory and the file.
 *
 * Only the bytes that were written are written: each run of set bits in a
 * segment's bitmap becomes one independent MPI_File_write_at inside the
 * segment (with the default segment size, the striping unit, no write
 * crosses a stripe).  Loads read whole segments. */
#include <errno.h>
#include <string.h>
#include "segio.h"
#include "slot.h"
#include "error.h"

static MPI_Offset segment_start(const tci_segmap *map, int64_t segment)
{
    return (MPI_Offset)segment * map->segment_size;
}

static int write_run(MPI_File file, MPI_Offset offset, const char *data, int len)
{
    MPI_Status status;
    errno = 0;
    int err = MPI_File_write_at(file, offset, data, len, MPI_BYTE, &status);
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

int tci_segio_write(MPI_File file, const tci_segmap *map, int64_t segment, const char *data,
                    const unsigned char *bitmap)
{
    int size = (int)map->segment_size;
    MPI_Offset base = segment_start(map, segment);
    int end, start = tci_bitmap_next_run(bitmap, 0, size, 1, &end);
    while (start < size) {
        int rc = write_run(file, base + start, data + start, end - start);
        if (rc != TCIO_SUCCESS)
            return rc;
        start = tci_bitmap_next_run(bitmap, end, size, 1, &end);
    }
    return TCIO_SUCCESS;
}

int tci_segio_read(MPI_File file, const tci_segmap *map, int64_t segment, char *buf)
{
    int size = (int)map->segment_size;
    MPI_Status status;
    int err = MPI_File_read_at(file, segment_start(map, segment), buf, size, MPI_BYTE,
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
