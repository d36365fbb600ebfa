/* close.c - the collective calls that end a phase of a file: tcio_flush
 * (every rank's writes visible to every rank's reads) and tcio_close
 * (every segment in the file, the file closed, the handle freed). */
#include "file.h"
#include "access.h"
#include "collective.h"
#include "error.h"
#include "handle.h"
#include "owner.h"

/* A failure that an earlier call met (an early drain, a spill) is this
 * rank's failure too. */
static int own_result(const tcio_file *fh, int rc)
{
    if (rc != TCIO_SUCCESS)
        return rc;
    return fh->failure != TCIO_SUCCESS ? tci_failed_earlier(fh) : TCIO_SUCCESS;
}

static int flush_call(tcio_file *fh)
{
    if (!fh || !tci_handle_is_open(fh))
        return tci_error_bad_handle(fh);
    tci_collective_enter("tcio_flush");
    int rc = tci_access_settle(fh);
    return tci_collective_result(fh->comm, own_result(fh, rc));
}

static int close_call(tcio_file *fh)
{
    if (!fh || !tci_handle_is_open(fh))
        return tci_error_bad_handle(fh);
    tci_handle_forget(fh);
    tci_collective_enter("tcio_close");
    double t0 = MPI_Wtime();
    int rc = tci_access_settle(fh);
    /* No rank drains before every rank's last put has completed. */
    tci_barrier(fh->comm);
    int drain_rc = tci_owner_drain_all(fh);
    if (drain_rc != TCIO_SUCCESS)
        tci_error_explain(drain_rc, "writing the segments this aggregator holds to the file");
    if (rc == TCIO_SUCCESS)
        rc = drain_rc;
    rc = own_result(fh, rc);
    const char *transport_name = fh->l2.t.ops->name;   /* static: outlives the close */
    tci_segio_close(&fh->io);
    int close_rc = tci_error_from_io(MPI_File_close(&fh->file));
    fh->file = MPI_FILE_NULL;
    if (rc == TCIO_SUCCESS)
        rc = close_rc;
    rc = tci_collective_result(fh->comm, rc);
    /* After a close that succeeded everywhere the window waits, emptied,
     * for the next file on the communicator (every rank finished its
     * accesses before the drain; the next open's first agreement orders
     * the emptying before that file's accesses).  Otherwise destroy frees
     * it, collectively: the outcome is agreed. */
    if (rc == TCIO_SUCCESS) {
        fh->window_reused = true;
        tci_handle_return_window(fh);
    }
    fh->stats.time[TCI_T_CLOSE] = MPI_Wtime() - t0;
    if (fh->config.stats)
        tci_stats_report(&fh->stats, fh->comm, fh->name, fh->aggr.count, transport_name,
                         fh->config.stats, fh->config.stats_file);
    tci_handle_destroy(fh);
    return rc;
}

int tcio_flush(tcio_file *fh)
{
    return tci_error_note("tcio_flush", flush_call(fh));
}

int tcio_close(tcio_file *fh)
{
    return tci_error_note("tcio_close", close_call(fh));
}
