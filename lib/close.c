/* close.c - the collective calls that end a phase of a file: tcio_flush
 * (every rank's writes visible to every rank's reads) and the close:
 * tcio_close, or tcio_close_begin (every rank's data in level 2, the own
 * slots handed to the drain thread, the handle closing) and tcio_close_end
 * (every segment in the file, the outcome agreed, the handle freed). */
#include <stdio.h>
#include "file.h"
#include "access.h"
#include "background.h"
#include "errhandler.h"
#include "collective.h"
#include "drainer.h"
#include "error.h"
#include "finalize.h"
#include "handle.h"
#include "owner.h"
#include "size.h"

/* Every rank's writes to level 2 and the end of the file agreed; a
 * failure that stuck to FH before the flush is what it returns. */
static int flush_call(tcio_file *fh)
{
    if (!fh || !tci_handle_is_open(fh))
        return tci_error_bad_handle(fh);
    tci_collective_enter("tcio_flush");
    double waited0 = tci_collective_waited();
    bool failed_before = fh->failure != TCIO_SUCCESS;
    int rc = tci_combiner_settle(fh, tci_access_settle(fh));
    /* The ranks agree on the end of the file in the same step: after a
     * flush every rank's reads see every write, so its end too. */
    rc = tci_size_agree(fh, tci_result_after(fh, failed_before, rc));
    fh->stats.time[TCI_T_COLLECTIVE_WAITS] += tci_collective_waited() - waited0;
    return rc;
}

/* ---- the two halves of a close --------------------------------------------- */

static void end_unended_closes(void);

/* MPI_Finalize ends the closes that tcio_close_end never ended: registered
 * at the first tcio_close_begin, by every rank of its communicator.
 * Returns whether it is arranged: without it a close never ended would
 * leave the thread writing while the process exits, so the close is then
 * written in the begin instead. */
static bool arrange_finalize(void)
{
    static bool arranged;
    if (!arranged)
        arranged = tci_at_finalize(end_unended_closes) == 0;
    return arranged;
}

/* Every rank's data to level 2, the barrier after which no rank accesses
 * another's slots, this rank's dirty slots to the file (now, or with
 * BACKGROUND handed to the drain thread), the file closed.  The outcome
 * and its reason wait in FH->closing for the end. */
static void begin_close(tcio_file *fh, bool background)
{
    tci_handle_forget(fh);
    double t0 = MPI_Wtime(), waited0 = tci_collective_waited();
    fh->closing.failed_before = fh->failure != TCIO_SUCCESS;
    /* The first failure is reported, with its own reason. */
    tci_first_failure first = { 0 };
    tci_first_failure_note(&first, tci_combiner_settle(fh, tci_access_settle(fh)));
    /* No rank drains before every rank's last put has completed. */
    tci_barrier(fh->comm);
    tci_first_failure_note(&first, tci_error_explain(tci_background_drain(fh, background),
                                                     "writing the segments this aggregator "
                                                     "holds to the file"));
    /* The drain thread writes through a descriptor of its own: this
     * rank's MPI handle is closed now (a local close, no
     * synchronisation: every rank has its own handle). */
    tci_segio_close(&fh->io);
    int close_err = MPI_File_close(&fh->file);
    fh->file = MPI_FILE_NULL;
    tci_first_failure_note(&first, tci_error_from_io_at(close_err, "MPI_File_close(file)",
                                                        __func__));
    /* MPI_MODE_DELETE_ON_CLOSE (the same on every rank): the name goes
     * once every rank has closed its handle.  A file system whose clients
     * keep an unlinked file only for the client that unlinked it (NFS)
     * would otherwise fail the other ranks' last writes.  A failure is
     * rank 0's, agreed at the end.  (The thread is not used for such a
     * file: every rank wrote its slots above.) */
    if (fh->delete_on_close)
        tci_barrier(fh->comm);
    if (fh->delete_on_close && fh->rank == 0) {
        int delete_err = tci_file_delete(fh->name);
        tci_first_failure_note(&first, tci_error_from_io_at(delete_err, "MPI_File_delete(name)",
                                                            __func__));
    }
    int rc = tci_first_failure_result(&first);
    fh->closing.rc = rc;
    fh->closing.reason_code = tci_error_save(rc, fh->closing.reason, sizeof fh->closing.reason);
    fh->stats.time[TCI_T_CLOSE] += MPI_Wtime() - t0;
    fh->stats.time[TCI_T_COLLECTIVE_WAITS] += tci_collective_waited() - waited0;
    tci_handle_remember_closing(fh);
}

/* The waits for other ranks that the transports counted (transport.h):
 * the file's level 2's and its node's combining tier's, into the
 * statistics, before the window goes back to the cache.  The moves and
 * drains count their busy takes as they go; what is left is the takes
 * that nothing counted since (tcio_set_size's cut of the owner's slots,
 * owner.c, when no move followed). */
static void collect_transport_waits(tcio_file *fh)
{
    fh->stats.count[TCI_C_BUSY_TAKES] += fh->l2.t.busy_takes + fh->node.t.busy_takes;
    fh->l2.t.busy_takes = fh->node.t.busy_takes = 0;
    fh->stats.time[TCI_T_SLOT_WAITS] += fh->l2.t.slot_wait_seconds +
                                        fh->node.t.slot_wait_seconds;
    fh->stats.time[TCI_T_ONE_SIDED_WAITS] += fh->l2.t.op_wait_seconds +
                                             fh->node.t.op_wait_seconds;
}

/* Wait for the drain thread's part, agree on the outcome, keep or free
 * the window, report the statistics, free the handle. */
