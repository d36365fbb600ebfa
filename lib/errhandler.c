/* errhandler.c - libtcio's own MPI_File_open and MPI_File_delete, with
 * MPI_ERRORS_RETURN on MPI_FILE_NULL for the length of the call
 * (errhandler.h says why).  The handles MPI_File_get_errhandler returns
 * are freed, MPI's own too: both MPICH and Open MPI count references to
 * those. */
#include "errhandler.h"

/* MPI_ERRORS_RETURN on MPI_FILE_NULL; the program's handler, to put back,
 * or MPI_ERRHANDLER_NULL where there is nothing to put back (it returned
 * already, or it cannot be read or replaced: the call then goes on under
 * it). */
static MPI_Errhandler file_null_returning(void)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    if (MPI_File_get_errhandler(MPI_FILE_NULL, &eh) != MPI_SUCCESS)
        return MPI_ERRHANDLER_NULL;
    if (eh == MPI_ERRORS_RETURN ||
        MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN) != MPI_SUCCESS) {
        MPI_Errhandler_free(&eh);
        return MPI_ERRHANDLER_NULL;
    }
    return eh;
}

static void program_handler_restore(MPI_Errhandler saved)
{
    if (saved == MPI_ERRHANDLER_NULL)
        return;
    MPI_File_set_errhandler(MPI_FILE_NULL, saved);
    MPI_Errhandler_free(&saved);
}

int tci_file_open_own(const char *name, int amode, MPI_Info info, MPI_File *file)
{
    MPI_Errhandler saved = file_null_returning();
    int err = MPI_File_open(MPI_COMM_SELF, name, amode, info, file);
    program_handler_restore(saved);
    if (err == MPI_SUCCESS)
        MPI_File_set_errhandler(*file, MPI_ERRORS_RETURN);
    return err;
}

int tci_file_delete(const char *name)
{
    MPI_Errhandler saved = file_null_returning();
    int err = MPI_File_delete(name, MPI_INFO_NULL);
    program_handler_restore(saved);
    return err;
}
