/* progress.c - what a rank does for others when it enters the library. */
#include "progress.h"
#include "collective.h"
#include "error.h"
#include "owner.h"

/* ASKED: by tcio_progress, which always turns MPI's progress engine where
 * FH's transport needs it (not shm; not rma where the open found that
 * other ranks' operations complete without their target's progress,
 * tci_level2_probe_progress); a poll turns it only while, besides, a
 * level 2 open in this process has slots that others reach through moves
 * needing it (tci_collective_serving): the engine serves every window of
 * the process, FH's or another file's, and a file opened MPI_MODE_RDONLY
 * on several nodes without a read session serves nobody (level2.h,
 * tci_level2_reached_by_others). */
static void give_a_moment(tcio_file *fh, bool asked)
{
    /* A window's passive target serves others' operations only inside
     * MPI's progress engine (tci_mpi_progress says which call turns it
     * under every MPI).  Moves through shared memory need nobody's
     * progress, and a turn is never free (Open MPI's runs every
     * component, and yields the processor when ranks outnumber cores). */
    if (fh->l2.t.needs_progress && (asked || tci_collective_serving()))
        tci_mpi_progress(fh->comm);
    /* The forwards that reached this aggregator: a probe each time costs
     * as much as the rest of the poll under some MPIs (Open MPI's), and
     * the moves serve them too; tcio_progress always serves (tcio.h). */
    bool forwards_due = ++fh->polls % TCI_FORWARD_POLLS == 0;
    if (asked || forwards_due)
        tci_forward_serve(fh);
    /* The notice word: under rma an atomic read and a flush of the
     * window, which under MPICH between nodes is an active message to
     * oneself (about a microsecond); at every poll it was 40-45% of the
     * time TCIO_STATS counts as an aggregator's early drains on two
     * "nodes".  A segment takes hundreds of polls to fill, so one look
     * in TCI_NOTICE_POLLS delays its drain by a few of them at most; shm's
     * look is a CPU atomic, made at every poll, and tcio_progress always
     * looks. */
    if (asked || !fh->l2.t.ops->notices_by_mpi || fh->polls % TCI_NOTICE_POLLS == 0)
        tci_owner_early_drains(fh);
}

void tci_progress(tcio_file *fh)
{
    give_a_moment(fh, true);
}

void tci_progress_poll(tcio_file *fh)
{
    fh->poll_countdown = TCI_POLL_INTERVAL;
    if (fh->l2.t.local_slots > 0) {
        give_a_moment(fh, false);
        tci_error_pending = 0;
    }
}
