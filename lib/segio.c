/* segio.c - segments between memory and the file.
 *
 * Only the bytes that were written reach the file, in one of two ways:
 *  - per run: each run of set bits in a segment's bitmap becomes one
 *    independent MPI_File_write_at inside the segment (with the default
 *    segment size, the striping unit, no write crosses a stripe);
 *  - sieved (ROMIO's data sieving, for segments with many small runs): the
 *    span from the first to the last written byte is read from the file a
 *    buffer at a time, the written runs are laid on top and the buffer is
 *    written back.  The holes get the bytes they already had, so the file
 *    is the same as after per-run writes; the caller's exclusive hold on
 *    the segment (its slot's lock, or the close drain after the barrier)
 *    makes sure no one changes those bytes between the read and the write.
 * Loads read whole segments.
 *
 * The segment writer (tci_segment_write) reaches the file only through a
 * sink (segio.h): MPI-IO here, a POSIX descriptor in the background drain
 * (drainer.c), whose thread must make no MPI call. */
#define _POSIX_C_SOURCE 200809L   /* stat */
#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "segio.h"
#include "errhandler.h"
#include "romio_prefix.h"
#include "slot.h"
#include "error.h"

/* Where the sieve reads the file's bytes from. */
enum {
    READER_UNKNOWN = 0,  /* not looked at yet */
    READER_FILE,         /* the file itself (opened readable) */
    READER_OWN,          /* this rank's own read-only handle (file write-only) */
    READER_NONE          /* cannot read: every write is per run */
};

static MPI_Offset segment_start(const tci_segmap *map, int64_t segment)
{
    return (MPI_Offset)segment * map->segment_size;
}

/* LEN bytes at OFFSET with MPI_File_write_at, the rest written again
 * after a short count. */
static int mpi_write(MPI_File file, MPI_Offset offset, const char *data, int len)
{
    int done = 0;
    while (done < len) {
        MPI_Status status;
        errno = 0;
        int err = MPI_File_write_at(file, offset + done, data + done, len - done, MPI_BYTE,
                                    &status);
        if (err != MPI_SUCCESS)            /* the reason names the MPI call */
            return tci_error_from_io_at(err, "MPI_File_write_at(file, offset, ...)", __func__);
        int written = 0;
        MPI_Get_count(&status, MPI_BYTE, &written);
        if (written <= 0 || written == MPI_UNDEFINED || written > len - done) {
            /* A short write reported as a success: Open MPI 4.1's OMPIO
             * does that on a full file system (it prints the failed
             * pwritev's error and returns MPI_SUCCESS with a short count).
             * Its errno tells why, but only once nothing was written: a
             * pwritev that wrote part sets none, so the rest is written
             * again above, as POSIX writers do, until it fails outright. */
            int saved = errno;
            return tci_error_set(saved == ENOSPC || saved == EDQUOT ? TCIO_ERR_NO_SPACE
                                                                    : TCIO_ERR_IO,
                                 "MPI_File_write_at of %d bytes at offset %lld stopped "
                                 "after %d: %s", len, (long long)offset, done,
                                 saved ? strerror(saved) : "no reason given");
        }
        done += written;
    }
    return TCIO_SUCCESS;
}

/* One write per run of set bits in [FROM, SIZE). */
static int write_runs(tci_sink *sink, MPI_Offset base, const char *data,
                      const unsigned char *bitmap, int from, int size)
{
    int end, start = tci_bitmap_next_run(bitmap, from, size, 1, &end);
    while (start < size) {
        int rc = sink->write_at(sink->file, base + start, data + start, end - start);
        if (rc != TCIO_SUCCESS)
            return rc;
        start = tci_bitmap_next_run(bitmap, end, size, 1, &end);
    }
    return TCIO_SUCCESS;
}

/* ---- when to sieve ------------------------------------------------------------ */

/* Sieving pays when the runs are many (a handful of writes costs less than
 * a read and a write) and dense: at least one run per TCI_SIEVE_RUN_SPACING
 * bytes on average, so the per-run writes would touch every page of the
 * span anyway (doc/design.md). */
static bool worth_sieving(int64_t runs, int span)
{
    return runs >= TCI_SIEVE_MIN_RUNS && span <= runs * TCI_SIEVE_RUN_SPACING;
}

/* ---- the sieve ----------------------------------------------------------------- */

/* For each bitmap byte, the 8 data bytes it covers as a mask in memory
 * order (0xff where the bit is set), so that a partly written group of 8
 * bytes is merged with one masked word instead of 8 tests.  Filled once,
 * at the first use by any thread (the background drain sieves too). */
static uint64_t masks[256];
static pthread_once_t masks_once = PTHREAD_ONCE_INIT;

static void fill_masks(void)
{
    for (int b = 0; b < 256; b++) {
        unsigned char m[8];
        for (int k = 0; k < 8; k++)
            m[k] = (b >> k) & 1 ? 0xff : 0;
        memcpy(&masks[b], m, sizeof m);
    }
}

static const uint64_t *byte_masks(void)
{
    pthread_once(&masks_once, fill_masks);
    return masks;
}

