/* sync.c - tcio_sync: every rank's writes so far in the file, which stays
 * open and writable.
 *
 * MPI-IO makes the writes of one handle visible to the reads of another
 * only through the sync-barrier-sync pattern: the writer's MPI_File_sync,
 * a synchronisation between the two processes, the reader's
 * MPI_File_sync (MPI 4.0, 14.6.1).  Every rank has a handle of its own on
 * the file (open.c), and the rank that writes a segment is often not the
 * one that reads its bytes back next (a load, another rank's spill whose
 * sieve reads the bytes between its runs), so tcio_sync does the whole
 * pattern on every rank:
 *   1. every rank moves its level 1 to level 2 (tci_access_settle; on
 *      several nodes through its node's combining tier, which
 *      tci_combiner_settle empties into the file's level 2);
 *   2. a barrier: every move into every slot has completed;
 *   3. each aggregator writes its dirty slots and keeps them, clean
 *      (owner.c), so that later writes of a segment mark only their own
 *      bytes and its next write-back takes the others from the file;
 *   4. every rank syncs its handle: what it wrote (step 3, and its
 *      spills, writes around and drains since the last sync) is in the
 *      file for every other handle and process;
 *   5. a barrier;
 *   6. every rank syncs its handle again, so that its own later reads see
 *      every rank's writes; the sieve's read-only handle (segio.c) is
 *      closed, to be opened again, by then seeing them, when needed;
 *   7. the agreement on the outcome and on the end of the file (size.c),
 *      after which ranks move into level 2 again.
 * Between the two barriers nobody moves data; the file is written only in
 * step 3, by each segment's aggregator, which holds the segment alone
 * then. */
#include "file.h"
#include "access.h"
#include "collective.h"
#include "error.h"
#include "handle.h"
#include "owner.h"
#include "size.h"

/* A file that was opened read-only has no write of its own to sync, and
 * MPI_File_sync may refuse such a handle.  A failure sticks to the handle:
 * after a failed fsync the written bytes may never reach the storage, and
 * a later sync that succeeds does not say they did (Linux reports a
 * write-back error to one fsync only), so the close must fail too. */
static int sync_handle(tcio_file *fh)
{
    if (!fh->can_write)
        return TCIO_SUCCESS;
    return tci_note_failure(fh, tci_error_from_io(MPI_File_sync(fh->file)));
}

/* Steps 1 to 6 above: this rank's part; the first failure is returned,
 * with its own reason, and the steps go on (the collective ones must, and
 * the slots that can still reach the file should). */
static int sync_steps(tcio_file *fh)
{
    bool failed_before = fh->failure != TCIO_SUCCESS;
    tci_first_failure first = { 0 };
    tci_first_failure_note(&first, tci_combiner_settle(fh, tci_access_settle(fh)));
    tci_first_failure_note(&first, tci_error_from_mpi(tci_barrier(fh->comm)));
    tci_first_failure_note(&first, tci_error_explain(tci_owner_sync_slots(fh), "writing the "
                                                     "segments this aggregator holds to the "
                                                     "file"));
    tci_first_failure_note(&first, sync_handle(fh));
    tci_first_failure_note(&first, tci_error_from_mpi(tci_barrier(fh->comm)));
    tci_first_failure_note(&first, sync_handle(fh));
    tci_segio_close(&fh->io);
    /* A failure that an earlier call met (an early drain, a spill) wins
     * over one this call met itself, which has its own reason. */
    return tci_result_after(fh, failed_before, tci_first_failure_result(&first));
}

static int sync_call(tcio_file *fh)
{
    if (!fh || !tci_handle_is_open(fh))
        return tci_handle_refuse(fh, "tcio_sync");
    tci_collective_enter("tcio_sync");
    double t0 = MPI_Wtime(), waited0 = tci_collective_waited();
    int rc = tci_size_agree(fh, sync_steps(fh));
    fh->stats.time[TCI_T_SYNC] += MPI_Wtime() - t0;
    fh->stats.time[TCI_T_COLLECTIVE_WAITS] += tci_collective_waited() - waited0;
    return rc;
}

int tcio_sync(tcio_file *fh)
{
    int rc = sync_call(fh);
    tci_collective_leave();
    return tci_error_note("tcio_sync", rc);
}
