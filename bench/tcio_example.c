/* tcio_example - the TCIO paper's Program 3 on a small scale: every rank
 * writes an int array and a double array, element by element, interleaved
 * with the other ranks, reads it all back lazily and checks each value.
 *
 *   mpiexec -n P tcio_example FILE [LEN_ARRAY]
 *
 * Exit status 0 when every element read back equals what was written. */
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>
#include "tcio.h"

static int value_int(int rank, long i) { return rank * 1000003 + (int)i; }
static double value_double(int rank, long i) { return rank + i * 0.5; }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2 || argc > 3 || (argc == 3 && atol(argv[2]) <= 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n P %s FILE [LEN_ARRAY]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    long len = argc == 3 ? atol(argv[2]) : 100000;
    const MPI_Offset block = sizeof(int) + sizeof(double);

    int *ints = malloc(len * sizeof *ints);
    double *doubles = malloc(len * sizeof *doubles);
    for (long i = 0; i < len; i++) {
        ints[i] = value_int(rank, i);
        doubles[i] = value_double(rank, i);
    }

    double t0 = MPI_Wtime();
    tcio_file *fh = tcio_open(argv[1], MPI_MODE_WRONLY | MPI_MODE_CREATE | TCIO_MODE_TRUNC);
    int rc = fh ? TCIO_SUCCESS : TCIO_ERR_OPEN;
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
    fh = rc == TCIO_SUCCESS ? tcio_open(argv[1], MPI_MODE_RDONLY) : NULL;
    if (rc == TCIO_SUCCESS && !fh)
        rc = TCIO_ERR_OPEN;
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
        printf("tcio_example: %d ranks wrote %ld int+double pairs each, interleaved (%.1f MiB)\n",
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
