/* segio.h - segments between memory and the file: the file side of
 * drains, spills and loads.  Knows the file and the segment geometry, not
 * where segments live in level 2. */
#ifndef TCIO_SEGIO_H
#define TCIO_SEGIO_H

#include <stdint.h>
#include <stdbool.h>
#include <mpi.h>
#include "segmap.h"
#include "stats.h"

/* A segment write with at least this many runs of written bytes, and on
 * average at least one run per TCI_SIEVE_RUN_SPACING bytes of the span
 * from its first to its last written byte, is sieved: the file's bytes of
 * the span are read, the written runs laid on top, and the span written
 * back with one write per TCI_SIEVE_BUFFER bytes.  Fewer or sparser runs
 * are written one MPI_File_write_at each.  doc/design.md ("A level 2 that
 * tolerates drift") says why these values. */
#define TCI_SIEVE_MIN_RUNS     8
#define TCI_SIEVE_RUN_SPACING  4096
#define TCI_SIEVE_BUFFER       (64 * 1024)

/* Where a segment write goes.  WRITE_AT writes LEN bytes at OFFSET (all
 * of them, or it fails); READ_AT reads LEN bytes at OFFSET, zeros past the
 * end of the file; SIEVE_BUFFER returns TCI_SIEVE_BUFFER bytes for a sieve,
 * or NULL when the file cannot be read (or no memory): the segment is then
 * written per run (it is asked only for segments worth sieving, so that a
 * reader is opened lazily).  All get FILE; the I/O functions return
 * TCIO_SUCCESS or a tcio error code.  SIEVED counts the segment writes
 * that were sieved.  segio.c has a sink over MPI-IO (the file's handle and
 * the sieve's reader); drainer.c one over a POSIX descriptor, for the
 * background drain, which makes no MPI call. */
typedef struct tci_sink {
    int   (*write_at)(void *file, MPI_Offset offset, const char *data, int len);
    int   (*read_at)(void *file, MPI_Offset offset, char *buf, int len);
    char *(*sieve_buffer)(void *file);
    void   *file;
    int64_t sieved;
} tci_sink;

/* Write the bytes of file segment SEGMENT (of SEGMENT_SIZE bytes) whose
 * bits are set in BITMAP from DATA to SINK, as tci_segio_write describes.
 * Calls nothing but SINK's functions and the bitmap helpers of slot.h, so
 * that a thread that must not call MPI can use it. */
int tci_segment_write(tci_sink *sink, int segment_size, int64_t segment, const char *data,
                      const unsigned char *bitmap);

/* The file side of one open file, for one rank.  FILE, MAP and STATS are
 * the open file's (set by tci_segio_bind before each use); the rest is
 * segio's own, zero before the first use. */
typedef struct tci_segio {
    MPI_File          file;
    const tci_segmap *map;
    tci_stats        *stats;      /* counts sieved segment writes */
    const char       *name;       /* the file's name, to open READER */
    bool              identified; /* DEVICE and INODE are the file's */
    bool              unique_open; /* MPI_MODE_UNIQUE_OPEN: no second handle */
    unsigned long long device, inode;   /* of NAME at open (write-only files) */
    int               reader_state;   /* 0: not looked at yet; see segio.c */
    MPI_File          reader;     /* reads the file's bytes for a sieve */
    char             *buffer;     /* TCI_SIEVE_BUFFER bytes, at first sieve */
} tci_segio;

/* Local: (re)bind IO to the open file FILE named NAME, whose geometry is
 * MAP and statistics STATS.  Cheap; callers do it before every write. */
static inline tci_segio *tci_segio_bind(tci_segio *io, MPI_File file, const char *name,
                                        const tci_segmap *map, tci_stats *stats)
{
    io->file = file;
    io->name = name;
    io->map = map;
    io->stats = stats;
    return io;
}

/* Local, at open of a write-only file: note which file NAME is now, so
 * that a sieve, which opens its own read handle by name later, never reads
 * another file (the program may chdir, or the file be renamed or replaced,
 * meanwhile).  Without this (no file found under the name, with its
 * MPI-IO prefix or without), the file's spills stay one write per run. */
void tci_segio_identify(tci_segio *io, const char *name);

/* Write the bytes of file segment SEGMENT whose bits are set in BITMAP from
 * DATA (one segment) to the file.  Unwritten bytes keep the file's
 * content: with few or sparse runs each run is one MPI_File_write_at and
 * holes are never written; with many small runs the span of written bytes
 * is sieved (read, overlaid, written back; never past its last written
 * byte, so the file does not grow beyond what per-run writes would give).
 * The caller must hold the segment exclusively (its slot's lock, or the
 * close drain after the barrier): the read-modify-write relies on no one
 * else writing the segment's bytes meanwhile.  Returns TCIO_SUCCESS or the
 * file-system error. */
int tci_segio_write(tci_segio *io, int64_t segment, const char *data,
                    const unsigned char *bitmap);

/* Read the bytes [LO, HI) of file segment SEGMENT of FILE into BUF + LO
 * (BUF: one segment); bytes past the end of the file are zero.  Returns
 * TCIO_SUCCESS or the file-system error. */
int tci_segio_read_range(MPI_File file, const tci_segmap *map, int64_t segment, int lo, int hi,
                         char *buf);

/* Local: close the reader and free the buffer of IO (before the file is
 * closed; harmless when never used or already closed). */
void tci_segio_close(tci_segio *io);

#endif
