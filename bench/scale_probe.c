/* scale_probe - counts the MPI calls libtcio makes per phase of a file
 * (first open, writes, flush, close, a later open, reads, close), for
 * doc/records/scale.md.
 *
 * The program defines the MPI functions it counts itself and calls their
 * PMPI_ names, so every call libtcio makes (linked statically, or through
 * the executable's exported symbols) passes through here.  Counts are per
 * rank and per phase; at the end they are summed and maximised over the
 * ranks with PMPI calls (not counted) and printed by rank 0, one line per
 * phase and counter.  One-sided operations are split by target: this rank
 * itself, another rank of its node, another node (nodes from
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), which MPIR_CVAR_NUM_CLIQUES
 * cuts into cliques under MPICH), with the bytes they carry.
 *
 * Patterns: "i" is tcio_bench's Table II shape (-n 2 -t i,d -s 1: an int
 * and a double per element, 12-byte blocks of the ranks interleaved round
 * robin, every rank writes into every segment); "b" writes whole blocks of
 * BLOCK bytes (rank r writes blocks r, r+P, r+2P, ...: with BLOCK the
 * segment size every segment comes from one rank).  The data read back is
 * checked.
 *
 *   make bench/scale_probe          (in a build tree; not installed)
 *   mpiexec -n 8 bench/scale_probe -p i -l 262144 -o /dev/shm/probe.dat
 *   mpiexec -n 8 bench/scale_probe -p b -l 3 -b 1048576 -o /dev/shm/probe.dat
 *
 * -l is elements per rank (pattern i) or blocks per rank (pattern b);
 * -f 0 skips the tcio_flush after the writes (the close forwards then). */
#define _POSIX_C_SOURCE 200809L   /* getopt */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <mpi.h>
#include "tcio.h"

/* ---- what is counted ------------------------------------------------------ */

#define COUNTERS(X)                                                               \
    X(IALLREDUCE) X(ALLREDUCE) X(IBARRIER) X(BARRIER) X(ALLGATHER) X(REDUCE)      \
    X(BCAST) X(COMM_DUP) X(COMM_SPLIT) X(COMM_SPLIT_TYPE) X(COMM_CREATE_GROUP)     \
    X(WIN_ALLOCATE) X(WIN_FREE)                                                   \
    X(RMA_SELF) X(RMA_NODE) X(RMA_OFF) X(RMA_OFF_BYTES_OUT) X(RMA_OFF_BYTES_IN)   \
    X(RMA_NODE_BYTES)                                                             \
    X(SWAPS_OFF) X(PEEKS_OFF) X(ACC_OFF) X(PUTS_OFF) X(GETS_OFF)                  \
    X(FLUSH_SELF) X(FLUSH_OTHER) X(FLUSH_OFF) X(FLUSH_ALL)                        \
    X(FILE_WRITES) X(FILE_WRITE_BYTES) X(FILE_READS) X(FILE_READ_BYTES)           \
    X(IPROBES)

enum counter {
#define X(name) C_##name,
    COUNTERS(X)
#undef X
    NCOUNTERS
};
static const char *counter_name[] = {
#define X(name) #name,
    COUNTERS(X)
#undef X
};

enum phase { P_SETUP, P_OPEN1, P_WRITE, P_FLUSH, P_CLOSE1, P_OPEN2, P_READ, P_CLOSE2,
             NPHASES };
static const char *phase_name[] = { "setup", "open (first)", "writes", "flush",
                                    "close (write)", "open (later)", "reads",
                                    "close (read)" };

static enum phase phase = P_SETUP;
static int64_t count[NPHASES][NCOUNTERS];
static int me = -1, *node_of;       /* node of every world rank */

static void add(enum counter c, int64_t n) { count[phase][c] += n; }

static int64_t type_bytes(int n, MPI_Datatype t)
{
    int size = 0;
    PMPI_Type_size(t, &size);
    return (int64_t)n * size;
}

/* Where a one-sided operation on WIN goes.  libtcio's windows are over its
 * private duplicate of the communicator it was given (MPI_COMM_WORLD
 * here), so window ranks are world ranks. */
static int where(int target)
{
    if (target == me)
        return 0;
    return node_of && node_of[target] == node_of[me] ? 1 : 2;
}

static void one_sided(int target, int64_t out, int64_t in, enum counter kind)
{
    int w = where(target);
    add(w == 0 ? C_RMA_SELF : w == 1 ? C_RMA_NODE : C_RMA_OFF, 1);
    if (w == 1)
        add(C_RMA_NODE_BYTES, out + in);
    if (w == 2) {
        add(C_RMA_OFF_BYTES_OUT, out);
        add(C_RMA_OFF_BYTES_IN, in);
        add(kind, 1);
    }
}

