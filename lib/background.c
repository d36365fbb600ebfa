/* background.c - the close in the background, between the close protocol
 * (close.c) and the drain thread (drainer.c).
 *
 * tcio_close_begin, after its barrier, owns this rank's slots: no other
 * rank accesses them any more (doc/design.md, "Background close").  Their
 * dirty segments are listed by address (owner.c); those that fit this
 * rank's share of tcio_background_memory go to the drain thread with a
 * POSIX descriptor of the file, the others are written at once with MPI-IO
 * as tcio_close writes them.  Each aggregator still writes exactly its own
 * segments, so the stripe ownership of the aggregators is kept. */
#define _POSIX_C_SOURCE 200809L   /* sysconf */
#include <stdlib.h>
#include <unistd.h>
#include "background.h"
#include "drainer.h"
#include "error.h"
#include "owner.h"
#include "romio_prefix.h"

int64_t tci_background_memory(const tcio_file *fh)
{
    if (fh->config.background_memory >= 0)
        return fh->config.background_memory;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (int64_t)pages / 8 * page : 0;
}

/* This rank's share of the node's tcio_background_memory: the node's
 * aggregators of this file hold level 2, so they split it. */
static int64_t rank_share(const tcio_file *fh)
{
    const tci_aggregators *a = &fh->aggr;
    int here = 0;
    for (int i = 0; i < a->count; i++)
        here += !a->node_of || a->node_of[a->ranks[i]] == a->node_of[fh->rank];
    return tci_background_memory(fh) / (here > 0 ? here : 1);
}

/* How many of NDIRTY segments may wait for the drain thread: as many as
 * fit the share left by this rank's earlier files not yet written. */
static int background_count(const tcio_file *fh, int ndirty)
{
    int64_t room = rank_share(fh) - tci_drainer_pending_bytes();
    int64_t fit = room > 0 ? room / fh->map.segment_size : 0;
    return fit < ndirty ? (int)fit : ndirty;
}

/* Whether the drain thread may write this file: not one that MPI deletes
 * at close (MPI_MODE_DELETE_ON_CLOSE), and one whose name tcio_open tied
 * to a device and inode (segio.c), so that the thread's descriptor
 * reaches the same file. */
static bool thread_may_write(tcio_file *fh)
{
    /* Not the handle's amode: each rank's own handle leaves the deletion
     * to rank 0 at close (open.c), so it does not carry the flag. */
    return fh->io.identified && fh->name && !fh->delete_on_close;
}

/* Hand SLOTS (N of them) to the drain thread; returns whether it took
 * them. */
static bool hand_over(tcio_file *fh, const tci_drain_slot *slots, int n)
{
    struct stat st;
    const char *path = tci_file_system_name(fh->name, &st, true);
    if (!path)
        return false;       /* written now instead */
    tci_file_identity id = { .name = path, .device = fh->io.device, .inode = fh->io.inode };
    char why[TCIO_MAX_ERROR_STRING];
    bool readable = false;
    int fd = tci_drainer_open(&id, &readable, why, (int)sizeof why);
    if (fd < 0)
        return false;       /* written now instead: slower, no failure */
    if (tci_drainer_submit(&id, fd, readable, (int)fh->map.segment_size, slots, n,
                           &fh->closing.job) != TCIO_SUCCESS) {
        close(fd);
        return false;
    }
    fh->stats.count[TCI_C_BACKGROUND_DRAINS] += n;
    return true;
}

int tci_background_drain(tcio_file *fh, bool background)
{
    int64_t nslots = fh->l2.t.local_slots;
    if (!background || nslots == 0 || !fh->can_write || !thread_may_write(fh))
        return tci_owner_drain_all(fh);
    tci_drain_slot *dirty = malloc((size_t)nslots * sizeof *dirty);
    if (!dirty)
        return tci_owner_drain_all(fh);
    int ndirty = 0;
    tci_first_failure first = { 0 };
    tci_first_failure_note(&first, tci_owner_dirty_slots(fh, dirty, &ndirty));
    /* The first slots are written now when the share is short; the
     * thread starts on the others before. */
    int nthread = background_count(fh, ndirty);
    if (nthread > 0 && !hand_over(fh, dirty + (ndirty - nthread), nthread))
        nthread = 0;
    tci_first_failure_note(&first, tci_owner_drain_slots(fh, dirty, ndirty - nthread));
    free(dirty);
    return tci_first_failure_result(&first);
}

int tci_background_finish(tcio_file *fh)
{
    if (!fh->closing.job)
        return TCIO_SUCCESS;
    tci_drain_result r;
    tci_drainer_finish(fh->closing.job, &r);
    fh->closing.job = NULL;
    fh->stats.count[TCI_C_SIEVED] += r.sieved;
    fh->stats.time[TCI_T_BACKGROUND] += r.seconds;
    if (r.rc != TCIO_SUCCESS)
        tci_error_set(r.rc, "%s", r.message[0] ? r.message : "the background drain failed");
    return r.rc;
}

void tci_background_wait_for_file(const char *name)
{
    tci_drainer_wait_for_file(name);
}
