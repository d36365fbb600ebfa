/* collective.c - waiting in the library's own collective steps, and the
 * agreement on an outcome that ends each of them.
 *
 * A blocking MPI collective spins: ranks that wait in tcio_close for a rank
 * that is late, or that skipped the call, keep their cores busy (and, on a
 * shared node, slow down the rank they wait for).  The library's own
 * agreements therefore use the nonblocking collectives and poll them:
 * yielding first (a collective whose ranks all arrive costs no sleep),
 * then sleeping 50 us per poll, and after 100 ms sleeping 1 ms, so
 * that a long wait costs little processor time while each poll still runs
 * MPI's progress engine for other ranks' one-sided moves; a rank whose
 * slots other ranks' moves reach only through its progress yields for the
 * first 100 ms and then keeps the 50-us sleeps (tci_collective_serve):
 * a 50-us nanosleep lasts about 150 us on a virtual machine, and every
 * round trip of a late rank's moves waits for one. */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "collective.h"
#include "configuration.h"
#include "error.h"
#include "tcio.h"

#define YIELD_POLLS      256
#define SHORT_SLEEP_NS   50000L
#define SHORT_SLEEP_TIME 0.1        /* seconds of short sleeps */
#define LONG_SLEEP_NS    1000000L

static const char *current_call = "tcio";
static bool in_call;

void tci_collective_enter(const char *call)
{
    current_call = call;
    in_call = true;
}

void tci_collective_leave(void)
{
    in_call = false;
}

/* TCIO_COLLECTIVE_TIMEOUT in seconds, 0 when unset or not a positive
 * number (read once; the first open says so of a value it cannot read:
 * tci_config_report_environment). */
static double timeout_seconds(void)
{
    static double seconds = -1;
    if (seconds < 0 && tci_parse_seconds(getenv(TCI_ENV_COLLECTIVE_TIMEOUT), &seconds) != 0)
        seconds = 0;
    return seconds;
}

static void pause_for(long ns)
{
    struct timespec t = { 0, ns };
    nanosleep(&t, NULL);
}

/* WHOM: what the rank waited for, and who did not come ("for the other
 * ranks of the file", "some rank did not call tcio_close"). */
static void give_up(double waited, const char *whom, const char *absent)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr,
            "libtcio: rank %d waited %.1f s in %s %s (TCIO_COLLECTIVE_TIMEOUT): %s; aborting\n",
            rank, waited, current_call, whom, absent);
    fflush(stderr);
    /* A pause before the abort: MPICH's launcher (hydra) dropped the line
     * above about one time in five when MPI_Abort killed the job at once,
     * leaving a user with an exit code and no reason. */
    sleep(1);
    /* MPI_COMM_WORLD, not the file's communicator: MPICH 4.0.2 spun for
     * ever in MPI_Abort on a duplicate of it while a shared window was
     * open on it (the shm transport's level 2 was one then), and aborting
     * the job is the point. */
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Whether a wait since START has outlasted TCIO_COLLECTIVE_TIMEOUT. */
static bool timed_out(double start)
{
    double limit = timeout_seconds();
    return limit > 0 && MPI_Wtime() - start > limit;
}

void tci_collective_check_timeout(double start)
{
    if (timed_out(start)) {
        double waited = MPI_Wtime() - start;
        char absent[200];
        /* The ending of a background close waits, before its agreement,
         * for the rank's own helper thread: a rank whose thread still
         * writes has called it. */
        bool ends_close = strstr(current_call, "tcio_close_end") != NULL;
        snprintf(absent, sizeof absent, "some rank did not call %s%s", current_call,
                 ends_close ? ", or its helper thread is still writing the file" : "");
        give_up(waited, "for the other ranks of the file", absent);
    }
}

/* RANK of COMM as a rank of MPI_COMM_WORLD, or -1. */
static int world_rank(MPI_Comm comm, int rank)
{
    MPI_Group group, world;
    int out = -1;
    if (MPI_Comm_group(comm, &group) != MPI_SUCCESS)
        return -1;
    if (MPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS) {
        if (MPI_Group_translate_ranks(group, 1, &rank, world, &out) != MPI_SUCCESS ||
            out == MPI_UNDEFINED)
            out = -1;
        MPI_Group_free(&world);
    }
    MPI_Group_free(&group);
    return out;
}

