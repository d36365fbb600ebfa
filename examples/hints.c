/* hints.c - tuning libtcio from the program (MPI_Info) or from the
 * environment (TCIO_* variables, which win over the info keys), asking it
 * which settings it uses (tcio_get_info) and why an open failed
 * (tcio_last_error).
 *
 *   mpicc $(pkg-config --cflags tcio) hints.c -o hints $(pkg-config --libs tcio)
 *   mpiexec -n 4 ./hints out.dat
 *   TCIO_AGGREGATORS=2 mpiexec -n 4 ./hints out.dat    # the environment wins
 *
 * man tcio-config lists every setting. */
#include <stdio.h>
#include <mpi.h>
#include <tcio.h>

/* Rank 0 prints the tcio_* settings in effect and the MPI-IO hints. */
static void print_settings(tcio_file *f, int rank)
{
    MPI_Info info;
    if (tcio_get_info(f, &info) != TCIO_SUCCESS)
        return;
    int nkeys = 0;
    MPI_Info_get_nkeys(info, &nkeys);
    for (int i = 0; i < nkeys && rank == 0; i++) {
        char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
        int found = 0;
        MPI_Info_get_nthkey(info, i, key);
        MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &found);
        printf("  %-28s %s\n", key, value);
    }
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n P %s FILE\n", argv[0]);
        MPI_Finalize();
        return 2;
    }

    /* The settings a program chooses: 64 KiB segments, 4 of them per
     * aggregator, one aggregator, no early drain; striping_factor goes
     * on to MPI_File_open (Lustre, GPFS) like every key that is not
     * tcio_*. */
    MPI_Info hints;
    MPI_Info_create(&hints);
    MPI_Info_set(hints, "tcio_segment_size", "64k");
    MPI_Info_set(hints, "tcio_segments_per_proc", "4");
    MPI_Info_set(hints, "tcio_aggregators", "1");
    MPI_Info_set(hints, "tcio_early_drain", "off");
    MPI_Info_set(hints, "striping_factor", "4");

    tcio_file *f;
    int rc = tcio_open_comm(MPI_COMM_WORLD, argv[1],
                            MPI_MODE_WRONLY | MPI_MODE_CREATE | TCIO_MODE_TRUNC, hints, &f);
    if (rc == TCIO_SUCCESS) {
        if (rank == 0)
            printf("settings in effect for %s on %d ranks:\n", argv[1], nprocs);
        print_settings(f, rank);
        for (int i = 0; i < 1000 && rc == TCIO_SUCCESS; i++)   /* interleaved ints */
            rc = tcio_write_at(f, ((MPI_Offset)i * nprocs + rank) * (MPI_Offset)sizeof i, &i,
                               1, MPI_INT);
        int close_rc = tcio_close(f);
        if (rc == TCIO_SUCCESS)
            rc = close_rc;
    }

    /* A bad setting: the open fails on every rank, and says why. */
    MPI_Info_set(hints, "tcio_segment_size", "1.5M");
    int bad = tcio_open_comm(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, hints, &f);
    char why[TCIO_MAX_ERROR_STRING];
    tcio_last_error(why, sizeof why);
    if (rank == 0)
        printf("with tcio_segment_size=1.5M: %s\n  %s\n", tcio_error_string(bad), why);
    if (bad == TCIO_SUCCESS)   /* TCIO_SEGMENT_SIZE in the environment wins */
        tcio_close(f);
    MPI_Info_free(&hints);

    if (rc != TCIO_SUCCESS) {
        tcio_last_error(why, sizeof why);
        fprintf(stderr, "hints: %s\n", why);
    }
    MPI_Finalize();
    /* Success: the file was written and the bad setting was refused (unless
     * the environment overrides tcio_segment_size). */
    return rc == TCIO_SUCCESS && bad != TCIO_SUCCESS ? 0 : 1;
}
