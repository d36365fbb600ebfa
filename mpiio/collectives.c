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
 *   - the MPI library's private communicators: those a PMPI_Comm_dup
 *     made with the guard raised (ROMIO's duplicate of the file's
 *     communicator at every real open), until PMPI_Comm_free;
 *   - the communicator of the real open in progress on this thread
 *     (tmi_opening, served.c), until the MPI library's first duplicate
 *     of it: ROMIO's first collectives, before it duplicates.
 * The same open then took 3-10 ms.
 *
 * Why this is safe: a blocking and a nonblocking collective never match
 * each other (MPI-3.1 5.12), so every rank must take the same form for
 * each collective.  The program never holds a private communicator, so
 * every collective on one is the MPI library's, made inside an MPI_File_*
 * call that is collective and passes through the interposer on every
 * rank (a program must load it on all ranks or none: doc/mpiio.md).  In
 * the stretch of an open before the duplicate, no program code runs on
 * only some ranks of a correct program: the open's arguments must be
 * the same everywhere, so an error there is everybody's, and attribute
 * copy callbacks run inside the duplicate on every rank.  Everywhere
 * else the call is the MPI library's blocking one, unchanged: the
 * program's own collectives and any that program code makes inside a
 * forwarded call (a file error handler run on one rank, Fortran bindings
 * calling PMPI_ names) take the form the other ranks take outside it.
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
 * Those that a PMPI_Comm_dup made with the guard raised: ROMIO's
 * duplicate of the file's communicator at every real open (and of
 * MPI_COMM_SELF at libtcio's own), until PMPI_Comm_free frees them.  The
 * program never holds one, so a collective on one is the MPI library's
 * own whoever's code calls it.  A few are open at once (one per open
 * file); past the table's room a duplicate is not recorded, and its
 * collectives keep the blocking form.  Under a lock: programs under
 * MPI_THREAD_MULTIPLE are not served but their calls are forwarded. */
enum { TMI_MAX_PRIVATE = 64 };
static MPI_Comm private_comms[TMI_MAX_PRIVATE];
static int nprivate;
static pthread_mutex_t private_lock = PTHREAD_MUTEX_INITIALIZER;

static int is_private(MPI_Comm comm)
{
    int found = 0;
    pthread_mutex_lock(&private_lock);
    for (int i = 0; i < nprivate && !found; i++)
        found = private_comms[i] == comm;
    pthread_mutex_unlock(&private_lock);
    return found;
}

static void add_private(MPI_Comm comm)
{
    pthread_mutex_lock(&private_lock);
    if (comm != MPI_COMM_NULL && nprivate < TMI_MAX_PRIVATE)
        private_comms[nprivate++] = comm;
    pthread_mutex_unlock(&private_lock);
}

static void drop_private(MPI_Comm comm)
{
    pthread_mutex_lock(&private_lock);
    for (int i = 0; i < nprivate; i++)
        if (private_comms[i] == comm) {
            private_comms[i] = private_comms[--nprivate];
            break;
        }
    pthread_mutex_unlock(&private_lock);
}

/* The real PMPI_NAME into REAL (a static of the caller), resolved once. */
#define TMI_RESOLVE(name, params, real)                                         \
    do {                                                                        \
        if (!real) {                                                            \
            union { void *obj; int(*fn) params; } u;                            \
            u.obj = tmi_real_symbol("PMPI_" #name);                             \
            if (!u.obj)                                                         \
                return MPI_ERR_INTERN;                                          \
            real = u.fn;                                                        \
        }                                                                       \
    } while (0)

/* ---- the start of a real open ----
 * Before ROMIO duplicates the program's communicator, its open makes its
 * first collectives on that communicator itself.  In that stretch no
 * program code can run on only some ranks of a correct program (an
 * error there is a local check of arguments that MPI requires to be the
 * same on every rank), so collectives on the open's communicator may
 * yield until its first duplicate is made (served.c sets the
 * communicator around every real open). */
static int yields(MPI_Comm comm)
{
    return tmi_depth > 0 &&
           ((comm == tmi_opening && comm != MPI_COMM_NULL) || is_private(comm));
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

TMI_YIELDING(Barrier, (MPI_Comm comm), (comm), comm, MPI_Ibarrier(comm, &req), (void)0)
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
/* A duplicate made with the guard raised is private (above).  A failed
 * duplicate is MPI_COMM_NULL, as MPI_Comm_dup leaves it (ROMIO frees what
 * it got unless it is null). */
static int yielding_dup(MPI_Comm comm, MPI_Comm *dup)
{
    MPI_Request req;
    int err = MPI_Comm_idup(comm, dup, &req);
    if (err == MPI_SUCCESS) {
        tmi_yielded_collectives++;
        err = tmi_wait_yielding(&req);
    }
    if (err != MPI_SUCCESS)
        *dup = MPI_COMM_NULL;
    return err;
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *dup)
{
    static int (*real)(MPI_Comm, MPI_Comm *);
    TMI_RESOLVE(Comm_dup, (MPI_Comm, MPI_Comm *), real);
    if (tmi_depth == 0)
        return real(comm, dup);
    int err = yields(comm) ? yielding_dup(comm, dup) : real(comm, dup);
    if (comm == tmi_opening)
        tmi_opening = MPI_COMM_NULL;   /* the stretch before the duplicate ends */
    if (err == MPI_SUCCESS)
        add_private(*dup);
    return err;
}

int PMPI_Comm_free(MPI_Comm *comm)
{
    static int (*real)(MPI_Comm *);
    TMI_RESOLVE(Comm_free, (MPI_Comm *), real);
    if (comm)
        drop_private(*comm);
    return real(comm);
}
