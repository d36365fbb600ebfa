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
 * these PMPI_ names, when the MPI library itself calls them inside a
 * forwarded MPI-IO call (the guard, tmi_depth, raised), start the
 * nonblocking form and wait yielding, as the interposer's and libtcio's
 * own agreements do (comms.c, lib/collective.c); the same open then took
 * 3-10 ms.
 *
 * Why this is safe: a blocking and a nonblocking collective never match
 * each other (MPI-3.1 5.12), so every rank must take the same form for
 * each collective, and the form depends only on who calls it:
 *   - the MPI library's own code (the object that defines the real
 *     function, where MPICH keeps ROMIO, or an MPI-IO component whose
 *     file name says ROMIO, Open MPI's mca_io_romio321.so) inside an
 *     MPI_File_* call: the call is collective on the file's communicator
 *     and reaches the library through the interposer on every rank (a
 *     program must load it on all ranks or none: doc/mpiio.md), and its
 *     collectives run on the library's private duplicates, or on the
 *     program's communicator for the MPI_Comm_dup of an open, which every
 *     rank makes inside the same MPI_File_open.  Nonblocking.  (The
 *     MPI_File_* calls the interposer does not wrap, set_info among them,
 *     run with the guard down on every rank: blocking everywhere.)
 *   - anyone else, the guard raised or not: the MPI library's blocking
 *     call, unchanged.  Program code may run inside a forwarded call on
 *     one rank only (a file error handler, a datarep conversion, an
 *     attribute copy callback) and reach these names without naming them
 *     (Open MPI's mpif.h and use mpi bindings and MPICH's mpi_f08 call the
 *     PMPI_ names); its collective must take the form the other ranks take
 *     outside such a call.
 * An MPI library built with its Fortran bindings in the same object would
 * make a Fortran error handler's collectives nonblocking: not the case of
 * Debian's MPICH (libmpichfort) or Open MPI (libmpi_mpifh).  Open MPI's
 * default MPI-IO (ompio) makes its collectives inside the library, where
 * nothing catches them.
 *
 * Not in the --wrap form (TMI_WRAP): a statically linked MPI library
 * defines these names itself. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include "tmi.h"

/* Whether the code at CALLER belongs to the MPI library: the object that
 * defines REAL, or one whose file name says ROMIO. */
static int called_by_mpi(void *caller, void *real)
{
    Dl_info from, lib;
    if (!dladdr(caller, &from) || !dladdr(real, &lib))
        return 0;
    return from.dli_fbase == lib.dli_fbase ||
           (from.dli_fname && strstr(from.dli_fname, "romio") != NULL);
}

/* PMPI_NAME(PARAMS): the MPI library's, unless the MPI library calls it
 * with the guard raised: then START (which sets req) and a yielding wait;
 * FAILED runs if the wait fails. */
#define TMI_YIELDING(name, params, args, start, failed)                         \
    int PMPI_##name params                                                      \
    {                                                                           \
        static int(*real) params;                                               \
        union { void *obj; int(*fn) params; } u;                                \
        if (!real) {                                                            \
            u.obj = tmi_real_symbol("PMPI_" #name);                             \
            if (!u.obj)                                                         \
                return MPI_ERR_INTERN;                                          \
            real = u.fn;                                                        \
        }                                                                       \
        u.fn = real;                                                            \
        if (tmi_depth == 0 || !called_by_mpi(__builtin_return_address(0), u.obj)) \
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

TMI_YIELDING(Barrier, (MPI_Comm comm), (comm), MPI_Ibarrier(comm, &req), (void)0)
TMI_YIELDING(Bcast, (void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm),
             (buf, count, type, root, comm), MPI_Ibcast(buf, count, type, root, comm, &req), (void)0)
TMI_YIELDING(Allreduce,
             (const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm),
             (in, out, count, type, op, comm),
             MPI_Iallreduce(in, out, count, type, op, comm, &req), (void)0)
TMI_YIELDING(Reduce,
             (const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, int root,
              MPI_Comm comm),
             (in, out, count, type, op, root, comm),
             MPI_Ireduce(in, out, count, type, op, root, comm, &req), (void)0)
TMI_YIELDING(Gather,
             (const void *in, int incount, MPI_Datatype intype, void *out, int outcount,
              MPI_Datatype outtype, int root, MPI_Comm comm),
             (in, incount, intype, out, outcount, outtype, root, comm),
             MPI_Igather(in, incount, intype, out, outcount, outtype, root, comm, &req),
             (void)0)
TMI_YIELDING(Allgather,
             (const void *in, int incount, MPI_Datatype intype, void *out, int outcount,
              MPI_Datatype outtype, MPI_Comm comm),
             (in, incount, intype, out, outcount, outtype, comm),
             MPI_Iallgather(in, incount, intype, out, outcount, outtype, comm, &req),
             (void)0)
/* A failed duplicate is MPI_COMM_NULL, as MPI_Comm_dup leaves it (ROMIO
 * frees what it got unless it is null). */
TMI_YIELDING(Comm_dup, (MPI_Comm comm, MPI_Comm *dup), (comm, dup),
             MPI_Comm_idup(comm, dup, &req), *dup = MPI_COMM_NULL)
