/* porting_before.c - a checkpoint writer before porting: every rank writes
 * its cells into their places of one shared file, one fwrite per array
 * per cell.  porting_after.c is the same program with libtcio; the I/O
 * function between the "I/O" markers is the whole difference.
 *
 *   mpicc porting_before.c -o porting_before
 *   mpiexec -n 4 ./porting_before checkpoint.dat [NCELLS]
 *
 * (Plain stdio on a shared file: works on one node or a POSIX-consistent
 * file system, one small write per array and cell.) */
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>

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
    if (rank == 0) {                      /* create (and empty) the file once */
        FILE *f = fopen(name, "wb");
        if (f)
            fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    FILE *f = fopen(name, "r+b");
    int rc = f ? 0 : -1;
    for (long i = 0; i < c->n && rc == 0; i++) {
        if (fseek(f, (i * nprocs + rank) * (long)RECORD, SEEK_SET) != 0 ||
            fwrite(&c->density[i], sizeof(double), 1, f) != 1 ||
            fwrite(&c->level[i], sizeof(int), 1, f) != 1 ||
            fwrite(&c->position[3 * i], sizeof(float), 3, f) != 3)
            rc = -1;
    }
    if (f && fclose(f) != 0)
        rc = -1;
    MPI_Barrier(MPI_COMM_WORLD);          /* complete when every rank is done */
    return rc;
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
    if (rc != 0)
        fprintf(stderr, "rank %d: writing %s failed\n", rank, argv[1]);
    free(c.density);
    free(c.level);
    free(c.position);
    MPI_Finalize();
    return rc == 0 ? 0 : 1;
}