void tci_collective_check_wait(double start, MPI_Comm comm, int rank)
{
    if (!in_call || !timed_out(start))
        return;
    char whom[160], absent[200];
    int target = rank >= 0 ? world_rank(comm, rank) : -1;
    if (target >= 0) {
        snprintf(whom, sizeof whom, "for rank %d, whose MPI progress a one-sided operation "
                 "needs", target);
        snprintf(absent, sizeof absent, "rank %d did not call %s, or stays outside MPI",
                 target, current_call);
    } else if (rank >= 0) {           /* not in MPI_COMM_WORLD (a spawned job) */
        snprintf(whom, sizeof whom, "for rank %d of the file's communicator, whose MPI "
                 "progress a one-sided operation needs", rank);
        snprintf(absent, sizeof absent, "that rank did not call %s, or stays outside MPI",
                 current_call);
    } else {
        snprintf(whom, sizeof whom, "for a slot or lock another rank holds");
        snprintf(absent, sizeof absent, "some rank did not call %s, or stays outside MPI",
                 current_call);
    }
    give_up(MPI_Wtime() - start, whom, absent);
}

static int levels_served;

void tci_collective_serve(int delta)
{
    levels_served += delta;
}

bool tci_collective_serving(void)
{
    return levels_served > 0;
}

/* Seconds this process spent in tci_collective_wait after a first test
 * that found the collective unfinished: waiting for other ranks. */
static double seconds_waited;

double tci_collective_waited(void)
{
    return seconds_waited;
}

void tci_collective_note_waited(double seconds)
{
    seconds_waited += seconds;
}

int tci_collective_wait(MPI_Request *req)
{
    double start = MPI_Wtime();
    for (long polls = 0;; polls++) {
        int done = 0;
        int err = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        /* A test that failed may leave the operation running, with the
         * caller's buffers (or a communicator being duplicated) still
         * its: it is finished before the caller may free them. */
        if (err != MPI_SUCCESS && *req != MPI_REQUEST_NULL)
            MPI_Wait(req, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS || done) {
            if (polls > 0)
                seconds_waited += MPI_Wtime() - start;
            return err;
        }
        if (polls < YIELD_POLLS) {
            sched_yield();
            continue;
        }
        tci_collective_check_timeout(start);
        double waited = MPI_Wtime() - start;
        if (levels_served > 0 && waited < SHORT_SLEEP_TIME) {
            sched_yield();
            continue;
        }
        pause_for(waited < SHORT_SLEEP_TIME || levels_served > 0 ? SHORT_SLEEP_NS
                                                                  : LONG_SLEEP_NS);
    }
}

int tci_allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    MPI_Request req;
    int err = MPI_Iallreduce(in, out, count, type, op, comm, &req);
    return err != MPI_SUCCESS ? err : tci_collective_wait(&req);
}

int tci_barrier(MPI_Comm comm)
{
    MPI_Request req;
    int err = MPI_Ibarrier(comm, &req);
    return err != MPI_SUCCESS ? err : tci_collective_wait(&req);
}

int tci_agree(MPI_Comm comm, int rc)
{
    int all = rc;
    if (tci_allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return rc != TCIO_SUCCESS ? rc : TCIO_ERR_MPI;
    return all;
}

/* The end of every agreement on an outcome: GLOBAL is the largest code
 * of all ranks (ERR: the allreduce that found it failed, which is this
 * rank's own MPI failure: nothing says another rank failed). */
static int collective_outcome(MPI_Comm comm, int local, int64_t global, int err)
{
    if (err != MPI_SUCCESS)
        return local != TCIO_SUCCESS
                   ? local
                   : tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Iallreduce (the agreement on the "
                                                     "outcome)", err);
    if (global == TCIO_SUCCESS)
        return TCIO_SUCCESS;
    /* Every rank knows of the failure: the ranks whose part succeeded
     * learn which rank failed and why (one more collective, failures only). */
    tci_error_share_remote(comm, local);
    return local != TCIO_SUCCESS ? local : TCIO_ERR_REMOTE;
}

int tci_collective_result(MPI_Comm comm, int local)
{
    int global = local;
    int err = tci_allreduce(&local, &global, 1, MPI_INT, MPI_MAX, comm);
    return collective_outcome(comm, local, global, err);
}

int tci_collective_result_max(MPI_Comm comm, int local, int64_t *value)
{
    /* One allreduce for both: the codes are positive, so MPI_MAX serves
     * the outcome and the value alike. */
    int64_t in[2] = { local, *value }, out[2] = { local, *value };
    int err = tci_allreduce(in, out, 2, MPI_INT64_T, MPI_MAX, comm);
    if (err == MPI_SUCCESS)
        *value = out[1];
    return collective_outcome(comm, local, out[0], err);
}
