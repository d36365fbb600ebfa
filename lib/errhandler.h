/* errhandler.h - libtcio's own MPI_File_open and MPI_File_delete, with
 * MPI_ERRORS_RETURN on MPI_FILE_NULL for the length of the call.
 *
 * MPI raises the errors of those calls on MPI_FILE_NULL's error handler,
 * which is the program's.  A program that made it MPI_ERRORS_ARE_FATAL
 * would have a missing file or an existing one abort the job (MPICH 4.0.2
 * even crashed in MPI_File_open) where tcio.h promises a code on every
 * rank; a handler of its own would be called for libtcio's files.
 * libtcio sets MPI_ERRORS_RETURN there around its own calls and puts the
 * program's handler back after them.  In a program whose other threads
 * use MPI_FILE_NULL at the same moment (MPI_THREAD_MULTIPLE), files they
 * open take MPI_ERRORS_RETURN as their handler, their failed opens and
 * deletes return, and a handler they set there meanwhile is replaced by
 * the restore (doc/semantics.md, Errors).
 *
 * The communicator passed to tcio_open_comm is left alone: MPICH reports
 * MPI_ERRORS_ARE_FATAL for a communicator that never got a handler and
 * follows MPI_COMM_WORLD's, so setting back what it reports would change
 * the program's handling of its own errors (a review found it). */
#ifndef TCIO_ERRHANDLER_H
#define TCIO_ERRHANDLER_H

#include <mpi.h>

/* MPI_File_open of NAME on MPI_COMM_SELF (each rank's own handle), its
 * errors returned; the handle returns its errors too.  MPI's error code. */
int tci_file_open_own(const char *name, int amode, MPI_Info info, MPI_File *file);

/* MPI_File_delete of NAME, its errors returned.  MPI's error code. */
int tci_file_delete(const char *name);

#endif
