/* collectives.c - the MPI library's own blocking collectives, made inside
 * the MPI-IO calls the interposer forwards, wait yielding the processor.
 *
 * Every served open is also a real open (the program keeps a real
 * handle), and ROMIO's open makes a dozen collectives on the program's
 * communicator and its duplicate: MPI_Comm_dup, MPI_Allreduce,
 * MPI_Gather, MPI_Bcast; its close an MPI_Barrier.  MPICH's blocking
 * collectives spin until their time slice ends when ranks outnumber
 * cores, so each that finds a rank not yet arrived cost 7-16 ms at 4
 * ranks on 2 cores, and a real open 40-80 ms: as long as all of
 * libtcio's open, and 10-15% of tcio_bench -m 2's write at LEN 1M.  So
 * these PMPI_ names start the nonblocking form and wait yielding, as the
 * interposer's and libtcio's own agreements do (comms.c,
 * lib/collective.c), when the guard (tmi_depth) is raised, inside a
 * forwarded MPI-IO call, and the communicator is one of
 *   - the MPI library's private communicators: ROMIO's duplicate of the
 *     open's communicator, marked with an attribute (below);
 *   - the communicator of the real open in progress on this thread
 *     (tmi_opening, served.c), until the MPI library's first duplicate
 *     of it: ROMIO's first collectives, before it duplicates.
 * The same open then took 3-10 ms.
 *
 * Why this is safe: a blocking and a nonblocking collective never match
 * each other (MPI-3.1 5.12), so every rank must take the same form for
 * each collective.  The program never holds a private communicator: the
 * only one marked is the duplicate ROMIO makes of the open's
 * communicator and keeps to itself, so every collective on one is the
 * MPI library's, made inside an MPI_File_* call that is collective and
 * passes through the interposer on every rank (a program must load it on
 * all ranks or none: doc/mpiio.md).  In the stretch of an open before the
 * duplicate, no program code runs on only some ranks of a correct
 * program: MPI requires the same communicator, file name and mode on
 * every rank, ROMIO agrees on the info with an allreduce first, so an
 * error there is every rank's, and attribute copy callbacks run inside
 * the duplicate on every rank.  Everywhere else the call is the MPI
 * library's blocking one, unchanged (a barrier after the flush of the
 * served files it orders: tmi_Barrier, served.c): the program's own
 * collectives and
 * any that program code makes inside a forwarded call (a file error
 * handler run on one rank, Fortran bindings calling PMPI_ names) take the
 * form the other ranks take outside it.
 * Who calls is not looked at: a handler's last call, made a jump by the
 * compiler, returns into the MPI library.  Open MPI's default MPI-IO
 * (ompio) makes its collectives inside the library, where nothing
 * catches them; its romio321 component is caught like MPICH's ROMIO.
 *
 * Not in the --wrap form (TMI_WRAP): a statically linked MPI library
 * defines these names itself. */
#define _GNU_SOURCE
#include <pthread.h>
#include "tmi.h"

/* ---- the MPI library's private communicators ----
 * ROMIO's duplicate of the open's communicator: the PMPI_Comm_dup of
 * tmi_opening made with the guard raised (and of MPI_COMM_SELF at
 * libtcio's own opens).  Marked with an attribute of the interposer's,
 * which MPI deletes with the communicator, whichever path frees it, and
 * does not copy to its duplicates: a mark neither outlives its
 * communicator nor runs out, and only that one duplicate is marked, not
 * one that program code (an error handler) makes inside a forwarded
 * call.  A duplicate marked during a real open that then fails loses
 * its mark (served.c's real_open): it was not ROMIO's, which a failed
 * open frees. */
static int private_key = MPI_KEYVAL_INVALID;
static pthread_once_t private_key_once = PTHREAD_ONCE_INIT;

/* The attribute's delete callback: a freed duplicate is no longer the
 * open's. */
static int private_freed(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)key;
    (void)value;
    (void)extra;
    if (comm == tmi_open_dup)
        tmi_open_dup = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

static void make_private_key(void)
{
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, private_freed, &private_key, NULL) !=
        MPI_SUCCESS)
        private_key = MPI_KEYVAL_INVALID;   /* nothing is marked: all blocking */
}

static int is_private(MPI_Comm comm)
{
    void *value;
    int flag = 0;
    if (comm == MPI_COMM_NULL || private_key == MPI_KEYVAL_INVALID)
        return 0;
    return MPI_Comm_get_attr(comm, private_key, &value, &flag) == MPI_SUCCESS && flag;
}

static void mark_private(MPI_Comm comm)
{
    pthread_once(&private_key_once, make_private_key);
    if (private_key != MPI_KEYVAL_INVALID &&
        MPI_Comm_set_attr(comm, private_key, (void *)1) == MPI_SUCCESS)
        tmi_open_dup = comm;
}

