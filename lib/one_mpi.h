/* one_mpi.h - finding a second MPI library in the process beside the one
 * libtcio was built with.  A program compiled with the other MPI's mpicc
 * (tcio.h refuses that at compile time) or mpifort (a Fortran `use mpi`
 * program, which no header sees), or given another build's MPI-IO
 * interposer with LD_PRELOAD, links both libraries; libtcio's MPI calls
 * then reach whichever comes first with handles of the other, and the
 * program crashes or MPI aborts.  The open refuses such a process
 * (open.c, TCIO_ERR_MPI), the interposer stops it before main
 * (mpiio/real.c).  Header only: libtcio and the interposer each include
 * it. */
#ifndef TCIO_ONE_MPI_H
#define TCIO_ONE_MPI_H

#include <dlfcn.h>
#include <stddef.h>
#include <mpi.h>

/* Symbols only the other implementation's library defines: Open MPI's
 * predefined communicator object; MPICH's version string and the error
 * constructor its derivatives keep.  Another MPI checks nothing. */
#if defined(OPEN_MPI)
#define TCI_OWN_MPI "Open MPI"
#define TCI_OTHER_MPI "MPICH"
#define TCI_OTHER_MPI_SYMBOLS "MPII_Version_string", "MPIR_Err_create_code"
#elif defined(MPICH_VERSION)
#define TCI_OWN_MPI "MPICH"
#define TCI_OTHER_MPI "Open MPI"
#define TCI_OTHER_MPI_SYMBOLS "ompi_mpi_comm_world"
#endif

/* Local, and calls no MPI function: the first of those symbols defined in
 * this process (a library loaded later with dlopen counts too), or NULL.
 * A dlsym of a missing name costs about half a microsecond. */
static inline const char *tci_other_mpi_symbol(void)
{
#ifdef TCI_OTHER_MPI_SYMBOLS
    static const char *const symbols[] = { TCI_OTHER_MPI_SYMBOLS };
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++)
        if (dlsym(RTLD_DEFAULT, symbols[i]))
            return symbols[i];
#endif
    return NULL;
}

#endif
