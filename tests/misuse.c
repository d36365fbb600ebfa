/* misuse.c - a program that misuses libtcio on purpose, for tests/misuse.sh.
 *
 *   misuse DIR prepost      tcio_open before MPI_Init and after MPI_Finalize
 *                           must fail with TCIO_ERR_MPI (one rank)
 *   misuse DIR leave        write a file and leave it open at MPI_Finalize
 *                           (the script checks the warning)
 *   misuse DIR env          open and close a file (the script checks what
 *                           rank 0 printed about unknown TCIO_* variables)
 *   misuse DIR late CALL    the last rank enters CALL (open, close, flush,
 *                           session, sync or set_size) 1.5 s after the others; the others
 *                           report the processor time they spent waiting
 *                           in it, and fail if it is over half the time
 *   misuse DIR skip CALL    the last rank never calls CALL and sleeps
 *                           instead (TCIO_COLLECTIVE_TIMEOUT must end it);
 *                           CALL close_end: every rank calls
 *                           tcio_close_begin first
 *   misuse DIR skip CALL write
 *                           the same after every rank wrote 64 KiB blocks,
 *                           interleaved, over 4 MiB: on several nodes the
 *                           others' forwards at CALL need the last rank's
 *                           segments, and wait for it there
 *   misuse DIR busy         the last rank, an aggregator, computes for 4 s
 *                           outside MPI after the open while the others
 *                           write 64 KiB blocks over 32 MiB (on several
 *                           nodes their forwards wait for it inside
 *                           tcio_write_at, under MPICH), then every rank
 *                           meets in MPI_Barrier and closes: a long wait
 *                           outside a collective call, which
 *                           TCIO_COLLECTIVE_TIMEOUT must leave alone */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <mpi.h>
