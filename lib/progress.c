/* progress.c - what a rank does for others when it enters the library. */
#include "progress.h"
#include "error.h"
#include "owner.h"

/* Seconds one turn of MPI's progress engine took (0: none was needed). */
static double turn_mpi_progress(tcio_file *fh)
{
    /* A window's passive target serves others' operations only inside
     * MPI's progress engine (tci_mpi_progress says which call turns it
     * under every MPI).  Moves through shared memory need nobody's
     * progress, and MPICH's engine is not cheap (a few microseconds a call
     * with ch4:ucx). */
    if (!fh->l2.t.ops->needs_progress)
        return 0;
    double t0 = MPI_Wtime();
    tci_mpi_progress(fh->comm);
    return MPI_Wtime() - t0;
}

/* Polls may take a sixteenth of an aggregator's time between them, at
 * most; below a sixty-fourth the interval shrinks back. */
static void adapt_poll_interval(tcio_file *fh, double turn, double now)
{
    double between = now - fh->poll_last;
    fh->poll_last = now;
    if (turn * 16 > between && fh->poll_interval < TCI_POLL_INTERVAL_MAX)
        fh->poll_interval *= 2;
    else if (turn * 64 < between && fh->poll_interval > TCI_POLL_INTERVAL)
        fh->poll_interval /= 2;
}

/* An aggregator's duties besides MPI's progress. */
static void serve_and_drain(tcio_file *fh)
{
    /* The forwards that reached this aggregator: a probe each time costs
     * as much as the rest of the poll under some MPIs (Open MPI's), and
     * the moves serve them too. */
    if (++fh->fwd.polls % TCI_FORWARD_POLLS == 0)
        tci_forward_serve(fh);
    tci_owner_early_drains(fh);
}

void tci_progress(tcio_file *fh)
{
    turn_mpi_progress(fh);
    serve_and_drain(fh);
}

void tci_progress_poll(tcio_file *fh)
{
    if (fh->l2.t.local_slots > 0) {
        double turn = turn_mpi_progress(fh);
        if (turn > 0)
            adapt_poll_interval(fh, turn, MPI_Wtime());
        serve_and_drain(fh);
        tci_error_pending = 0;
    }
    fh->poll_countdown = fh->poll_interval;
}
