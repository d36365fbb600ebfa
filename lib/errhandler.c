/* errhandler.c - MPI_ERRORS_RETURN on MPI_FILE_NULL for the length of one
 * of libtcio's own MPI_File_open or MPI_File_delete calls (errhandler.h
 * says why).  The handles MPI_File_get_errhandler returns are freed, MPI's
 * own too: both MPICH and Open MPI count references to those. */
#include "errhandler.h"

void tci_file_null_returning(tci_program_handler *h)
{
    h->saved = MPI_ERRHANDLER_NULL;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    if (MPI_File_get_errhandler(MPI_FILE_NULL, &eh) != MPI_SUCCESS)
        return;
    if (eh == MPI_ERRORS_RETURN ||          /* already: nothing to put back */
        MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN) != MPI_SUCCESS) {
        MPI_Errhandler_free(&eh);
        return;
    }
    h->saved = eh;
}

void tci_program_handler_restore(tci_program_handler *h)
{
    if (h->saved == MPI_ERRHANDLER_NULL)
        return;
    MPI_File_set_errhandler(MPI_FILE_NULL, h->saved);
    MPI_Errhandler_free(&h->saved);
}
