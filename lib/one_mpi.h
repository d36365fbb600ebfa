/* one_mpi.h - refusing a process that holds a second MPI library beside
 * the one libtcio was built with. */
#ifndef TCIO_ONE_MPI_H
#define TCIO_ONE_MPI_H

/* Local, and calls no MPI function: TCIO_SUCCESS, or TCIO_ERR_MPI with
 * the reason (tcio_last_error) when the other implementation's library is
 * loaded in this process too (MPICH and Open MPI are told apart; another
 * MPI is not checked).  A program compiled with the other MPI's mpicc
 * (tcio.h refuses that at compile time) or with its mpifort (a Fortran
 * `use mpi` program, which no header sees) links both libraries, and
 * libtcio's MPI calls then reach whichever comes first with handles of
 * the other: a crash or MPI's abort in the open. */
int tci_one_mpi_check(void);

#endif