/* Lay the written bytes of DATA[FROM, TO) over BUF, which holds the file's
 * bytes of [FROM, TO): whole bitmap words that are all clear or all set
 * are skipped or copied at once, other groups of 8 bytes merged under a
 * mask, and the unaligned ends byte by byte. */
static void overlay_written(char *buf, const char *data, const unsigned char *bitmap, int from,
                            int to)
{
    const uint64_t *masks = byte_masks();
    int i = from;
    while (i < to) {
        if (i % 64 == 0 && to - i >= 64) {
            uint64_t w = tci_bitmap_word(bitmap, i / 64);
            if (w == 0 || w == UINT64_MAX) {
                if (w)
                    memcpy(buf + (i - from), data + i, 64);
                i += 64;
                continue;
            }
        }
        if (i % 8 == 0 && to - i >= 8) {
            uint64_t m = masks[bitmap[i >> 3]], file_bytes, written;
            if (m) {
                memcpy(&file_bytes, buf + (i - from), 8);
                memcpy(&written, data + i, 8);
                file_bytes = (file_bytes & ~m) | (written & m);
                memcpy(buf + (i - from), &file_bytes, 8);
            }
            i += 8;
            continue;
        }
        if (tci_bitmap_bit(bitmap, i))
            buf[i - from] = data[i];
        i++;
    }
}

/* Whether a read of FILE at OFFSET that came back GOT bytes short, with
 * errno E (cleared before it), failed rather than met the end of the file:
 * E is set, and the file goes on past OFFSET + GOT (or its size cannot be
 * had).  A clean end of file leaves errno alone; the size tells a failure
 * from an errno that some call inside the MPI library left behind. */
static bool short_read_failed(MPI_File file, MPI_Offset offset, int got, int e)
{
    if (e == 0)
        return false;
    MPI_Offset size = 0;
    return MPI_File_get_size(file, &size) != MPI_SUCCESS || offset + got < size;
}

/* The file's bytes [OFFSET, OFFSET+LEN) into BUF, zero past the end.
 * EXPLAIN: a failure sets its reason (tci_error_set); a caller that
 * recovers from it (the sieve) leaves the reason of another failure
 * alone. */
static int read_span(MPI_File file, MPI_Offset offset, char *buf, int len, bool explain)
{
    int done = 0;
    while (done < len) {
        MPI_Status status;
        errno = 0;
        int err = MPI_File_read_at(file, offset + done, buf + done, len - done, MPI_BYTE,
                                   &status);
        int saved = errno;
        if (err != MPI_SUCCESS && !explain)
            return TCIO_ERR_IO;
        if (err != MPI_SUCCESS)            /* the reason names the MPI call */
            return tci_error_from_io_at(err, "MPI_File_read_at(file, offset, ...)", __func__);
        int got = 0;
        MPI_Get_count(&status, MPI_BYTE, &got);
        if (got < 0 || got == MPI_UNDEFINED || got > len - done)
            got = 0;
        if (got > 0) {
            /* A short count with bytes: the rest is read again.  Open MPI
             * 4.1's OMPIO returns what one pread gave, which a file
             * system may cut short (an error past some bytes, FUSE, NFS);
             * taken for the end of the file, it made the sieve write zeros
             * over the file's bytes and loads return zeros. */
            done += got;
            continue;
        }
        /* Nothing read: the end of the file, or a failure that OMPIO
         * reports as a success (it prints the pread's error and returns
         * MPI_SUCCESS with no bytes), as for writes (mpi_write). */
        if (short_read_failed(file, offset + done, 0, saved)) {
            if (!explain)
                return TCIO_ERR_IO;
            return tci_error_set(TCIO_ERR_IO, "MPI_File_read_at of %d bytes at offset %lld "
                                 "read %d: %s", len, (long long)offset, done, strerror(saved));
        }
        break;
    }
    memset(buf + done, 0, (size_t)(len - done));
    return TCIO_SUCCESS;
}

void tci_segio_identify(tci_segio *io, const char *name)
{
    struct stat st;
    io->identified = tci_file_system_name(name, &st, true) != NULL;
    if (io->identified) {
        io->device = (unsigned long long)st.st_dev;
        io->inode = (unsigned long long)st.st_ino;
    }
}

/* Whether NAME still names the file identified at open. */
static bool still_the_file(const tci_segio *io)
{
    struct stat st;
    return io->identified && tci_file_system_name(io->name, &st, true) != NULL &&
           (unsigned long long)st.st_dev == io->device &&
           (unsigned long long)st.st_ino == io->inode;
}

/* A read-only handle of this rank's own on the write-only file, opened by
 * name: MPI_FILE_NULL unless the name names the same file before and
 * after the open (a reader of another file would write that file's bytes
 * into this one's holes). */
static MPI_File open_own_reader(tci_segio *io)
{
    MPI_File reader = MPI_FILE_NULL;
    if (!still_the_file(io) ||
        tci_file_open_own(io->name, MPI_MODE_RDONLY, MPI_INFO_NULL, &reader) != MPI_SUCCESS)
        return MPI_FILE_NULL;
    if (!still_the_file(io)) {
        MPI_File_close(&reader);
        return MPI_FILE_NULL;
    }
    return reader;
}

