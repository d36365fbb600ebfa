/* transport.c - choosing and opening the transport of an open file, and
 * whether its memory fits the node. */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include "transport.h"
#include "tcio.h"
#include "collective.h"
#include "error.h"

const tci_transport_ops *tci_transport_choose(tci_transport_kind kind, MPI_Comm comm)
{
    (void)comm;   /* auto stays rma until shm has been measured as the default */
    switch (kind) {
    case TCI_TRANSPORT_SHM:
        return &tci_transport_shm;
    case TCI_TRANSPORT_RMA:
    case TCI_TRANSPORT_AUTO:
    default:
        return &tci_transport_rma;
    }
}

const char *tci_transport_exceeds(int64_t bytes, int windows)
{
    if (windows <= 0 || bytes <= 0)
        return NULL;
    if (bytes > INT64_MAX / windows)
        return "64-bit byte counts";
    int64_t total = bytes * windows;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0 && total > (int64_t)pages / 2 * page)
        return "half of this node's physical memory";
    struct rlimit as;
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY &&
        (uint64_t)total >= (uint64_t)as.rlim_cur)
        return "the address-space limit (RLIMIT_AS, ulimit -v)";
    /* MPICH and Open MPI place a node's windows in shared memory files
     * under /dev/shm: one larger than its free space would not fail at
     * MPI_Win_allocate but kill the process (SIGBUS) when first touched. */
    struct statvfs shm;
    if (statvfs("/dev/shm", &shm) == 0 && shm.f_frsize > 0 &&
        (uint64_t)total > (uint64_t)shm.f_bavail * shm.f_frsize)
        return "the free space of /dev/shm";
    return NULL;
}

int tci_transport_open(tci_transport *t, const tci_transport_ops *ops, MPI_Comm comm,
                       const tci_segmap *map, bool owner)
{
    memset(t, 0, sizeof *t);
    t->ops = ops;
    t->map = map;
    t->local_slots = owner ? map->nslots : 0;
    MPI_Comm_rank(comm, &t->self);
    return ops->open(t, comm, map, owner);
}

void tci_transport_close(tci_transport *t)
{
    if (t->ops)
        t->ops->close(t);
    t->ops = NULL;
    t->local_slots = 0;
}

bool tci_transport_empty(tci_transport *t)
{
    if (!t->ops || !t->ops->empty || !t->ops->rebind)
        return false;
    t->ops->empty(t);
    return true;
}

void tci_transport_rebind(tci_transport *t, const tci_segmap *map)
{
    t->map = map;
    t->ops->rebind(t, map);
}

int tci_transport_check_nodes(tci_transport_kind kind, MPI_Comm comm)
{
    if (kind != TCI_TRANSPORT_SHM)
        return TCIO_SUCCESS;
    /* One leader per node; a rank whose split failed counts as a failure
     * everywhere, so that every rank returns the same. */
    MPI_Comm node = MPI_COMM_NULL;
    int counts[2] = { 0, 1 }, node_rank = 0;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
            MPI_SUCCESS && MPI_Comm_rank(node, &node_rank) == MPI_SUCCESS)
        counts[0] = node_rank == 0, counts[1] = 0;
    if (node != MPI_COMM_NULL)
        MPI_Comm_free(&node);
    int total[2] = { 0, 0 };
    int err = tci_allreduce(counts, total, 2, MPI_INT, MPI_SUM, comm);
    if (err != MPI_SUCCESS)
        return tci_error_from_mpi(err);
    if (total[1] > 0)
        return tci_error_set(TCIO_ERR_MPI, "tcio_open_comm: MPI_Comm_split_type failed on "
                             "%d rank(s) while checking the nodes for tcio_transport=shm",
                             total[1]);
    if (total[0] > 1)
        return tci_error_set(TCIO_ERR_BAD_CONFIG, "tcio_transport (TCIO_TRANSPORT) = shm: the "
                             "communicator spans %d nodes, and shm needs every rank on one "
                             "node; use auto or rma", total[0]);
    return TCIO_SUCCESS;
}

void tci_back_off(int polls)
{
    if (polls < 1024) {
        sched_yield();
        return;
    }
    struct timespec pause = { 0, 50000 };
    nanosleep(&pause, NULL);
}

bool tci_window_is_unified(MPI_Win win)
{
    int *model = NULL, flag = 0;
    return MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag) == MPI_SUCCESS && flag &&
           *model == MPI_WIN_UNIFIED;
}
