/* collective.h - the library's own collective steps: waits that give the
 * processor away, and an opt-in timeout for ranks that never arrive. */
#ifndef TCIO_COLLECTIVE_H
#define TCIO_COLLECTIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <mpi.h>

/* Name the public call whose collective steps follow ("tcio_close"), for
 * the timeout's message; until tci_collective_leave, this process is
 * inside that collective call (tci_collective_check_wait). */
void tci_collective_enter(const char *call);

/* The collective call named by tci_collective_enter has ended (each
 * public collective call leaves on every path, its result noted). */
void tci_collective_leave(void);

/* MPI_Allreduce and MPI_Barrier through their nonblocking forms, waited
 * for with tci_collective_wait.  Return an MPI error code. */
int tci_allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm);
int tci_barrier(MPI_Comm comm);

/* Agreement on an outcome: every rank learns the largest libtcio error
 * code of all ranks, RC being this rank's (TCIO_SUCCESS if none failed). */
int tci_agree(MPI_Comm comm, int rc);

/* The result of a collective call whose local part returned LOCAL: this
 * rank's own error, else TCIO_ERR_REMOTE if another rank failed (with the
 * reason of the lowest rank that failed on its own, tci_error_share_remote). */
int tci_collective_result(MPI_Comm comm, int local);

/* The same, agreeing in the same step on the largest of every rank's
 * *VALUE (stored back in *VALUE; left as it was if the agreement itself
 * failed): tcio_flush and tcio_sync agree on the end of the file this way
 * (size.c). */
int tci_collective_result_max(MPI_Comm comm, int local, int64_t *value);

/* Wait for a collective request: poll, yielding the processor, then
 * sleeping longer and longer, so that ranks waiting for one that is late
 * (or never comes: a skipped collective call hangs, as in MPI) do not keep
 * their cores busy.  With TCIO_COLLECTIVE_TIMEOUT=<seconds> set, a wait
 * longer than that prints a message naming the call on stderr and calls
 * MPI_Abort on MPI_COMM_WORLD. */
int tci_collective_wait(MPI_Request *req);

/* For a caller that polls a collective request itself (serving between
 * tests, as the settle of staged forwards does): past
 * TCIO_COLLECTIVE_TIMEOUT seconds since START (MPI_Wtime), the same
 * message and MPI_Abort as tci_collective_wait; otherwise nothing. */
void tci_collective_check_timeout(double start);

/* For a wait for another rank that is not itself a collective step (a
 * one-sided operation that waits for its target's progress: RANK of
 * COMM; a slot or lock another rank holds: RANK -1), polled since START:
 * inside a collective call, the same as tci_collective_check_timeout, the
 * message naming RANK (a rank that skipped the call and left MPI, an
 * aggregator whose slot a forward at tcio_close needs, must not hold the
 * others for ever); outside one nothing, since an aggregator may compute
 * for as long as it likes between its calls. */
void tci_collective_check_wait(double start, MPI_Comm comm, int rank);

/* Count (DELTA +1 or -1) the open level 2s whose slots other ranks reach
 * through moves that wait for this rank's MPI progress (level2.c): while
 * any is open, tci_collective_wait yields for the first 100 ms of a wait,
 * then keeps its sleeps short (50 us) rather than lengthening them to
 * 1 ms. */
void tci_collective_serve(int delta);

/* Whether any such level 2 is open in this process: an aggregator's polls
 * turn MPI's progress engine only then (progress.c). */
bool tci_collective_serving(void);

/* The seconds this process has waited in tci_collective_wait for the
 * other ranks so far (a collective that completes at its first test
 * counts nothing): callers take differences (TCIO_STATS
 * collective_waits). */
double tci_collective_waited(void);

/* Add SECONDS to that sum: a collective step waited for in a loop of its
 * own (the staged forwards' settle, which serves forwards meanwhile). */
void tci_collective_note_waited(double seconds);

#endif
