/* comms.c - the communicators the interposer opens libtcio files on: one
 * kept per group of ranks, reused by every later file on a congruent
 * communicator.
 *
 * libtcio keeps its private duplicate and level-2 window on the
 * communicator a file is opened on (lib/comm_cache.c), so that the next
 * file opened on it pays neither MPI_Comm_dup nor MPI_Win_allocate.
 * Programs through MPI-IO rarely open two files on one communicator:
 * HDF5's MPI-IO driver and PnetCDF duplicate the program's communicator
 * at every file open and free the duplicate at its close, which would make
 * every open create a window (80-170 ms at 4 ranks here).  So the
 * interposer opens libtcio files on a communicator of its own, one per
 * group, kept until MPI_Finalize: the second file of the same ranks finds
 * libtcio's cache on it.
 *
 * Which kept communicator a file uses must be the same on every rank, or
 * the collectives on it would not match.  Each kept communicator carries
 * an identity agreed when it was made (rank 0's world rank and count of
 * communicators it has made); at an open every rank proposes the identity
 * of the kept communicator congruent with the program's that no open file
 * uses, and the open's agreement (served.c) takes it only if every rank
 * proposed the same.  One open file at a time per kept communicator: the
 * interposer's own collectives of two files open at once must not meet on
 * one communicator.  Files that cannot have one (a second file open on the
 * same ranks, more groups than are kept, ranks that disagree) are opened
 * on the program's communicator as before, where libtcio's cache helps as
 * long as the program keeps that communicator. */
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include "tmi.h"

/* ---- the interposer's own collectives ----
 * MPICH's blocking collectives spin until their time slice ends when
 * ranks outnumber cores: each step of one costs a scheduler tick (4 ms
 * here; an MPI_Allreduce of 4 ranks on 2 cores took 4 ms, an MPI_Barrier
 * 12).  The interposer's agreements at open therefore start the
 * nonblocking form and yield the processor between tests, as libtcio's
 * own agreements do (lib/collective.c). */
int tmi_wait_yielding(MPI_Request *req)
{
    for (;;) {
        int done = 0;
        int err = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS) {
            /* The request may still be pending (and write its results
             * later): finish it before the caller's buffers go. */
            MPI_Wait(req, MPI_STATUS_IGNORE);
            return err;
        }
        if (done)
            return MPI_SUCCESS;
        sched_yield();
    }
}

int tmi_allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    MPI_Request req;
    int err = MPI_Iallreduce(in, out, count, type, op, comm, &req);
    return err != MPI_SUCCESS ? err : tmi_wait_yielding(&req);
}

int tmi_comm_dup(MPI_Comm comm, MPI_Comm *dup)
{
    MPI_Request req;
    int err = MPI_Comm_idup(comm, dup, &req);
    if (err == MPI_SUCCESS)
        err = tmi_wait_yielding(&req);
    if (err != MPI_SUCCESS)
        *dup = MPI_COMM_NULL;
    return err;
}

/* Distinct groups kept: each holds libtcio's window for one file (its
 * level 2) until MPI_Finalize. */
enum { TMI_MAX_KEPT = 4 };

static struct kept {
    MPI_Comm  comm;
    long long id;
    int       in_use;         /* by an open file */
} kept[TMI_MAX_KEPT];
static int nkept;
static long long made;        /* communicators this rank made as a rank 0 */

static int congruent(MPI_Comm a, MPI_Comm b)
{
    int cmp;
    return MPI_Comm_compare(a, b, &cmp) == MPI_SUCCESS &&
           (cmp == MPI_IDENT || cmp == MPI_CONGRUENT);
}

long long tmi_comm_proposal(MPI_Comm comm)
{
    for (int i = 0; i < nkept; i++)
        if (congruent(kept[i].comm, comm))
            return kept[i].in_use ? -2 : kept[i].id;
    return -1;
}

/* Identities are unique within one MPI_COMM_WORLD; processes joined from
 * several (MPI_Comm_spawn) could repeat one, so the group is checked too. */
MPI_Comm tmi_comm_take(long long id, MPI_Comm comm)
{
    for (int i = 0; i < nkept; i++)
        if (kept[i].id == id && congruent(kept[i].comm, comm)) {
            kept[i].in_use = 1;
            return kept[i].comm;
        }
    return MPI_COMM_NULL;
}

void tmi_comm_give_back(MPI_Comm comm)
{
    for (int i = 0; i < nkept; i++)
        if (kept[i].comm == comm)
            kept[i].in_use = 0;
}

long long tmi_comm_new_id(MPI_Comm comm)
{
    int rank, world;
    MPI_Comm_rank(comm, &rank);
    if (rank != 0)
        return -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    return ((long long)world << 32) | ++made;
}

int tmi_comm_can_keep(void)
{
    return nkept < TMI_MAX_KEPT;
}

void tmi_comm_keep(MPI_Comm comm, long long id)
{
    kept[nkept++] = (struct kept){ .comm = comm, .id = id, .in_use = 1 };
}

/* ---- whether a program's communicator orders a file's ranks ----
 * A program's barrier asks it of every served writable file (served.c).
 * MPI_Comm_compare makes both groups and compares them rank by rank: at
 * every barrier, per file, a cost linear in the ranks.  So the answer is
 * remembered per pair of communicators, each known by a serial number in
 * an attribute rather than by its handle: a freed communicator's handle
 * comes back for the next one made (both MPIs here), its serial never
 * does, and a duplicate gets a serial of its own (MPI_COMM_NULL_COPY_FN).
 * Used only while files are served, so never under MPI_THREAD_MULTIPLE
 * (served.c). */
enum { ORDERS_REMEMBERED = 64 };

static struct {
    long long barrier, file;     /* serials; 0: an empty row */
    int       orders;
} orders_seen[ORDERS_REMEMBERED];
static int serial_key = MPI_KEYVAL_INVALID;
static long long serials_given;

/* COMM's serial, given at its first question; 0 if it cannot have one. */
static long long serial_of(MPI_Comm comm)
{
    if (serial_key == MPI_KEYVAL_INVALID &&
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &serial_key,
                               NULL) != MPI_SUCCESS) {
        serial_key = MPI_KEYVAL_INVALID;
        return 0;
    }
    void *value;
    int found = 0;
    if (MPI_Comm_get_attr(comm, serial_key, &value, &found) == MPI_SUCCESS && found)
        return (long long)(intptr_t)value;
    long long serial = serials_given + 1;
    if (MPI_Comm_set_attr(comm, serial_key, (void *)(intptr_t)serial) != MPI_SUCCESS)
        return 0;
    return serials_given = serial;
}

int tmi_comm_orders(MPI_Comm comm, MPI_Comm file_comm)
{
    long long a = serial_of(comm), b = serial_of(file_comm);
    size_t row = (size_t)((unsigned long long)(a * 31 + b) % ORDERS_REMEMBERED);
    if (a && b && orders_seen[row].barrier == a && orders_seen[row].file == b)
        return orders_seen[row].orders;
    int result = MPI_UNEQUAL;
    if (MPI_Comm_compare(comm, file_comm, &result) != MPI_SUCCESS)
        return 0;
    int orders = result == MPI_IDENT || result == MPI_CONGRUENT;
    if (a && b) {
        orders_seen[row].barrier = a;
        orders_seen[row].file = b;
        orders_seen[row].orders = orders;
    }
    return orders;
}