/* ---- the interposed MPI functions ----------------------------------------- */

int MPI_Iallreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                   MPI_Request *q)
{
    add(C_IALLREDUCE, 1);
    return PMPI_Iallreduce(s, r, n, t, op, c, q);
}
int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    add(C_ALLREDUCE, 1);
    return PMPI_Allreduce(s, r, n, t, op, c);
}
int MPI_Ibarrier(MPI_Comm c, MPI_Request *q)
{
    add(C_IBARRIER, 1);
    return PMPI_Ibarrier(c, q);
}
int MPI_Barrier(MPI_Comm c)
{
    add(C_BARRIER, 1);
    return PMPI_Barrier(c);
}
int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                  MPI_Comm c)
{
    add(C_ALLGATHER, 1);
    return PMPI_Allgather(s, sn, st, r, rn, rt, c);
}
int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c)
{
    add(C_REDUCE, 1);
    return PMPI_Reduce(s, r, n, t, op, root, c);
}
int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c)
{
    add(C_BCAST, 1);
    return PMPI_Bcast(b, n, t, root, c);
}
int MPI_Comm_dup(MPI_Comm c, MPI_Comm *out)
{
    add(C_COMM_DUP, 1);
    return PMPI_Comm_dup(c, out);
}
/* libtcio's own duplicate and gathers are nonblocking (waited for
 * yielding): counted with their blocking forms. */
int MPI_Comm_idup(MPI_Comm c, MPI_Comm *out, MPI_Request *q)
{
    add(C_COMM_DUP, 1);
    return PMPI_Comm_idup(c, out, q);
}
int MPI_Iallgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                   MPI_Comm c, MPI_Request *q)
{
    add(C_ALLGATHER, 1);
    return PMPI_Iallgather(s, sn, st, r, rn, rt, c, q);
}
int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm *out)
{
    add(C_COMM_SPLIT, 1);
    return PMPI_Comm_split(c, color, key, out);
}
int MPI_Comm_create_group(MPI_Comm c, MPI_Group g, int tag, MPI_Comm *out)
{
    add(C_COMM_CREATE_GROUP, 1);
    return PMPI_Comm_create_group(c, g, tag, out);
}
int MPI_Comm_split_type(MPI_Comm c, int type, int key, MPI_Info info, MPI_Comm *out)
{
    add(C_COMM_SPLIT_TYPE, 1);
    return PMPI_Comm_split_type(c, type, key, info, out);
}
int MPI_Win_allocate(MPI_Aint size, int disp, MPI_Info info, MPI_Comm c, void *base,
                     MPI_Win *win)
{
    add(C_WIN_ALLOCATE, 1);
    return PMPI_Win_allocate(size, disp, info, c, base, win);
}
int MPI_Win_free(MPI_Win *win)
{
    add(C_WIN_FREE, 1);
    return PMPI_Win_free(win);
}

