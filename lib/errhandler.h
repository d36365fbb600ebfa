/* errhandler.h - MPI_ERRORS_RETURN on MPI objects the user owns, for the
 * length of one libtcio call.
 *
 * MPI raises the errors of MPI_File_open and MPI_File_delete on
 * MPI_FILE_NULL's error handler, and those of the open's collectives on
 * the caller's communicator on that communicator's; both are the
 * program's.  A program that made them MPI_ERRORS_ARE_FATAL (the
 * communicator's default) would have a missing file or an existing one
 * abort the job (MPICH 4.0.2 even crashed in MPI_File_open) where tcio.h
 * promises a code on every rank.  libtcio sets MPI_ERRORS_RETURN on them
 * around its own calls and puts the program's handler back after them.
 * In a program whose other threads make MPI calls at the same moment,
 * their errors on these objects are returned meanwhile (doc/semantics.md,
 * Errors). */
#ifndef TCIO_ERRHANDLER_H
#define TCIO_ERRHANDLER_H

#include <mpi.h>

/* The program's handler set aside: restore it with
 * tci_program_handler_restore. */
typedef struct tci_program_handler {
    MPI_Errhandler saved;     /* MPI_ERRHANDLER_NULL: nothing set aside */
    MPI_Comm       comm;      /* MPI_COMM_NULL: MPI_FILE_NULL's */
} tci_program_handler;

/* MPI_ERRORS_RETURN on COMM, or on MPI_FILE_NULL where COMM is
 * MPI_COMM_NULL; where the handler cannot be read or set, nothing is
 * changed (the call then goes on under the program's handler). */
void tci_returning_errors(MPI_Comm comm, tci_program_handler *h);

/* The program's handler back where tci_returning_errors set it aside. */
void tci_program_handler_restore(tci_program_handler *h);

#endif