void tmi_unmark_private(MPI_Comm comm)
{
    if (is_private(comm))
        MPI_Comm_delete_attr(comm, private_key);
}

/* ---- the start of a real open ----
 * Before ROMIO duplicates the program's communicator, its open makes its
 * first collectives on that communicator itself.  In that stretch no
 * program code can run on only some ranks of a correct program (an
 * error there is a local check of arguments that MPI requires to be the
 * same on every rank), so collectives on the open's communicator may
 * yield until its first duplicate is made (served.c sets the
 * communicator around every real open). */
static int is_opening(MPI_Comm comm)
{
    return comm == tmi_opening && comm != MPI_COMM_NULL;
}

static int yields(MPI_Comm comm)
{
    return tmi_depth > 0 && (is_opening(comm) || is_private(comm));
}

/* PMPI_NAME(PARAMS): the MPI library's, unless the guard is raised and
 * COMM is one of its private communicators or the open's before its
 * duplicate: then START (which sets req) and a yielding wait; FAILED runs
 * if either fails. */
#define TMI_YIELDING(name, params, args, comm, start, failed)                   \
    int PMPI_##name params                                                      \
    {                                                                           \
        static int(*real) params;                                               \
        TMI_RESOLVE(name, params, real);                                        \
        if (!yields(comm))                                                      \
            return real args;                                                   \
        MPI_Request req;                                                        \
        int err = start;                                                        \
        if (err == MPI_SUCCESS) {                                               \
            tmi_yielded_collectives++;                                          \
            err = tmi_wait_yielding(&req);                                      \
        }                                                                       \
        if (err != MPI_SUCCESS) {                                               \
            failed;                                                             \
        }                                                                       \
        return err;                                                             \
    }

/* MPI_Barrier and PMPI_Barrier are the interposer's own (tmi_Barrier,
 * served.c: a program's barrier flushes the files it orders); this is
 * their part for the MPI library's barriers inside forwarded calls. */
int tmi_yielding_barrier(MPI_Comm comm, int *err)
{
    if (!yields(comm))
        return 0;
    MPI_Request req;
    *err = MPI_Ibarrier(comm, &req);
    if (*err == MPI_SUCCESS) {
        tmi_yielded_collectives++;
        *err = tmi_wait_yielding(&req);
    }
    return 1;
}
TMI_YIELDING(Bcast, (void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm),
             (buf, count, type, root, comm), comm, MPI_Ibcast(buf, count, type, root, comm, &req), (void)0)
TMI_YIELDING(Allreduce,
             (const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm),
             (in, out, count, type, op, comm), comm,
             MPI_Iallreduce(in, out, count, type, op, comm, &req), (void)0)
TMI_YIELDING(Reduce,
             (const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, int root,
              MPI_Comm comm),
             (in, out, count, type, op, root, comm), comm,
             MPI_Ireduce(in, out, count, type, op, root, comm, &req), (void)0)
TMI_YIELDING(Gather,
             (const void *in, int incount, MPI_Datatype intype, void *out, int outcount,
              MPI_Datatype outtype, int root, MPI_Comm comm),
             (in, incount, intype, out, outcount, outtype, root, comm), comm,
             MPI_Igather(in, incount, intype, out, outcount, outtype, root, comm, &req),
             (void)0)
TMI_YIELDING(Allgather,
             (const void *in, int incount, MPI_Datatype intype, void *out, int outcount,
              MPI_Datatype outtype, MPI_Comm comm),
             (in, incount, intype, out, outcount, outtype, comm), comm,
             MPI_Iallgather(in, incount, intype, out, outcount, outtype, comm, &req),
             (void)0)
/* The duplicate of the open's communicator, made while the guard is
 * raised, is ROMIO's: marked private (above), and the stretch before it
 * ends.  The yielding form is comms.c's (MPI_COMM_NULL when it fails, as
 * MPI_Comm_dup leaves it: ROMIO frees what it got unless it is null). */
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *dup)
{
    static int (*real)(MPI_Comm, MPI_Comm *);
    TMI_RESOLVE(Comm_dup, (MPI_Comm, MPI_Comm *), real);
    if (tmi_depth == 0)
        return real(comm, dup);
    int opening = is_opening(comm), yield = opening || is_private(comm);
    if (yield)
        tmi_yielded_collectives++;
    int err = yield ? tmi_comm_dup(comm, dup) : real(comm, dup);
    if (opening) {
        tmi_opening = MPI_COMM_NULL;
        if (err == MPI_SUCCESS)
            mark_private(*dup);
    }
    return err;
}
