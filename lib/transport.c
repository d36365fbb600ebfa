/* transport.c - choosing and opening the transport of an open file, and
 * whether its memory fits the node. */
#define _DEFAULT_SOURCE           /* MAP_ANONYMOUS, MAP_NORESERVE */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include "transport.h"
#include "tcio.h"
#include "collective.h"
#include "error.h"
#include "finalize.h"

tci_transport_plan tci_transport_plan_for(tci_transport_kind kind, int nnodes, bool shm_refused)
{
    switch (kind) {
    case TCI_TRANSPORT_SHM:
        return (tci_transport_plan){ .level2 = &tci_transport_shm };
    case TCI_TRANSPORT_RMA:
        return (tci_transport_plan){ .level2 = &tci_transport_rma };
    case TCI_TRANSPORT_AUTO:
    case TCI_TRANSPORT_MIXED:
    default:
        /* One node: every slot is reachable by address, and moves need no
         * progress from their target (doc/design.md, "Choosing the
         * transport").  On several, rma holds the segments, and the
         * node's combining tier in front of it is shm. */
        if (nnodes == 1)
            return (tci_transport_plan){ .level2 = shm_refused ? &tci_transport_rma
                                                               : &tci_transport_shm };
        return (tci_transport_plan){ .level2 = &tci_transport_rma,
                                     .tier = nnodes > 1 ? &tci_transport_shm : NULL };
    }
}

void tci_transport_waited_for_slot(tci_transport *t, int tries, double busy_since)
{
    if (tries > 0)
        t->slot_wait_seconds += MPI_Wtime() - busy_since;
}

void tci_transport_wait_progress(tci_transport *t, int polls)
{
    /* While the wait yields, every 16th poll: cheap enough, and it keeps
     * the one-sided operations of a forwarder that waits for us moving.
     * Once it sleeps (tci_back_off), every poll: a 50-us sleep lasts about
     * 150 us on a virtual machine, so a turn every 16th poll came once in
     * 2.4 ms, and each of a forward's five to seven round trips waited for
     * one (doc/design.md, "Several nodes", Progress). */
    if (t->progress_comm != MPI_COMM_NULL &&
        (polls >= TCI_BACK_OFF_YIELDS || polls % 16 == 0))
        tci_mpi_progress(t->progress_comm);
}

/* ---- turning MPI's progress engine ---------------------------------------
 *
 * MPI must progress a process that keeps calling a test procedure that
 * returns false; MPI_Iprobe that finds nothing is one, and MPICH runs its
 * whole engine on every such probe.  Open MPI's pml/ucx does not: it runs
 * opal_progress, which serves osc/ucx's worker and with it the emulated
 * atomics that other ranks' slot locks wait for, only on every 100th
 * probe (osc_ucx_progress_iterations) and turns only the point-to-point
 * worker on the others.  Under osc/ucx with 4 ranks on two "nodes" that
 * left the forwards' locks waiting for targets that never served them
 * (doc/records/nodes.md).  So under Open MPI the call is MPI_Test on a
 * generalized request that stays pending until MPI_Finalize:
 * ompi_request_default_test runs opal_progress on every call, whatever
 * the pml.  Other MPIs keep the probe, which MPICH serves as well for
 * about as little (0.05 us a call here) and which was measured there. */

#if defined(OPEN_MPI) && OPEN_MPI
enum { PROGRESS_BY_REQUEST = 1 };
#else
enum { PROGRESS_BY_REQUEST = 0 };
#endif

static MPI_Request progress_request = MPI_REQUEST_NULL;
static bool progress_request_failed;   /* then probe instead */

static int progress_query(void *extra, MPI_Status *status)
{
    (void)extra;
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int progress_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

static int progress_cancel(void *extra, int complete)
{
    (void)extra, (void)complete;
    return MPI_SUCCESS;
}

/* At MPI_Finalize: no request may be left pending, and none is made again
 * by a later finalize hook's call (it probes instead). */
static void end_progress_request(void)
{
    progress_request_failed = true;
    if (progress_request == MPI_REQUEST_NULL)
        return;
    MPI_Grequest_complete(progress_request);
    MPI_Wait(&progress_request, MPI_STATUS_IGNORE);
}

static bool start_progress_request(void)
{
    if (MPI_Grequest_start(progress_query, progress_free, progress_cancel, NULL,
                           &progress_request) != MPI_SUCCESS) {
        progress_request = MPI_REQUEST_NULL;
        return false;
    }
    if (tci_at_finalize(end_progress_request) != 0) {   /* cannot end it: do without */
        end_progress_request();
        return false;
    }
    return true;
}

void tci_mpi_progress(MPI_Comm comm)
{
    if (PROGRESS_BY_REQUEST && progress_request == MPI_REQUEST_NULL && !progress_request_failed)
        progress_request_failed = !start_progress_request();
    if (progress_request != MPI_REQUEST_NULL) {
        int done = 0;
        MPI_Test(&progress_request, &done, MPI_STATUS_IGNORE);
        return;
    }
    int found = 0;   /* nothing is sent with the tag: finds nothing */
    MPI_Iprobe(MPI_ANY_SOURCE, TCI_TAG_PROGRESS, comm, &found, MPI_STATUS_IGNORE);
}

bool tci_address_space_fits(int64_t bytes)
{
    struct rlimit as;
    if (bytes <= 0 || getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY)
        return true;
    if ((uint64_t)bytes >= (uint64_t)as.rlim_cur || (uint64_t)bytes > SIZE_MAX)
        return false;
    void *p = mmap(NULL, (size_t)bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED)
        return false;
    munmap(p, (size_t)bytes);
    return true;
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
    t->progress_comm = MPI_COMM_NULL;
    t->ops = ops;
    t->map = map;
    t->local_slots = owner ? map->nslots : 0;
    t->needs_progress = ops->needs_progress;
    MPI_Comm_rank(comm, &t->self);
    return ops->open(t, comm, map, owner);
}

int tci_transport_probe_progress(tci_transport *t, const int target[2], const int prober[2])
{
    return t->ops->probe_progress(t, target, prober);
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
    t->busy_takes = 0;           /* the new file's waits are its own */
    t->slot_wait_seconds = 0;
    t->op_wait_seconds = 0;
    t->ops->rebind(t, map);
}

int tci_transport_check_nodes(tci_transport_kind kind, int nnodes)
{
    if (kind != TCI_TRANSPORT_SHM || nnodes <= 1)
        return TCIO_SUCCESS;
    return tci_error_set(TCIO_ERR_BAD_CONFIG, "tcio_transport (TCIO_TRANSPORT) = shm: the "
                         "communicator spans %d nodes, and shm needs every rank on one "
                         "node; use auto or rma", nnodes);
}

void tci_back_off(int polls)
{
    if (polls < TCI_BACK_OFF_YIELDS) {
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
