/* striping.h - what the file system says about a file's stripes. */
#ifndef TCIO_STRIPING_H
#define TCIO_STRIPING_H

#include <stdint.h>
#include <mpi.h>

typedef struct tci_striping {
    int64_t unit;     /* stripe size in bytes, 0 if unknown */
    int64_t factor;   /* stripe count (storage targets), 0 if unknown */
} tci_striping;

/* The striping of open file FILE named FNAME: from Lustre itself when
 * libtcio was built with lustreapi, else from the striping_unit and
 * striping_factor hints the MPI-IO layer reports.  Local; tcio_open asks
 * on rank 0 only and shares the answer in the agreement that follows
 * MPI_File_open, so that every rank derives the same defaults and the
 * metadata server sees one query. */
tci_striping tci_striping_read(MPI_File file, const char *fname);

#endif