int MPI_Rget_accumulate(const void *o, int on, MPI_Datatype ot, void *r, int rn,
                        MPI_Datatype rt, int target, MPI_Aint disp, int tn, MPI_Datatype tt,
                        MPI_Op op, MPI_Win win, MPI_Request *q)
{
    /* a swap (MPI_REPLACE: the slot lock), a peek (MPI_NO_OP), or the
     * written-byte counter (MPI_SUM) */
    one_sided(target, type_bytes(on, ot), type_bytes(rn, rt),
              op == MPI_NO_OP ? C_PEEKS_OFF : op == MPI_REPLACE ? C_SWAPS_OFF : C_ACC_OFF);
    return PMPI_Rget_accumulate(o, on, ot, r, rn, rt, target, disp, tn, tt, op, win, q);
}
int MPI_Raccumulate(const void *o, int on, MPI_Datatype ot, int target, MPI_Aint disp, int tn,
                    MPI_Datatype tt, MPI_Op op, MPI_Win win, MPI_Request *q)
{
    one_sided(target, type_bytes(on, ot), 0, C_ACC_OFF);
    return PMPI_Raccumulate(o, on, ot, target, disp, tn, tt, op, win, q);
}
int MPI_Rput(const void *o, int on, MPI_Datatype ot, int target, MPI_Aint disp, int tn,
             MPI_Datatype tt, MPI_Win win, MPI_Request *q)
{
    one_sided(target, type_bytes(on, ot), 0, C_PUTS_OFF);
    return PMPI_Rput(o, on, ot, target, disp, tn, tt, win, q);
}
int MPI_Rget(void *o, int on, MPI_Datatype ot, int target, MPI_Aint disp, int tn,
             MPI_Datatype tt, MPI_Win win, MPI_Request *q)
{
    one_sided(target, 0, type_bytes(on, ot), C_GETS_OFF);
    return PMPI_Rget(o, on, ot, target, disp, tn, tt, win, q);
}
int MPI_Fetch_and_op(const void *o, void *r, MPI_Datatype t, int target, MPI_Aint disp,
                     MPI_Op op, MPI_Win win)
{
    one_sided(target, 0, type_bytes(1, t), C_PEEKS_OFF);
    return PMPI_Fetch_and_op(o, r, t, target, disp, op, win);
}
int MPI_Get_accumulate(const void *o, int on, MPI_Datatype ot, void *r, int rn, MPI_Datatype rt,
                       int target, MPI_Aint disp, int tn, MPI_Datatype tt, MPI_Op op,
                       MPI_Win win)
{
    one_sided(target, type_bytes(on, ot), type_bytes(rn, rt), C_PEEKS_OFF);
    return PMPI_Get_accumulate(o, on, ot, r, rn, rt, target, disp, tn, tt, op, win);
}
int MPI_Win_flush(int target, MPI_Win win)
{
    int w = where(target);
    add(w == 0 ? C_FLUSH_SELF : C_FLUSH_OTHER, 1);
    if (w == 2)
        add(C_FLUSH_OFF, 1);
    return PMPI_Win_flush(target, win);
}
int MPI_Win_flush_all(MPI_Win win)
{
    add(C_FLUSH_ALL, 1);
    return PMPI_Win_flush_all(win);
}
int MPI_File_write_at(MPI_File f, MPI_Offset off, const void *b, int n, MPI_Datatype t,
                      MPI_Status *st)
{
    add(C_FILE_WRITES, 1);
    add(C_FILE_WRITE_BYTES, type_bytes(n, t));
    return PMPI_File_write_at(f, off, b, n, t, st);
}
int MPI_File_read_at(MPI_File f, MPI_Offset off, void *b, int n, MPI_Datatype t,
                     MPI_Status *st)
{
    add(C_FILE_READS, 1);
    add(C_FILE_READ_BYTES, type_bytes(n, t));
    return PMPI_File_read_at(f, off, b, n, t, st);
}
int MPI_Iprobe(int source, int tag, MPI_Comm c, int *flag, MPI_Status *st)
{
    add(C_IPROBES, 1);
    return PMPI_Iprobe(source, tag, c, flag, st);
}

/* ---- the patterns --------------------------------------------------------- */

