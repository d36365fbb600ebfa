/* tcio-open-close - the cost of opening and closing one shared file: N pairs of
 * tcio_open_comm + tcio_close against N pairs of MPI_File_open +
 * MPI_File_close on the same file and ranks.
 *
 *   mpiexec -n P tcio-open-close [-n PAIRS] [-r ROUNDS] [--trunc] FILE
 *
 * Each round times PAIRS pairs of each method, one method after the other
 * (their order alternating between rounds), and takes the slowest rank's
 * time; the report gives each method's median over the rounds, per pair,
 * and the ratio TCIO / MPI-IO.  Nothing is written: the file is created by
 * the first open and left in place (delete it afterwards). */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>
#include "tcio.h"
#include "bench_common.h"

static const char usage[] =
    "usage: mpiexec -n P tcio-open-close [-n PAIRS] [-r ROUNDS] [--trunc] FILE\n"
    "Times PAIRS open+close pairs of libtcio (tcio_open_comm + tcio_close) and of\n"
    "MPI-IO (MPI_File_open + MPI_File_close) on FILE, in ROUNDS alternating rounds,\n"
    "and prints the median time per pair of each (slowest rank) and their ratio.\n"
    "  -n, --pairs PAIRS    open+close pairs per round and method (default 20)\n"
    "  -r, --rounds ROUNDS  rounds (default 5)\n"
    "      --trunc          open with TCIO_MODE_TRUNC (MPI-IO: MPI_File_set_size 0)\n"
    "  -h, --help           print this help\n"
    "The file is opened MPI_MODE_RDWR | MPI_MODE_CREATE and left in place.\n"
    "libtcio's TCIO_* environment variables apply (man tcio-config).\n"
    "(bench/tcio_open_close in the build tree)\n";

typedef struct options {
    long        pairs, rounds;
    bool        trunc, help;
    const char *file;
} options;

static bool positive(const char *text, long *value)
{
    char *end;
    *value = strtol(text, &end, 10);
    return *text && !*end && *value > 0 && *value <= 1000000;
}

/* NULL when the options are valid (or help was asked for), else what is
 * wrong. */
static const char *parse(int argc, char **argv, options *o)
{
    static const struct option longopts[] = {
        { "pairs", required_argument, NULL, 'n' },
        { "rounds", required_argument, NULL, 'r' },
        { "trunc", no_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    *o = (options){ .pairs = 20, .rounds = 5 };
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "n:r:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (!positive(optarg, &o->pairs))
                return "PAIRS must be a positive integer";
            break;
        case 'r':
            if (!positive(optarg, &o->rounds))
                return "ROUNDS must be a positive integer";
            break;
        case 't': o->trunc = true; break;
        case 'h': o->help = true; return NULL;
        default: return "unknown option or missing value";
        }
    }
    if (optind != argc - 1)
        return "exactly one FILE is needed";
    o->file = argv[optind];
    return NULL;
}

static const int MODE = MPI_MODE_RDWR | MPI_MODE_CREATE;

static int mpiio_pair(const options *o)
{
    MPI_File fh;
    int err = MPI_File_open(MPI_COMM_WORLD, o->file, MODE, MPI_INFO_NULL, &fh);
    if (err == MPI_SUCCESS && o->trunc)
        err = MPI_File_set_size(fh, 0);
    if (err == MPI_SUCCESS)
        err = MPI_File_close(&fh);
    return err == MPI_SUCCESS ? 0 : -1;
}

static int tcio_pair(const options *o)
{
    tcio_file *fh;
    int rc = tcio_open_comm(MPI_COMM_WORLD, o->file, MODE | (o->trunc ? TCIO_MODE_TRUNC : 0),
                            MPI_INFO_NULL, &fh);
    if (rc == TCIO_SUCCESS)
        rc = tcio_close(fh);
    return rc == TCIO_SUCCESS ? 0 : -1;
}

/* Seconds per pair of PAIR, the slowest rank's; negative on failure. */
static double time_pairs(const options *o, int (*pair)(const options *))
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int failed = 0;
    for (long i = 0; i < o->pairs && !failed; i++)
        failed = pair(o);
    double mine[2] = { MPI_Wtime() - t0, failed }, all[2];
    MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return all[1] != 0 ? -1 : all[0] / (double)o->pairs;
}

static int run(const options *o, int rank, int nprocs)
{
    double *t_mpi = malloc((size_t)o->rounds * sizeof *t_mpi);
    double *t_tcio = malloc((size_t)o->rounds * sizeof *t_tcio);
    if (!t_mpi || !t_tcio)
        return 1;
    /* One untimed pair of each: the first open of a communicator sets up
     * what later opens reuse, and the file exists afterwards. */
    int status = mpiio_pair(o) != 0 || tcio_pair(o) != 0;
    for (long r = 0; r < o->rounds && !status; r++) {
        bool tcio_first = r % 2;
        if (tcio_first)
            t_tcio[r] = time_pairs(o, tcio_pair);
        t_mpi[r] = time_pairs(o, mpiio_pair);
        if (!tcio_first)
            t_tcio[r] = time_pairs(o, tcio_pair);
        status = t_mpi[r] < 0 || t_tcio[r] < 0;
    }
    if (status) {
        char why[256];
        tcio_last_error(why, sizeof why);
        if (rank == 0)
            fprintf(stderr, "tcio-open-close: an open or close failed (%s)\n", why);
    } else if (rank == 0) {
        double m = bench_median(t_mpi, o->rounds), t = bench_median(t_tcio, o->rounds);
        printf("open+close per pair, median of %ld rounds of %ld pairs, %d ranks%s:\n",
               o->rounds, o->pairs, nprocs, o->trunc ? ", truncating" : "");
        printf("  MPI_File_open+close  %10.1f us\n", m * 1e6);
        printf("  tcio_open+close      %10.1f us\n", t * 1e6);
        printf("  ratio tcio/MPI-IO    %10.2f\n", t / m);
    }
    free(t_mpi);
    free(t_tcio);
    return status;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    options o;
    const char *problem = parse(argc, argv, &o);
    int status;
    if (o.help || problem) {
        if (rank == 0) {
            if (problem)
                fprintf(stderr, "tcio-open-close: %s\n", problem);
            fputs(usage, problem ? stderr : stdout);
        }
        status = problem ? 2 : 0;
    } else {
        status = run(&o, rank, nprocs);
    }
    MPI_Finalize();
    return status;
}
