/* tcio_example - the TCIO paper's Program 3 on a small scale: every rank
 * writes an int array and a double array, element by element, interleaved
 * with the other ranks, reads it all back lazily and checks each value.
 *
 *   mpiexec -n P tcio-example [--len LEN_ARRAY] FILE
 *
 * Exit status 0 when every element read back equals what was written, 1
 * when not or when a call fails (tcio_last_error's reason on stderr), 2
 * for bad usage. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>
#include "tcio.h"

static const char usage[] =
    "usage: mpiexec -n P tcio-example [-l LEN_ARRAY] FILE\n"
    "Every rank writes an int and a double array element by element, interleaved\n"
    "with the other ranks (rank r's element i at record r + i*P), into FILE with\n"
    "libtcio, reads everything back and checks it.\n"
    "  -l, --len LEN_ARRAY  elements per array and rank (default 100000)\n"
    "  -h, --help           print this help\n"
    "libtcio's TCIO_* environment variables apply (man tcio-config).\n"
    "(bench/tcio_example in the build tree)\n";

/* The options: FILE and LEN, or *HELP; NULL when valid, else what is
 * wrong. */
static const char *parse(int argc, char **argv, const char **file, long *len, bool *help)
{
    static const struct option longopts[] = {
        { "len", required_argument, NULL, 'l' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    *len = 100000;
    *help = false;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "hl:", longopts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'h': *help = true; break;
        case 'l':
            *len = strtol(optarg, &end, 10);
            if (end == optarg || *end != '\0' || *len <= 0)
                return "LEN_ARRAY must be a positive number";
            break;
        default: return "unknown option or missing value";
        }
    }
    /* A second operand is the LEN_ARRAY of the old usage (FILE LEN). */
    if (!*help && optind + 2 == argc) {
        char *end;
        *len = strtol(argv[optind + 1], &end, 10);
        if (end == argv[optind + 1] || *end != '\0' || *len <= 0)
            return "LEN_ARRAY must be a positive number";
    } else if (!*help && optind + 1 != argc) {
        return "exactly one FILE is needed";
    }
    *file = *help ? NULL : argv[optind];
    return NULL;
}

/* Rank 0 says why RC happened (tcio_last_error) in context WHAT. */
static void report_failure(int rank, const char *what, int rc)
{
    char reason[TCIO_MAX_ERROR_STRING];
    if (tcio_last_error(reason, sizeof reason) == TCIO_SUCCESS)
        snprintf(reason, sizeof reason, "%s", tcio_error_string(rc));
    (void)rank;                      /* the reason names the rank */
    fprintf(stderr, "tcio-example: %s failed: %s\n", what, reason);
}

static int value_int(int rank, long i) { return rank * 1000003 + (int)i; }
static double value_double(int rank, long i) { return rank + i * 0.5; }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *file;
    long len;
    bool help;
    const char *problem = parse(argc, argv, &file, &len, &help);
    if (help || problem) {
        if (rank == 0 && help)
            fputs(usage, stdout);
        else if (rank == 0)
            fprintf(stderr, "tcio-example: %s\n%s", problem, usage);
        MPI_Finalize();
        return help ? 0 : 2;
    }
    const MPI_Offset block = sizeof(int) + sizeof(double);

    int *ints = malloc(len * sizeof *ints);
    double *doubles = malloc(len * sizeof *doubles);
    for (long i = 0; i < len; i++) {
        ints[i] = value_int(rank, i);
        doubles[i] = value_double(rank, i);
    }

    double t0 = MPI_Wtime();
    tcio_file *fh = tcio_open(file, MPI_MODE_WRONLY | MPI_MODE_CREATE | TCIO_MODE_TRUNC);
    int rc = fh ? TCIO_SUCCESS : tcio_last_error(NULL, 0);
    for (long i = 0; i < len && rc == TCIO_SUCCESS; i++) {
        MPI_Offset pos = (rank + i * nprocs) * block;
        rc = tcio_write_at(fh, pos, &ints[i], 1, MPI_INT);
        if (rc == TCIO_SUCCESS)
            rc = tcio_write_at(fh, pos + sizeof(int), &doubles[i], 1, MPI_DOUBLE);
    }
    if (fh) {
        int close_rc = tcio_close(fh);
        if (rc == TCIO_SUCCESS)
            rc = close_rc;
    }
    double t1 = MPI_Wtime();

    int *ints_in = calloc(len, sizeof *ints_in);
    double *doubles_in = calloc(len, sizeof *doubles_in);
    fh = rc == TCIO_SUCCESS ? tcio_open(file, MPI_MODE_RDONLY) : NULL;
    if (rc == TCIO_SUCCESS && !fh)
        rc = tcio_last_error(NULL, 0);
    for (long i = 0; i < len && rc == TCIO_SUCCESS; i++) {
        MPI_Offset pos = (rank + i * nprocs) * block;
        rc = tcio_read_at(fh, pos, &ints_in[i], 1, MPI_INT);
        if (rc == TCIO_SUCCESS)
            rc = tcio_read_at(fh, pos + sizeof(int), &doubles_in[i], 1, MPI_DOUBLE);
    }
    if (fh) {
        int close_rc = tcio_close(fh);   /* completes the lazy reads */
        if (rc == TCIO_SUCCESS)
            rc = close_rc;
    }
    double t2 = MPI_Wtime();

    if (rc != TCIO_SUCCESS)
        report_failure(rank, "writing or reading back", rc);
    long bad = 0;
    for (long i = 0; i < len && rc == TCIO_SUCCESS; i++)
        if (ints_in[i] != value_int(rank, i) || doubles_in[i] != value_double(rank, i))
            bad++;
    long all_bad = 0;
    int worst = rc;
    MPI_Reduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&rc, &worst, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double mib = (double)block * len * nprocs / (1 << 20);
        printf("tcio-example: %d ranks wrote %ld int+double pairs each, interleaved (%.1f MiB)\n",
               nprocs, len, mib);
        printf("  write (open..close): %.3f s, %.1f MiB/s\n", t1 - t0, mib / (t1 - t0));
        printf("  read  (open..close): %.3f s, %.1f MiB/s\n", t2 - t1, mib / (t2 - t1));
        if (worst != TCIO_SUCCESS)
            printf("  FAILED: %s\n", tcio_error_string(worst));
        else
            printf("  verified: %s (%ld wrong elements)\n", all_bad ? "no" : "yes", all_bad);
    }
    free(ints); free(doubles); free(ints_in); free(doubles_in);
    MPI_Finalize();
    return worst != TCIO_SUCCESS || all_bad ? 1 : 0;
}