static int fail(const char *what)
{
    char why[TCIO_MAX_ERROR_STRING];
    tcio_last_error(why, (int)sizeof why);
    fprintf(stderr, "scale_probe rank %d: %s failed: %s\n", me, what, why);
    PMPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

static int32_t ival(long i, int r) { return (int32_t)(i * 131 + r); }
static double dval(long i, int r) { return (double)i * 0.5 + r; }

static void interleaved(tcio_file *fh, long len, int nprocs, bool writing)
{
    long bad = 0;
    for (long i = 0; i < len; i++) {
        MPI_Offset pos = ((MPI_Offset)me + (MPI_Offset)i * nprocs) * 12;
        int32_t a = ival(i, me);
        double d = dval(i, me);
        if (writing) {
            if (tcio_write_at(fh, pos, &a, 4, MPI_BYTE) != TCIO_SUCCESS ||
                tcio_write_at(fh, pos + 4, &d, 8, MPI_BYTE) != TCIO_SUCCESS)
                fail("tcio_write_at");
        } else {
            static int32_t ra[4096];
            static double rd[4096];
            /* Reads are lazy: delivered when level 1 moves on, so the
             * destinations must live until then; check them in batches. */
            long k = i % 4096;
            if (tcio_read_at(fh, pos, &ra[k], 4, MPI_BYTE) != TCIO_SUCCESS ||
                tcio_read_at(fh, pos + 4, &rd[k], 8, MPI_BYTE) != TCIO_SUCCESS)
                fail("tcio_read_at");
            if (k == 4095 || i == len - 1) {
                if (tcio_fetch(fh) != TCIO_SUCCESS)
                    fail("tcio_fetch");
                for (long j = 0; j <= k; j++)
                    bad += ra[j] != ival(i - k + j, me) || rd[j] != dval(i - k + j, me);
            }
        }
    }
    if (bad)
        fprintf(stderr, "scale_probe rank %d: %ld elements read back wrong\n", me, bad);
}

static void blocks(tcio_file *fh, long nblocks, long block, int nprocs, bool writing)
{
    char *buf = malloc((size_t)block);
    long bad = 0;
    for (long j = 0; j < nblocks; j++) {
        MPI_Offset pos = ((MPI_Offset)me + (MPI_Offset)j * nprocs) * block;
        if (writing) {
            memset(buf, (int)((me + j) & 0x7f) + 1, (size_t)block);
            if (tcio_write_at(fh, pos, buf, (int)block, MPI_BYTE) != TCIO_SUCCESS)
                fail("tcio_write_at");
        } else {
            if (tcio_read_at(fh, pos, buf, (int)block, MPI_BYTE) != TCIO_SUCCESS ||
                tcio_fetch(fh) != TCIO_SUCCESS)
                fail("tcio_read_at");
            bad += buf[0] != (char)(((me + j) & 0x7f) + 1) || buf[block - 1] != buf[0];
        }
    }
    if (bad)
        fprintf(stderr, "scale_probe rank %d: %ld blocks read back wrong\n", me, bad);
    free(buf);
}

/* ---- main ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int nprocs;
    PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    PMPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    char pattern = 'i';
    long len = 65536, block = 1 << 20;
    int flush = 1;
    const char *fname = "/dev/shm/scale_probe.dat";
    int opt;
    while ((opt = getopt(argc, argv, "p:l:b:f:o:")) != -1) {
        if (opt == 'p') pattern = optarg[0];
        else if (opt == 'l') len = atol(optarg);
        else if (opt == 'b') block = atol(optarg);
        else if (opt == 'f') flush = atoi(optarg);
        else if (opt == 'o') fname = optarg;
        else {
            if (me == 0)
                fprintf(stderr, "usage: scale_probe [-p i|b] [-l N] [-b BLOCK] [-f 0|1] "
                                "[-o FILE]\n");
            PMPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    /* The node of every rank, as libtcio finds it (not counted). */
    MPI_Comm local;
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    int lrank, leader;
    PMPI_Comm_rank(local, &lrank);
    leader = me;
    PMPI_Bcast(&leader, 1, MPI_INT, 0, local);
    PMPI_Comm_free(&local);
    node_of = malloc((size_t)nprocs * sizeof *node_of);
    PMPI_Allgather(&leader, 1, MPI_INT, node_of, 1, MPI_INT, MPI_COMM_WORLD);
    int nnodes = 0;
    for (int r = 0; r < nprocs; r++)
        nnodes += node_of[r] == r;

    phase = P_OPEN1;
    tcio_file *fh = tcio_open(fname, MPI_MODE_WRONLY | MPI_MODE_CREATE | TCIO_MODE_TRUNC);
    if (!fh)
        fail("tcio_open (write)");
    phase = P_WRITE;
    if (pattern == 'b')
        blocks(fh, len, block, nprocs, true);
    else
        interleaved(fh, len, nprocs, true);
    phase = P_FLUSH;
    if (flush && tcio_flush(fh) != TCIO_SUCCESS)
        fail("tcio_flush");
    phase = P_CLOSE1;
    if (tcio_close(fh) != TCIO_SUCCESS)
        fail("tcio_close (write)");
    phase = P_OPEN2;
    if (!(fh = tcio_open(fname, MPI_MODE_RDONLY)))
        fail("tcio_open (read)");
    phase = P_READ;
    if (pattern == 'b')
        blocks(fh, len, block, nprocs, false);
    else
        interleaved(fh, len, nprocs, false);
    phase = P_CLOSE2;
    if (tcio_close(fh) != TCIO_SUCCESS)
        fail("tcio_close (read)");
    phase = P_SETUP;

    static int64_t sum[NPHASES][NCOUNTERS], max[NPHASES][NCOUNTERS];
    PMPI_Reduce(count, sum, NPHASES * NCOUNTERS, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    PMPI_Reduce(count, max, NPHASES * NCOUNTERS, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    if (me == 0) {
        printf("# scale_probe: %d ranks, %d nodes, pattern %c, len %ld, block %ld, flush %d\n",
               nprocs, nnodes, pattern, len, pattern == 'b' ? block : 12, flush);
        printf("# node of each rank (its lowest rank):");
        for (int r = 0; r < nprocs; r++)
            printf(" %d", node_of[r]);
        printf("\nphase,counter,sum,max_per_rank\n");
        for (int p = P_OPEN1; p < NPHASES; p++)
            for (int c = 0; c < NCOUNTERS; c++)
                if (sum[p][c])
                    printf("%s,%s,%lld,%lld\n", phase_name[p], counter_name[c],
                           (long long)sum[p][c], (long long)max[p][c]);
    }
    free(node_of);
    MPI_Finalize();
    return 0;
}
