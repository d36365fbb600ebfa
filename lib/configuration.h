/* configuration.h - segment size and level-2 capacity: parsing and defaults. */
#ifndef TCIO_CONFIGURATION_H
#define TCIO_CONFIGURATION_H

#include <stdint.h>
#include <mpi.h>

#define TCI_DEFAULT_SEGMENT_SIZE      (1 << 20)  /* when no striping_unit */
#define TCI_DEFAULT_SEGMENTS_PER_PROC 16         /* 16 MiB at 1 MiB, as ROMIO's cb_buffer_size */
#define TCI_MAX_SEGMENT_SIZE          (1 << 30)  /* datatype displacements are int */
#define TCI_MAX_SEGMENTS_PER_PROC     (1 << 20)  /* with the size limit, any window
                                                    size fits in an MPI_Aint */

typedef struct tci_config {
    int64_t segment_size;       /* 0 until known: then the striping default */
    int64_t segments_per_proc;
} tci_config;

/* Parse a positive size such as "4096", "64k" or "1M" (powers of 1024).
 * Returns 0 and stores it, or -1 for an empty, malformed, zero, negative or
 * overflowing value. */
int tci_parse_size(const char *text, int64_t *value);

/* Settings given explicitly: the environment (TCIO_SEGMENT_SIZE,
 * TCIO_SEGMENTS_PER_PROC) first, then the info keys.  Unset settings stay 0.
 * Returns TCIO_SUCCESS or TCIO_ERR_BAD_CONFIG. */
int tci_config_from_user(MPI_Info info, tci_config *cfg);

/* Fill what the user left unset: segment size from the file's
 * striping_unit hint (STRIPING_UNIT, 0 if none) else 1 MiB; the default
 * segment count.  Returns TCIO_SUCCESS or TCIO_ERR_BAD_CONFIG. */
int tci_config_finish(tci_config *cfg, int64_t striping_unit);

/* The striping_unit the MPI-IO layer reports for an open file, 0 if none. */
int64_t tci_config_striping_unit(MPI_File file);

/* A copy of INFO without the tcio_* keys, for MPI_File_open (MPI_INFO_NULL
 * when INFO is).  Returns an MPI error code. */
int tci_config_passthrough_info(MPI_Info info, MPI_Info *out);

#endif
