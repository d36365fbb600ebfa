/* mpi_ranks - what the launcher really started: rank 0 prints the size of
 * MPI_COMM_WORLD.  tests/run-mpi.sh runs it before anything else; a
 * launcher of another MPI than the one the program was built with starts
 * every rank as a singleton, and then NP lines of "mpi_ranks: 1" appear
 * instead of one line "mpi_ranks: NP".
 *
 * With two ranks or more it also sends 1 MiB from rank 0 to the last rank
 * and back: the message size at which MPI's shared-memory transports
 * switch to single-copy mechanisms (cross-memory attach, which some
 * containers forbid), so that a transport that cannot run here fails now,
 * with its own message, rather than in the middle of a test.
 *
 * mpi_ranks --library prints the first line of MPI_Get_library_version
 * instead (the benchmark scripts record it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

enum { BYTES = 1 << 20 };

static int exchange(int rank, int size)
{
    unsigned char *buf = malloc(BYTES);
    int ok = buf != NULL, last = size - 1;
    if (rank == 0) {
        for (int i = 0; i < BYTES; i++)
            buf[i] = (unsigned char)(i * 7 + 3);
        MPI_Send(buf, BYTES, MPI_BYTE, last, 1, MPI_COMM_WORLD);
        MPI_Recv(&ok, 1, MPI_INT, last, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == last) {
        MPI_Recv(buf, BYTES, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < BYTES && ok; i++)
            ok = buf[i] == (unsigned char)(i * 7 + 3);
        MPI_Send(&ok, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
    }
    free(buf);
    return ok;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && strcmp(argv[1], "--library") == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(version, &len);
        version[strcspn(version, "\n")] = '\0';
        if (rank == 0)
            printf("%s\n", version);
        MPI_Finalize();
        return 0;
    }
    int ok = size < 2 || exchange(rank, size);
    if (rank == 0) {
        if (ok)
            printf("mpi_ranks: %d\n", size);
        else
            printf("mpi_ranks: %d, but 1 MiB sent from rank 0 to rank %d arrived changed\n",
                   size, size - 1);
    }
    MPI_Finalize();
    return ok ? 0 : 1;
}
