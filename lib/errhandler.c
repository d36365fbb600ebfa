/* errhandler.c - MPI_ERRORS_RETURN on MPI objects the user owns, for the
 * length of one libtcio call (errhandler.h says why). */
#include <stdbool.h>
#include "errhandler.h"

/* Handles that MPI_Errhandler_free must not be given: MPI's own (a
 * get_errhandler of one returns the handle itself in MPICH and Open MPI,
 * and freeing it is an error in some versions). */
static bool predefined(MPI_Errhandler eh)
{
    return eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ARE_FATAL
#ifdef MPI_ERRORS_ABORT
           || eh == MPI_ERRORS_ABORT
#endif
        ;
}

static int get_handler(MPI_Comm comm, MPI_Errhandler *eh)
{
    return comm == MPI_COMM_NULL ? MPI_File_get_errhandler(MPI_FILE_NULL, eh)
                                 : MPI_Comm_get_errhandler(comm, eh);
}

static int set_handler(MPI_Comm comm, MPI_Errhandler eh)
{
    return comm == MPI_COMM_NULL ? MPI_File_set_errhandler(MPI_FILE_NULL, eh)
                                 : MPI_Comm_set_errhandler(comm, eh);
}

static void release(MPI_Errhandler *eh)
{
    if (*eh != MPI_ERRHANDLER_NULL && !predefined(*eh))
        MPI_Errhandler_free(eh);
    *eh = MPI_ERRHANDLER_NULL;
}

void tci_returning_errors(MPI_Comm comm, tci_program_handler *h)
{
    h->comm = comm;
    h->saved = MPI_ERRHANDLER_NULL;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    if (get_handler(comm, &eh) != MPI_SUCCESS)
        return;
    if (eh == MPI_ERRORS_RETURN) {      /* already: nothing to put back */
        release(&eh);
        return;
    }
    if (set_handler(comm, MPI_ERRORS_RETURN) != MPI_SUCCESS) {
        release(&eh);
        return;
    }
    h->saved = eh;
}

void tci_program_handler_restore(tci_program_handler *h)
{
    if (h->saved == MPI_ERRHANDLER_NULL)
        return;
    set_handler(h->comm, h->saved);
    release(&h->saved);
}
