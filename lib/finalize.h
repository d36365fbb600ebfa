/* finalize.h - releasing what the library keeps for the life of the
 * process (keyvals, a private communicator) when MPI_Finalize runs. */
#ifndef TCIO_FINALIZE_H
#define TCIO_FINALIZE_H

/* Run FN when MPI_Finalize deletes MPI_COMM_SELF's attributes (before MPI
 * shuts down, so FN may call MPI), latest registration first.  Returns 0,
 * or -1 if it cannot be arranged (FN then never runs). */
int tci_at_finalize(void (*fn)(void));

#endif