static int end_close(tcio_file *fh)
{
    tci_handle_forget_closing(fh);
    double t0 = MPI_Wtime(), waited0 = tci_collective_waited();
    int rc = fh->closing.rc;
    int drain_rc = tci_background_finish(fh);
    /* The begin's failure comes first, with its reason. */
    if (rc != TCIO_SUCCESS && fh->closing.reason_code == rc)
        tci_error_restore(rc, fh->closing.reason);
    if (rc == TCIO_SUCCESS)
        rc = drain_rc;
    /* A failure that an earlier call met (an early drain, a spill) wins;
     * one the close's steps noted without returning it comes last. */
    rc = tci_result_after(fh, fh->closing.failed_before, rc);
    const char *transport_name = tci_handle_transport_name(fh);   /* static: outlives
                                                                      the close */
    /* With the outcome, whether any rank keeps too many communicators'
     * duplicates (comm_cache.h): then this one is let go with its window
     * on every rank alike. */
    int64_t over_limit = tci_comm_over_limit(fh->comm_entry);
    rc = tci_collective_result_max(fh->comm, rc, &over_limit);
    fh->stats.time[TCI_T_COLLECTIVE_WAITS] += tci_collective_waited() - waited0;
    collect_transport_waits(fh);
    /* After a close that succeeded everywhere the window waits, emptied,
     * for the next file on the communicator (every rank finished its
     * accesses before the drain; the next open's first agreement orders
     * the emptying before that file's accesses).  Otherwise destroy frees
     * it, and the node's tier, collectively: the outcome is agreed (a
     * window this file took over must not go back to the cache with what
     * a failed drain or forward left in its slots). */
    fh->window_reused = rc == TCIO_SUCCESS && !over_limit;
    tci_handle_return_window(fh);
    if (rc == TCIO_SUCCESS && over_limit)
        tci_comm_let_go(fh->comm_entry);
    /* A failed close may leave staged forwards or their acknowledgements
     * on their way on the file's communicator (a settle that failed before
     * it received them all): the next file on it must not receive them
     * as its own (tci_comm_retire; the outcome, the access mode and the
     * settings are the same on every rank; nobody forwards into a
     * read-only file). */
    fh->retire_comm = rc != TCIO_SUCCESS && fh->can_write &&
                      fh->config.forward_staging > 0 && fh->aggr.nnodes > 1;
    fh->stats.time[TCI_T_CLOSE] += MPI_Wtime() - t0;
    if (fh->config.stats)
        tci_stats_report(&fh->stats, fh->comm, fh->name, fh->aggr.count, transport_name,
                         fh->config.stats, fh->config.stats_file);
    tci_handle_destroy(fh);
    return rc;
}

/* At MPI_Finalize: every close begun and never ended, oldest first (the
 * same order on every rank: the begins were collective), then the drain
 * thread.  A failure cannot be returned any more: it is written to
 * standard error rather than lost. */
static void end_unended_closes(void)
{
    tcio_file *fh;
    while ((fh = tci_handle_oldest_closing()) != NULL) {
        char *name = fh->name ? fh->name : "?";
        char shown[256];
        snprintf(shown, sizeof shown, "%s", name);
        tci_collective_enter("MPI_Finalize (tcio_close_end never called)");
        int rc = end_close(fh);
        tci_collective_leave();
        if (rc != TCIO_SUCCESS && rc != TCIO_ERR_REMOTE) {
            char why[TCIO_MAX_ERROR_STRING];
            tci_error_note_failure("tcio_close_end", rc);
            tcio_last_error(why, (int)sizeof why);
            fprintf(stderr, "libtcio: MPI_Finalize ended the close of \"%s\", which "
                    "tcio_close_end never ended, and it failed: %s\n", shown, why);
            fflush(stderr);
        }
    }
    tci_drainer_stop();
}

/* ---- the public calls --------------------------------------------------------- */

static int close_call(tcio_file *fh)
{
    if (!fh || !tci_handle_is_open(fh))
        return tci_handle_refuse(fh, "tcio_close");
    tci_collective_enter("tcio_close");
    begin_close(fh, false);
    return end_close(fh);
}

static int close_begin_call(tcio_file *fh)
{
    if (!fh || !tci_handle_is_open(fh))
        return tci_handle_refuse(fh, "tcio_close_begin");
    tci_collective_enter("tcio_close_begin");
    begin_close(fh, arrange_finalize());
    return TCIO_SUCCESS;
}

static int close_end_call(tcio_file *fh)
{
    if (!fh || !tci_handle_is_closing(fh)) {
        if (fh && tci_handle_is_open(fh))
            return tci_error_set(TCIO_ERR_BAD_HANDLE, "tcio_close_end: the handle is open: "
                                 "tcio_close_begin must come first");
        return tci_error_bad_handle(fh);
    }
    tci_collective_enter("tcio_close_end");
    return end_close(fh);
}

int tcio_flush(tcio_file *fh)
{
    int rc = fh && !tci_handle_is_open(fh) ? tci_handle_refuse(fh, "tcio_flush") : flush_call(fh);
    tci_collective_leave();
    return tci_error_note("tcio_flush", rc);
}

int tcio_close(tcio_file *fh)
{
    int rc = close_call(fh);
    tci_collective_leave();
    return tci_error_note("tcio_close", rc);
}

int tcio_close_begin(tcio_file *fh)
{
    int rc = close_begin_call(fh);
    tci_collective_leave();
    return tci_error_note("tcio_close_begin", rc);
}

int tcio_close_end(tcio_file *fh)
{
    int rc = close_end_call(fh);
    tci_collective_leave();
    return tci_error_note("tcio_close_end", rc);
}
