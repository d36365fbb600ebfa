/* segio.h - segments between memory and the file: the file side of
 * drains, spills and loads.  Knows the file and the segment geometry, not
 * where segments live in level 2. */
#ifndef TCIO_SEGIO_H
#define TCIO_SEGIO_H

#include <stdint.h>
#include <mpi.h>
#include "segmap.h"

/* Write the bytes of file segment SEGMENT whose bits are set in BITMAP from
 * DATA (one segment) to FILE, one MPI_File_write_at per run of written
 * bytes: unwritten bytes are never written, so holes stay holes.  Returns
 * TCIO_SUCCESS or the file-system error. */
int tci_segio_write(MPI_File file, const tci_segmap *map, int64_t segment, const char *data,
                    const unsigned char *bitmap);

/* Read file segment SEGMENT of FILE into BUF (one segment); bytes past the
 * end of the file are zero.  Returns TCIO_SUCCESS or the file-system
 * error. */
int tci_segio_read(MPI_File file, const tci_segmap *map, int64_t segment, char *buf);

#endif
