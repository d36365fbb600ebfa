/* striping.h - what the file system says about a file's stripes. */
#ifndef TCIO_STRIPING_H
#define TCIO_STRIPING_H

#include <stdint.h>
#include <mpi.h>

typedef struct tci_striping {
    int64_t unit;     /* stripe size in bytes, 0 if unknown */
    int64_t factor;   /* stripe count (storage targets), 0 if unknown */
} tci_striping;

/* Collective over COMM: the striping of open file FILE named FNAME, as
 * rank 0 learns it (from Lustre itself when libtcio was built with
 * lustreapi, else from the striping_unit/striping_factor hints the MPI-IO
 * layer reports) and broadcasts, so that every rank derives the same
 * defaults and the metadata server sees one query. */
tci_striping tci_striping_of(MPI_File file, const char *fname, MPI_Comm comm);

#endif