/* The handle the sieve reads with, or MPI_FILE_NULL if it cannot read.  A
 * file opened write-only gets a read-only handle of this rank's own
 * (MPI_COMM_SELF: no other rank takes part), as ROMIO opens such files
 * read-write internally for its data sieving; where that is refused (no
 * read permission, MPI_MODE_UNIQUE_OPEN promised no second open) writes
 * stay per run. */
static MPI_File sieve_reader(tci_segio *io)
{
    if (io->reader_state == READER_UNKNOWN) {
        int amode = 0;
        io->reader_state = READER_NONE;
        if (MPI_File_get_amode(io->file, &amode) != MPI_SUCCESS)
            return MPI_FILE_NULL;
        if (!(amode & MPI_MODE_WRONLY)) {
            io->reader_state = READER_FILE;
        } else if (!io->unique_open) {
            io->reader = open_own_reader(io);
            if (io->reader != MPI_FILE_NULL)
                io->reader_state = READER_OWN;
        }
    }
    switch (io->reader_state) {
    case READER_FILE: return io->file;
    case READER_OWN:  return io->reader;
    default:          return MPI_FILE_NULL;
    }
}

/* Sieve [LO, HI) of the segment at BASE through SINK, one buffer (BUF) at
 * a time, skipping stretches without written bytes.  *DONE is where the
 * sieve stopped: HI, or the start of a buffer the file could not be read
 * into (the caller writes the rest per run; a read failure alone loses
 * nothing). */
static int sieve(tci_sink *sink, char *buf, MPI_Offset base, const char *data,
                 const unsigned char *bitmap, int lo, int hi, int *done)
{
    int pos = lo, end;
    while ((pos = tci_bitmap_next_run(bitmap, pos, hi, 1, &end)) < hi) {
        int to = hi - pos > TCI_SIEVE_BUFFER ? pos + TCI_SIEVE_BUFFER : hi;
        *done = pos;
        if (sink->read_at(sink->file, base + pos, buf, to - pos) != TCIO_SUCCESS)
            return TCIO_SUCCESS;
        overlay_written(buf, data, bitmap, pos, to);
        int rc = sink->write_at(sink->file, base + pos, buf, to - pos);
        if (rc != TCIO_SUCCESS)
            return rc;
        pos = to;
    }
    *done = hi;
    return TCIO_SUCCESS;
}

int tci_segment_write(tci_sink *sink, int size, int64_t segment, const char *data,
                      const unsigned char *bitmap)
{
    MPI_Offset base = (MPI_Offset)segment * size;
    int lo, hi;
    int64_t runs = tci_bitmap_shape(bitmap, size, &lo, &hi);
    if (runs == 0)
        return TCIO_SUCCESS;
    char *buf = worth_sieving(runs, hi - lo) ? sink->sieve_buffer(sink->file) : NULL;
    if (buf) {
        int done = lo;
        int rc = sieve(sink, buf, base, data, bitmap, lo, hi, &done);
        if (rc != TCIO_SUCCESS)
            return rc;
        if (done == hi) {
            sink->sieved++;
            return TCIO_SUCCESS;
        }
        lo = done;          /* the file could not be read: the rest per run */
    }
    return write_runs(sink, base, data, bitmap, lo, size);
}

/* ---- the MPI-IO sink: the file's handle, and the sieve's reader ----------- */

static int segio_write_at(void *file, MPI_Offset offset, const char *data, int len)
{
    return mpi_write(((tci_segio *)file)->file, offset, data, len);
}

/* The sieve's read: a failure is recovered from (the runs are written one
 * by one), so it sets no reason. */
static int segio_read_at(void *file, MPI_Offset offset, char *buf, int len)
{
    return read_span(sieve_reader(file), offset, buf, len, false);
}

/* The sieve's buffer, once the file turned out readable. */
static char *segio_sieve_buffer(void *file)
{
    tci_segio *io = file;
    if (sieve_reader(io) == MPI_FILE_NULL)
        return NULL;
    if (!io->buffer)
        io->buffer = malloc(TCI_SIEVE_BUFFER);
    return io->buffer;
}

int tci_segio_write(tci_segio *io, int64_t segment, const char *data,
                    const unsigned char *bitmap)
{
    tci_sink sink = { .write_at = segio_write_at, .read_at = segio_read_at,
                      .sieve_buffer = segio_sieve_buffer, .file = io };
    int rc = tci_segment_write(&sink, (int)io->map->segment_size, segment, data, bitmap);
    io->stats->count[TCI_C_SIEVED] += sink.sieved;
    return rc;
}

void tci_segio_close(tci_segio *io)
{
    if (io->reader_state == READER_OWN)
        MPI_File_close(&io->reader);
    io->reader_state = READER_UNKNOWN;
    free(io->buffer);
    io->buffer = NULL;
}

int tci_segio_read_range(MPI_File file, const tci_segmap *map, int64_t segment, int lo, int hi,
                         char *buf)
{
    return read_span(file, segment_start(map, segment) + lo, buf + lo, hi - lo, true);
}
