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

/* Where a turn of MPI's engine runs every component's progress (Open
 * MPI: tci_mpi_progress_whole_engine), each POLL_ROUND polls set the
 * interval from the round's mean turn: more than a sixteenth of the time
 * between polls doubles it, less than a sixty-fourth halves it back.
 * Elsewhere (MPICH) a turn costs a fraction of a microsecond unless it
 * serves other ranks' one-sided operations, which would wait longer if
 * this rank polled less often: the interval stays TCI_POLL_INTERVAL. */
#define POLL_ROUND 16

static void adapt_poll_interval(tcio_file *fh, double turn)
{
    if (!tci_mpi_progress_whole_engine())
        return;
    fh->poll_turn_sum += turn;
    if (++fh->poll_turns < POLL_ROUND)
        return;
    double now = MPI_Wtime();
    double mean = fh->poll_turn_sum / POLL_ROUND;
    double between = (now - fh->poll_round_start) / POLL_ROUND;
    fh->poll_turns = 0;
    fh->poll_turn_sum = 0;
    fh->poll_round_start = now;
    if (mean * 16 > between && fh->poll_interval < TCI_POLL_INTERVAL_MAX)
        fh->poll_interval *= 2;
    else if (mean * 64 < between && fh->poll_interval > TCI_POLL_INTERVAL)
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
            adapt_poll_interval(fh, turn);
        serve_and_drain(fh);
        tci_error_pending = 0;
    }
    fh->poll_countdown = fh->poll_interval;
}
