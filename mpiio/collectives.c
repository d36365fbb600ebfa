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
 * while the guard is raised (tmi_depth: inside a forwarded MPI-IO call,
 * or libtcio's own), these PMPI_ names start the nonblocking form and
 * wait yielding, as the interposer's and libtcio's own agreements do
 * (comms.c, lib/collective.c); the same open then took 3-10 ms.
 *
 * Why this is safe: a blocking and a nonblocking collective never match
 * each other (MPI-3.1 5.12), so every rank must take the same form.  The
 * collectives caught are those the MPI library makes inside MPI_File_*
 * calls, which are collective on the file's communicator and reach the
 * library through the interposer on every rank (it wraps every
 * MPI_File_* name, and a program must load it on all ranks or none:
 * doc/mpiio.md); the communicators they run on are the library's private
 * duplicates, or the program's own for the MPI_Comm_dup of an open, which
 * every rank makes inside the same MPI_File_open.  With the guard down
 * (a program calling a PMPI_ name itself, as Open MPI's Fortran bindings
 * do) the call goes to the MPI library unchanged.  Only the PMPI_ names:
 * MPICH's ROMIO calls those; programs call the MPI_ names, which stay
 * the MPI library's.  Open MPI's default MPI-IO (ompio) calls its
 * collectives inside the library, where nothing catches them.
 *
 * Not in the --wrap form (TMI_WRAP): a statically linked MPI library
 * defines these names itself. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "tmi.h"

/* PMPI_NAME(PARAMS): the MPI library's with the guard down; with it up,
 * START (which sets req) and a yielding wait. */
#define TMI_YIELDING(name, params, args, start)                                 \
    int PMPI_##name params                                                      \
    {                                                                           \
        static int(*real) params;                                               \
        if (tmi_depth == 0) {                                                   \
            if (!real) {                                                        \
                union { void *obj; int(*fn) params; } u;                        \
                u.obj = tmi_real_symbol("PMPI_" #name);                         \
                if (!u.obj)                                                     \
                    return MPI_ERR_INTERN;                                      \
                real = u.fn;                                                    \
            }                                                                   \
            return real args;                                                   \
        }                                                                       \
        MPI_Request req;                                                        \
        int err = start;                                                        \
        if (err != MPI_SUCCESS)                                                 \
            return err;                                                         \
        tmi_yielded_collectives++;                                              \
        return tmi_wait_yielding(&req);                                         \
    }

TMI_YIELDING(Barrier, (MPI_Comm comm), (comm), MPI_Ibarrier(comm, &req))
TMI_YIELDING(Bcast, (void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm),
             (buf, count, type, root, comm), MPI_Ibcast(buf, count, type, root, comm, &req))
TMI_YIELDING(Allreduce,
             (const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm),
             (in, out, count, type, op, comm),
             MPI_Iallreduce(in, out, count, type, op, comm, &req))
TMI_YIELDING(Reduce,
             (const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, int root,
              MPI_Comm comm),
             (in, out, count, type, op, root, comm),
             MPI_Ireduce(in, out, count, type, op, root, comm, &req))
TMI_YIELDING(Gather,
             (const void *in, int incount, MPI_Datatype intype, void *out, int outcount,
              MPI_Datatype outtype, int root, MPI_Comm comm),
             (in, incount, intype, out, outcount, outtype, root, comm),
             MPI_Igather(in, incount, intype, out, outcount, outtype, root, comm, &req))
TMI_YIELDING(Allgather,
             (const void *in, int incount, MPI_Datatype intype, void *out, int outcount,
              MPI_Datatype outtype, MPI_Comm comm),
             (in, incount, intype, out, outcount, outtype, comm),
             MPI_Iallgather(in, incount, intype, out, outcount, outtype, comm, &req))
TMI_YIELDING(Comm_dup, (MPI_Comm comm, MPI_Comm *dup), (comm, dup),
             MPI_Comm_idup(comm, dup, &req))