#include "tcio.h"

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* 64 KiB blocks, rank R's at blocks R, R + P, R + 2P, ... of BLOCKS. */
static void write_blocks(tcio_file *fh, int rank, int nprocs, int blocks)
{
    enum { BLOCK = 65536 };
    static unsigned char block[BLOCK];
    memset(block, 'a' + rank % 26, sizeof block);
    for (int b = rank; b < blocks; b += nprocs)
        if (tcio_write_at(fh, (MPI_Offset)b * BLOCK, block, BLOCK, MPI_BYTE) != TCIO_SUCCESS) {
            fprintf(stderr, "misuse: rank %d: tcio_write_at failed\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

static int call(tcio_file *fh, const char *name)
{
    if (strcmp(name, "flush") == 0)
        return tcio_flush(fh);
    if (strcmp(name, "session") == 0)
        return tcio_read_session(fh, 0, 100);
    if (strcmp(name, "sync") == 0)
        return tcio_sync(fh);
    if (strcmp(name, "set_size") == 0)
        return tcio_set_size(fh, 100);
    if (strcmp(name, "close_end") == 0)
        return tcio_close_end(fh);
    return tcio_close(fh);
}

/* tcio_open before MPI_Init and after MPI_Finalize: refused with
 * TCIO_ERR_MPI and a reason, no file made (MPI aborted the process at the
 * open's first call on the communicator). */
static int before_and_after(const char *dir, int *argc, char ***argv)
{
    char path[4096], why[TCIO_MAX_ERROR_STRING];
    snprintf(path, sizeof path, "%s/tcio-misuse-prepost", dir);
    unlink(path);
    int status = 0;
    for (int when = 0; when < 2; when++) {
        if (when == 1) {
            MPI_Init(argc, argv);
            MPI_Finalize();
        }
        tcio_file *fh = tcio_open(path, MPI_MODE_RDWR | MPI_MODE_CREATE);
        int code = tcio_last_error(why, (int)sizeof why);
        printf("misuse: tcio_open %s: %s, %s\n", when ? "after MPI_Finalize" : "before MPI_Init",
               fh ? "opened" : "refused", why);
        /* The reason names the call the program made. */
        status |= fh != NULL || code != TCIO_ERR_MPI || access(path, F_OK) == 0 ||
                  !strstr(why, "tcio_open: MPI ");
    }
    return status;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[2], "prepost") == 0)
        return before_and_after(argv[1], &argc, &argv);
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 3 || (strcmp(argv[2], "env") != 0 && strcmp(argv[2], "busy") != 0 &&
                     strcmp(argv[2], "self") != 0 && strcmp(argv[2], "leave") != 0 &&
                     argc < 4)) {
        if (rank == 0)
            fprintf(stderr, "usage: misuse DIR env | self | prepost | leave | late CALL | skip CALL [write] | "
                            "busy\n");
        MPI_Finalize();
        return 2;
    }
    char path[4096];
    if (strcmp(argv[2], "self") == 0) {
        /* Every rank's first file its own, on MPI_COMM_SELF, with a
         * misspelt info key: the script counts the warnings. */
        snprintf(path, sizeof path, "%s/tcio-misuse-self-%d", argv[1], rank);
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "tcio_segmentsize", "64k");
        tcio_file *own = NULL;
        int rc = tcio_open_comm(MPI_COMM_SELF, path, MPI_MODE_RDWR | MPI_MODE_CREATE |
                                MPI_MODE_DELETE_ON_CLOSE, info, &own);
        MPI_Info_free(&info);
        if (rc == TCIO_SUCCESS)
            rc = tcio_close(own);
        if (rc != TCIO_SUCCESS)
            fprintf(stderr, "misuse: rank %d: self: %s\n", rank, tcio_error_string(rc));
        MPI_Finalize();
        return rc != TCIO_SUCCESS;
    }
    snprintf(path, sizeof path, "%s/tcio-misuse-%s", argv[1], argv[2]);
    const int last = nprocs - 1;
    /* CALL open: the first open on MPI_COMM_WORLD, whose first collective
     * is the duplicate of the communicator. */
    bool at_open = argc >= 4 && strcmp(argv[3], "open") == 0;
    double wall = MPI_Wtime(), cpu = cpu_seconds();
    if (at_open && rank == last) {
        struct timespec late = { 1, 500000000 };
        if (strcmp(argv[2], "late") == 0)
            nanosleep(&late, NULL);
        else
            sleep(60);                  /* the others must give up first */
    }
    tcio_file *fh = NULL;
    int rc = tcio_open_comm(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE |
                            MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh);
    if (rc != TCIO_SUCCESS) {
        fprintf(stderr, "misuse: rank %d: tcio_open_comm: %s\n", rank, tcio_error_string(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int status = 0;
    if (at_open) {
        wall = MPI_Wtime() - wall;
        cpu = cpu_seconds() - cpu;
        if (rank != last && strcmp(argv[2], "late") == 0) {
            printf("misuse: rank %d waited %.2f s in open using %.2f s of processor time\n",
                   rank, wall, cpu);
            status = cpu > 0.5 * wall;
        }
        if (strcmp(argv[2], "skip") == 0)
            status = 1;                 /* not reached when the timeout works */
        tcio_close(fh);
    } else if (strcmp(argv[2], "late") == 0) {
        wall = MPI_Wtime();
        cpu = cpu_seconds();
        if (rank == last) {
            struct timespec late = { 1, 500000000 };
            nanosleep(&late, NULL);
        }
        rc = call(fh, argv[3]);
        wall = MPI_Wtime() - wall;
        cpu = cpu_seconds() - cpu;
        if (rank != last) {
            printf("misuse: rank %d waited %.2f s in %s using %.2f s of processor time\n",
                   rank, wall, argv[3], cpu);
            status = rc != TCIO_SUCCESS || cpu > 0.5 * wall;
        }
        if (strcmp(argv[3], "close") != 0)
            tcio_close(fh);
    } else if (strcmp(argv[2], "leave") == 0) {
        /* Left open: MPI_Finalize must say so, once, on the file's rank 0. */
        write_blocks(fh, rank, nprocs, 8);
        status = 0;
    } else if (strcmp(argv[2], "busy") == 0) {
        if (rank == last)
            sleep(4);                   /* longer than the test's timeout */
        else
            write_blocks(fh, rank, nprocs, 512);
        /* Where the forwards need nobody (Open MPI here), the others wait
         * here, outside the library, rather than in tcio_close's
         * collective step, which the timeout would rightly end. */
        MPI_Barrier(MPI_COMM_WORLD);
        rc = tcio_close(fh);
        status = rc != TCIO_SUCCESS;
    } else if (strcmp(argv[2], "skip") == 0) {
        if (argc >= 5 && strcmp(argv[4], "write") == 0)
            write_blocks(fh, rank, nprocs, 64);
        bool ends_close = strcmp(argv[3], "close_end") == 0;
        if (ends_close)
            tcio_close_begin(fh);       /* every rank: the last skips the end */
        if (rank == last)
            sleep(60);                  /* the others must give up first */
        rc = call(fh, argv[3]);
        if (strcmp(argv[3], "close") != 0 && !ends_close)
            tcio_close(fh);
        status = 1;                     /* not reached when the timeout works */
    } else {
        rc = tcio_close(fh);
        status = rc != TCIO_SUCCESS;
    }
    MPI_Finalize();
    return status;
}
