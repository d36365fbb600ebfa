/* error.h - turning MPI error codes into libtcio error codes. */
#ifndef TCIO_ERROR_H
#define TCIO_ERROR_H

/* Error code for a failed MPI_File_open (no such file, access, exists...). */
int tci_error_from_open(int mpi_err);

/* Error code for a failed MPI-IO read or write (no space, I/O error...). */
int tci_error_from_io(int mpi_err);

/* Error code for any other failed MPI call (window, datatype, collective). */
int tci_error_from_mpi(int mpi_err);

#endif
