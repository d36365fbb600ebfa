/* close.c - the collective calls that end a phase of a file: tcio_flush
 * (every rank's writes visible to every rank's reads) and tcio_close
 * (every segment in the file, the file closed, the handle freed). */
#include "file.h"
#include "access.h"
#include "collective.h"
#include "error.h"
#include "handle.h"
#include "owner.h"

static int flush_call(tcio_file *fh)
{
    if (!fh || !tci_handle_is_open(fh))
        return TCIO_ERR_BAD_HANDLE;
    tci_collective_enter("tcio_flush");
    int rc = tci_access_settle(fh);
    /* A failure that an earlier call met (an early drain, a spill) is
     * this rank's failure too. */
    return tci_collective_result(fh->comm, rc != TCIO_SUCCESS ? rc : fh->failure);
}

static int close_call(tcio_file *fh)
{
    if (!fh || !tci_handle_is_open(fh))
        return TCIO_ERR_BAD_HANDLE;
    tci_handle_forget(fh);
    tci_collective_enter("tcio_close");
    double t0 = MPI_Wtime();
    int rc = tci_access_settle(fh);
    /* No rank drains before every rank's last put has completed. */
    tci_barrier(fh->comm);
    int drain_rc = tci_owner_drain_all(fh);
    if (rc == TCIO_SUCCESS)
        rc = drain_rc;
    if (rc == TCIO_SUCCESS)
        rc = fh->failure;
    const char *transport_name = fh->l2.t.ops->name;   /* static: outlives the close */
    tci_segio_close(&fh->io);
    /* This rank's own handle: a local close, no synchronisation. */
    int close_rc = tci_error_from_io(MPI_File_close(&fh->file));
    fh->file = MPI_FILE_NULL;
    if (rc == TCIO_SUCCESS)
        rc = close_rc;
    /* MPI_MODE_DELETE_ON_CLOSE: the name goes now (the other ranks' writes
     * still reach the open file, as POSIX keeps an unlinked file until its
     * last close); a failure is this rank's, agreed below. */
    if (fh->delete_on_close && fh->rank == 0) {
        int delete_rc = tci_error_from_io(MPI_File_delete(fh->name, MPI_INFO_NULL));
        if (rc == TCIO_SUCCESS)
            rc = delete_rc;
    }
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
