/* porting_after.c - porting_before.c ported to libtcio: fopen, fseek,
 * fwrite and fclose become tcio_open, tcio_seek, tcio_write and
 * tcio_close; element counts with MPI datatypes replace byte sizes; the
 * create-then-reopen steps and the barriers go, because tcio_open and
 * tcio_close are collective.  The library gathers the small pieces of all
 * ranks into large contiguous writes.  Writes the same bytes as
 * porting_before.
 *
 *   mpicc $(pkg-config --cflags tcio) porting_after.c -o porting_after $(pkg-config --libs tcio)
 *   mpiexec -n 4 ./porting_after checkpoint.dat [NCELLS] */
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>
#include <tcio.h>

typedef struct cells {
    long    n;                /* cells on this rank */
    double *density;          /* n values */
    int    *level;            /* n values */
    float  *position;         /* 3 n values: x, y, z */
} cells;

/* Cell I of rank RANK is record I * P + RANK: the ranks' cells interleave. */
#define RECORD (sizeof(double) + sizeof(int) + 3 * sizeof(float))

/* ---- I/O begins ---- */
static int write_checkpoint(const char *name, const cells *c, int rank, int nprocs)
{
    tcio_file *f = tcio_open(name, MPI_MODE_WRONLY | MPI_MODE_CREATE | TCIO_MODE_TRUNC);
    if (!f)
        return tcio_last_error(NULL, 0);
    int rc = TCIO_SUCCESS;
    for (long i = 0; i < c->n && rc == TCIO_SUCCESS; i++) {
        rc = tcio_seek(f, (i * nprocs + rank) * (MPI_Offset)RECORD, MPI_SEEK_SET);
        if (rc == TCIO_SUCCESS)
            rc = tcio_write(f, &c->density[i], 1, MPI_DOUBLE);
        if (rc == TCIO_SUCCESS)
            rc = tcio_write(f, &c->level[i], 1, MPI_INT);
        if (rc == TCIO_SUCCESS)
            rc = tcio_write(f, &c->position[3 * i], 3, MPI_FLOAT);
    }
    int close_rc = tcio_close(f);         /* collective: the file is complete */
    return rc != TCIO_SUCCESS ? rc : close_rc;
}
/* ---- I/O ends ---- */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2 || argc > 3 || (argc == 3 && atol(argv[2]) <= 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n P %s FILE [NCELLS]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    cells c = { .n = argc == 3 ? atol(argv[2]) : 1000 };
    c.density = malloc((size_t)c.n * sizeof *c.density);
    c.level = malloc((size_t)c.n * sizeof *c.level);
    c.position = malloc((size_t)c.n * 3 * sizeof *c.position);
    for (long i = 0; i < c.n; i++) {
        c.density[i] = rank + i * 0.25;
        c.level[i] = (int)(i % 7) + rank;
        for (int k = 0; k < 3; k++)
            c.position[3 * i + k] = (float)(rank * 1000 + i) + k * 0.5f;
    }
    int rc = write_checkpoint(argv[1], &c, rank, nprocs);
    if (rc != 0) {
        char why[TCIO_MAX_ERROR_STRING];
        tcio_last_error(why, sizeof why);
        fprintf(stderr, "writing %s failed: %s\n", argv[1], why);
    }
    free(c.density);
    free(c.level);
    free(c.position);
    MPI_Finalize();
    return rc == 0 ? 0 : 1;
}
