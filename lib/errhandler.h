/* errhandler.h - MPI_ERRORS_RETURN on MPI_FILE_NULL for the length of one
 * of libtcio's own MPI_File_open or MPI_File_delete calls.
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

/* MPI_FILE_NULL's handler set aside by tci_file_null_returning:
 * MPI_ERRHANDLER_NULL where nothing was. */
typedef struct tci_program_handler {
    MPI_Errhandler saved;
} tci_program_handler;

/* MPI_ERRORS_RETURN on MPI_FILE_NULL; where its handler cannot be read or
 * set, nothing is changed (the call then goes on under the program's). */
void tci_file_null_returning(tci_program_handler *h);

/* The program's handler back on MPI_FILE_NULL. */
void tci_program_handler_restore(tci_program_handler *h);

#endif
