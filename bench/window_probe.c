/* window_probe - what creating a one-sided window costs the MPI library,
 * beside what one collective costs, for doc/records/nodes.md (*The first
 * open's price*).
 *
 * On several nodes libtcio's first open of a communicator makes the file's
 * level 2 with MPI_Win_allocate (the rma transport); on one node it makes
 * a shared-memory segment of its own (shm) and calls no window creation.
 * This probe times, in a fresh duplicate of MPI_COMM_WORLD after a
 * barrier, the window creations an rma level 2 could use: MPI_Win_allocate
 * (what libtcio calls), MPI_Win_create over malloc'd memory, and
 * MPI_Win_create_dynamic with MPI_Win_attach, each with the memory on the
 * first OWNERS ranks only (libtcio's aggregators) and none on the others;
 * and, for scale, one MPI_Barrier and one MPI_Allreduce of one int.
 * Nothing of libtcio is used.  Each figure is the slowest rank's time, the
 * median of REPS repetitions; a kind the MPI library refuses (Open MPI's
 * osc/sm makes allocated windows only) is said to be refused.
 *
 *   make bench/window_probe          (in a build tree; not installed)
 *   mpiexec -n 8 bench/window_probe [-a OWNERS] [-s BYTES] [-r REPS]
 *
 * OWNERS defaults to 2, BYTES to 18874944 (libtcio's default level 2 per
 * aggregator: 16 segments of 1 MiB with their bitmaps and headers), REPS
 * to 5 (at most 100). */
#define _POSIX_C_SOURCE 200809L   /* getopt */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <mpi.h>

enum kind { WIN_ALLOCATE, WIN_CREATE, WIN_DYNAMIC, BARRIER, ALLREDUCE, NKINDS };
static const char *kind_name[NKINDS] = {
    "MPI_Win_allocate", "MPI_Win_create", "MPI_Win_create_dynamic+attach",
    "MPI_Barrier", "MPI_Allreduce (1 int)",
};

/* One timed operation of KIND over COMM, the window freed afterwards
 * (outside the time).  The slowest rank's seconds on every rank, or -1
 * where the MPI library refused it on some rank (Open MPI's osc/sm makes
 * only allocated windows). */
static double time_once(enum kind kind, MPI_Comm comm, MPI_Aint bytes)
{
    MPI_Win win = MPI_WIN_NULL;
    void *base = NULL, *memory = NULL;
    int one = 1, sum = 0, err = MPI_SUCCESS;
    if ((kind == WIN_CREATE || kind == WIN_DYNAMIC) && bytes > 0 &&
        !(memory = malloc((size_t)bytes))) {
        /* Skipping the collective creation on this rank alone would hang. */
        fprintf(stderr, "window_probe: no memory for %lld bytes\n", (long long)bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(comm);
    double start = MPI_Wtime();
    switch (kind) {
    case WIN_ALLOCATE:
        err = MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, comm, &base, &win);
        break;
    case WIN_CREATE:
        err = MPI_Win_create(memory, bytes, 1, MPI_INFO_NULL, comm, &win);
        break;
    case WIN_DYNAMIC:
        err = MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &win);
        /* A new window's errors are fatal whatever the communicator's
         * handler (MPI-3.1 section 11.6.1): the attach's must return. */
        if (err == MPI_SUCCESS)
            MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
        if (err == MPI_SUCCESS && memory)
            err = MPI_Win_attach(win, memory, bytes);
        break;
    case BARRIER:
        err = MPI_Barrier(comm);
        break;
    case ALLREDUCE:
        err = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
        break;
    default:
        break;
    }
    double took = err == MPI_SUCCESS ? MPI_Wtime() - start : 1e30, slowest = 0;
    MPI_Allreduce(&took, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    if (kind == WIN_DYNAMIC && memory && win != MPI_WIN_NULL && err == MPI_SUCCESS)
        MPI_Win_detach(win, memory);
    if (win != MPI_WIN_NULL)
        MPI_Win_free(&win);
    free(memory);
    return slowest >= 1e30 ? -1 : slowest;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void usage(FILE *to)
{
    fprintf(to, "usage: mpiexec -n P window_probe [-a OWNERS] [-s BYTES] [-r REPS]\n"
                "Times window creation (MPI_Win_allocate, MPI_Win_create, "
                "MPI_Win_create_dynamic)\nwith BYTES on the first OWNERS ranks, and one "
                "MPI_Barrier and MPI_Allreduce, in a\nfresh duplicate of MPI_COMM_WORLD: "
                "the slowest rank's time, median of REPS.\n"
                "  -a OWNERS  ranks holding memory (default 2)\n"
                "  -s BYTES   bytes per owner (default 18874944)\n"
                "  -r REPS    repetitions, 1 to 100 (default 5)\n"
                "  -h         print this help\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me = 0, nprocs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    long owners = 2, reps = 5;
    long long bytes = 18874944;
    int opt, bad = 0;
    opterr = me == 0;                      /* one complaint, not one per rank */
    while ((opt = getopt(argc, argv, "a:s:r:h")) != -1) {
        char *end = NULL;
        switch (opt) {
        case 'a': owners = strtol(optarg, &end, 10); bad |= *end || owners < 0; break;
        case 's': bytes = strtoll(optarg, &end, 10); bad |= *end || bytes < 0; break;
        case 'r': reps = strtol(optarg, &end, 10); bad |= *end || reps < 1 || reps > 100; break;
        case 'h':
            if (me == 0)
                usage(stdout);
            MPI_Finalize();
            return 0;
        default: bad = 1; break;
        }
    }
    if (bad || optind != argc) {
        if (me == 0)
            usage(stderr);
        MPI_Finalize();
        return 2;
    }
    MPI_Aint mine = me < owners ? (MPI_Aint)bytes : 0;
    if (me == 0)
        printf("window_probe: %d ranks, %lld bytes on each of the first %ld, median of %ld "
               "(slowest rank, ms)\n", nprocs, bytes, owners, reps);
    double took[100];
    for (int kind = 0; kind < NKINDS; kind++) {
        for (long r = 0; r < reps; r++) {
            MPI_Comm comm;
            MPI_Comm_dup(MPI_COMM_WORLD, &comm);
            /* A refused window creation is raised on the communicator. */
            MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
            took[r] = time_once((enum kind)kind, comm, mine);
            MPI_Comm_free(&comm);
        }
        qsort(took, (size_t)reps, sizeof took[0], by_value);
        if (took[0] < 0) {
            if (me == 0)
                printf("  %-30s refused by the MPI library\n", kind_name[kind]);
            continue;
        }
        double median = reps % 2 ? took[reps / 2] : (took[reps / 2 - 1] + took[reps / 2]) / 2;
        if (me == 0)
            printf("  %-30s %8.1f ms  (fastest %.1f, slowest %.1f)\n", kind_name[kind],
                   1e3 * median, 1e3 * took[0], 1e3 * took[reps - 1]);
    }
    MPI_Finalize();
    return 0;
}
