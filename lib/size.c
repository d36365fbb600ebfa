/* size.c - the end of the file: tcio_get_size, the agreement on the end
 * that tcio_flush and tcio_sync make, and tcio_set_size.
 *
 * Each rank knows the end of the file as far as it can without
 * communication: the size the ranks last agreed on and its own writes
 * since.  A rank cannot learn another's writes without a collective step,
 * so the collective calls that make every rank's writes visible
 * (tcio_flush, tcio_sync) agree on the end in the same allreduce as on
 * their outcome; tcio_get_size is then local, as MPI_File_get_size is,
 * and a program that asks on one rank only (HDF5 asks on rank 0 before
 * a collective MPI_File_set_size) gets every rank's writes after a sync.
 *
 * tcio_set_size drops what lies at or past the new end everywhere it may
 * still be: level 1 is moved into level 2 first, each aggregator then cuts
 * its slots (owner.c) and rank 0 truncates the file, between two
 * agreements, so that no rank moves or writes anything meanwhile and no
 * byte past the end can come back from a later write-back. */
#include <stdbool.h>
#include "file.h"
#include "access.h"
#include "collective.h"
#include "error.h"
#include "handle.h"
#include "owner.h"
#include "size.h"

static MPI_Offset larger(MPI_Offset a, MPI_Offset b)
{
    return a > b ? a : b;
}

MPI_Offset tci_size_rank_end(const tcio_file *fh)
{
    MPI_Offset end = larger(fh->size_agreed ? fh->agreed_size : fh->size_at_open,
                            fh->written_end);
    if (fh->l1.mode == TCI_L1_WRITING)
        end = larger(end, tci_level1_marked_end(&fh->l1));
    return end;
}

/* The end as every rank knows it from now on.  A rank's later writes
 * past it move its own end on (written_end). */
static void set_agreed(tcio_file *fh, MPI_Offset size)
{
    fh->agreed_size = size;
    fh->size_agreed = true;
}

int tci_size_agree(tcio_file *fh, int local)
{
    int64_t end = tci_size_rank_end(fh);
    int rc = tci_collective_result_max(fh->comm, local, &end);
    /* If the allreduce itself failed END is this rank's own end, which
     * tci_size_rank_end returned anyway: nothing is claimed that this
     * rank did not know. */
    set_agreed(fh, end);
    return rc;
}

/* ---- tcio_get_size ------------------------------------------------------------ */

static int get_size_call(tcio_file *fh, MPI_Offset *size)
{
    if (!fh || !tci_handle_is_open(fh))
        return tci_handle_refuse(fh, "tcio_get_size");
    if (!size)
        return tci_error_set(TCIO_ERR_BAD_ARG, "the pointer for the size is NULL");
    *size = tci_size_rank_end(fh);
    return TCIO_SUCCESS;
}

int tcio_get_size(tcio_file *fh, MPI_Offset *size)
{
    return tci_error_note("tcio_get_size", get_size_call(fh, size));
}

/* ---- tcio_set_size ------------------------------------------------------------ */

/* This rank's own arguments: a handle that may write and has not failed,
 * a size the file may have. */
static int check_size(const tcio_file *fh, MPI_Offset size)
{
    if (fh->failure != TCIO_SUCCESS)
        return tci_failed_earlier(fh);
    if (!fh->can_write)
        return tci_error_set(TCIO_ERR_READ_ONLY, "the file was opened MPI_MODE_RDONLY");
    if (size < 0)
        return tci_error_set(TCIO_ERR_BAD_ARG, "size %lld is negative", (long long)size);
    if (size > fh->max_end)
        return tci_error_set(TCIO_ERR_BAD_ARG, "size %lld is past the largest addressable "
                             "offset %lld", (long long)size, (long long)fh->max_end);
    return TCIO_SUCCESS;
}

/* Collective, before anything moves, so that a refused call changes
 * nothing on any rank: every rank's arguments are good and SIZE is the
 * same everywhere (one allreduce of the outcome, the largest size and the
 * negated smallest).  A rank whose own arguments are bad returns its own
 * error; where only the sizes differ every rank returns TCIO_ERR_BAD_ARG
 * (each rank's size is as wrong as the others'); else TCIO_ERR_REMOTE
 * where only another rank's arguments were bad. */
