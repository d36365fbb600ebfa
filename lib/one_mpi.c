/* one_mpi.c - refusing a process that holds a second MPI library beside
 * the one libtcio was built with (one_mpi.h). */
#define _GNU_SOURCE   /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <stddef.h>
#include <mpi.h>
#include "one_mpi.h"
#include "error.h"

/* Symbols only the other implementation's library defines: Open MPI's
 * predefined communicator object; MPICH's version string and the error
 * constructor its derivatives keep. */
#if defined(OPEN_MPI)
#define OWN_MPI "Open MPI"
#define OTHER_MPI "MPICH"
static const char *const other_symbols[] = { "MPII_Version_string", "MPIR_Err_create_code",
                                             NULL };
#elif defined(MPICH_VERSION)
#define OWN_MPI "MPICH"
#define OTHER_MPI "Open MPI"
static const char *const other_symbols[] = { "ompi_mpi_comm_world", NULL };
#else
#define OWN_MPI "this MPI"
#define OTHER_MPI "another MPI"
static const char *const other_symbols[] = { NULL };
#endif

int tci_one_mpi_check(void)
{
    /* Looked up at every open (a few microseconds): a library loaded
     * later with dlopen counts too. */
    for (const char *const *s = other_symbols; *s; s++)
        if (dlsym(RTLD_DEFAULT, *s))
            return tci_error_set_without_mpi(
                TCIO_ERR_MPI, "libtcio was built with " OWN_MPI ", but " OTHER_MPI "'s library "
                "is loaded too (%s): build the program with " OWN_MPI "'s mpicc or mpifort, "
                "or use a libtcio built with " OTHER_MPI, *s);
    return TCIO_SUCCESS;
}