static int agree_on_size(tcio_file *fh, MPI_Offset size)
{
    int local = check_size(fh, size);
    int64_t negated = size == INT64_MIN ? INT64_MAX : -(int64_t)size;
    int64_t in[3] = { local, size, negated }, out[3];
    int err = tci_allreduce(in, out, 3, MPI_INT64_T, MPI_MAX, fh->comm);
    if (err != MPI_SUCCESS)
        return local != TCIO_SUCCESS
                   ? local
                   : tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Iallreduce (the agreement on the "
                                                     "size)", err);
    if (out[0] != TCIO_SUCCESS)        /* collective: every rank knows */
        tci_error_share_remote(fh->comm, local);
    if (local != TCIO_SUCCESS)
        return local;
    if (out[1] != -out[2])
        return tci_error_set(TCIO_ERR_BAD_ARG, "size %lld differs from other ranks' (they "
                             "passed %lld to %lld): every rank must pass the same size",
                             (long long)size, (long long)-out[2], (long long)out[1]);
    return out[0] != TCIO_SUCCESS ? TCIO_ERR_REMOTE : TCIO_SUCCESS;
}

/* Rank 0 truncates or extends the file, through its own handle (every
 * rank has one, on MPI_COMM_SELF: MPI_File_set_size is collective over
 * that communicator only).  The other ranks' handles keep no size of
 * their own: their reads past the new end find nothing, as the sieve's
 * reads must (segio.c).  A failure sticks to the handle: the slots are
 * cut already, and the file may keep bytes past the end that nothing will
 * remove, so the close must fail too. */
static int resize_file(tcio_file *fh, MPI_Offset size)
{
    if (fh->rank != 0)
        return TCIO_SUCCESS;
    return tci_note_failure(fh, tci_error_from_io(MPI_File_set_size(fh->file, size)));
}

/* The size changes, with every rank's arguments agreed. */
static int resize(tcio_file *fh, MPI_Offset size)
{
    /* Every rank's level 1 into level 2.  The agreement is also the
     * barrier after which no rank moves into another's slots or writes
     * the file until the final one; if a move failed anywhere nothing is
     * cut (the failure sticks to the rank that met it).  Only the file's
     * level 2 is cut below: the settle emptied the node's tier (a
     * read-only file's keeps its loads, but check_size refused it). */
    int rc = tci_collective_result(fh->comm, tci_combiner_settle(fh, tci_access_settle(fh)));
    if (rc != TCIO_SUCCESS)
        return rc;
    /* Both with no move or write-back in flight anywhere: the slots
     * forget every byte at or past SIZE, the file loses the bytes that
     * drains and spills wrote there. */
    tci_first_failure first = { 0 };
    tci_first_failure_note(&first, tci_owner_cut_slots(fh, size));
    tci_first_failure_note(&first, resize_file(fh, size));
    rc = tci_first_failure_result(&first);
    /* Every rank's writes past SIZE are gone: the end is SIZE now. */
    set_agreed(fh, size);
    if (fh->written_end > size)
        fh->written_end = size;
    /* The sieve's own read handle is opened again when next needed, so
     * that it cannot have kept anything of the old size (segio.c). */
    tci_segio_close(&fh->io);
    return tci_collective_result(fh->comm, rc);
}

static int set_size_call(tcio_file *fh, MPI_Offset size)
{
    if (!fh || !tci_handle_is_open(fh))
        return tci_handle_refuse(fh, "tcio_set_size");
    tci_collective_enter("tcio_set_size");
    double t0 = MPI_Wtime(), waited0 = tci_collective_waited();
    int rc = agree_on_size(fh, size);
    if (rc == TCIO_SUCCESS)
        rc = resize(fh, size);
    fh->stats.time[TCI_T_SET_SIZE] += MPI_Wtime() - t0;
    fh->stats.time[TCI_T_COLLECTIVE_WAITS] += tci_collective_waited() - waited0;
    return rc;
}

int tcio_set_size(tcio_file *fh, MPI_Offset size)
{
    int rc = set_size_call(fh, size);
    tci_collective_leave();
    return tci_error_note("tcio_set_size", rc);
}
