/* test_background.c - tcio_close_begin and tcio_close_end: the
 * close whose segments a helper thread writes while the program computes.
 *
 * The library's objects are linked in (libtcio_core) with pwrite wrapped:
 * the drain thread is the only caller of pwrite inside them (the library
 * writes through MPI-IO elsewhere, whose pwrite calls live in the MPI
 * library and are not wrapped), so the wrapper can hold the thread back
 * (a gate) or make it fail (ENOSPC), which makes the races of a background
 * drain deterministic.  Files are compared byte for byte with references
 * written with POSIX calls (testutil.c).
 *
 * After the suite, main ends with the case that cannot run inside it: a
 * close begun and never ended, which MPI_Finalize must complete. */
#define _GNU_SOURCE               /* pthread, nanosleep, strdup */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <check.h>
#include <mpi.h>
#include "tcio.h"
#include "testutil.h"

/* ---- the drain thread's pwrite ------------------------------------------------ */

static pthread_t main_thread;
static atomic_int  gate_closed;           /* the thread's pwrites wait while set */
static atomic_long gate_ms;               /* ... and open it after this long (0: after
                                             20 s, so that a failed test's teardown,
                                             which ends the close, cannot hang) */
static atomic_long fail_after = -1;       /* pwrites that succeed before ENOSPC (-1: all) */
static atomic_long fail_only = -1;        /* the one pwrite that fails with ENOSPC (-1: none) */
static atomic_long thread_pwrites;        /* pwrites the thread made */

ssize_t __real_pwrite(int fd, const void *buf, size_t n, off_t off);

ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (pthread_equal(pthread_self(), main_thread))
        return __real_pwrite(fd, buf, n, off);     /* the test's own references */
    for (long waited = 0; atomic_load(&gate_closed); waited++) {
        long limit = atomic_load(&gate_ms);
        if (waited >= (limit > 0 ? limit : 20000)) {
            atomic_store(&gate_closed, 0);
            break;
        }
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    long k = atomic_fetch_add(&thread_pwrites, 1);
    long fail = atomic_load(&fail_after);
    if ((fail >= 0 && k >= fail) || k == atomic_load(&fail_only)) {
        errno = ENOSPC;
        return -1;
    }
    return __real_pwrite(fd, buf, n, off);
}

/* Close the gate (it opens by itself LIMIT_MS after the thread first
 * waits at it; 0: 20 s, longer than any test waits), or open it. */
static void gate(int closed, long limit_ms)
{
    atomic_store(&gate_ms, limit_ms);
    atomic_store(&gate_closed, closed);
}

static void no_faults(void)
{
    gate(0, 0);
    atomic_store(&fail_after, -1);
    atomic_store(&fail_only, -1);
    atomic_store(&thread_pwrites, 0);
}

/* ---- helpers ---------------------------------------------------------------------- */

/* RC is WANT on every rank; a failure is explained by tcio_last_error
 * (CALL's first word is the public call that returned it). */
static void expect_all(int rc, int want, const char *ctx, const char *call)
{
    CHECK_ALL(rc == want, "%s: %s returned %d (%s), expected %d (%s)", ctx, call, rc,
              tcio_error_string(rc), want, tcio_error_string(want));
    if (want == TCIO_SUCCESS)
        return;
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(call, " ("), call);
    tu_status st;
    tu_status_init(&st);
    tu_expect_reason(&st, rc, name, NULL, ctx);
    CHECK_STATUS(st);
}

static void expect_files_equal(const char *got, const char *ref, const char *ctx)
{
    char why[400] = "";
    int ok = tu_rank != 0 || tu_compare_files(got, ref, why, sizeof why) == 0;
    CHECK_ALL(ok, "%s: file differs from the POSIX reference: %s", ctx, why);
}

/* Rank 0 (local): whether PATH equals REF now. */
static int same_now(const char *path, const char *ref)
{
    char why[200];
    return tu_compare_files(path, ref, why, sizeof why) == 0;
}

/* Write this rank's chunks of plan P with tcio_write_at. */
static int write_own(tcio_file *fh, const tu_plan *p)
{
    unsigned char *buf = NULL;
    size_t size = 0;
    int rc = TCIO_SUCCESS;
    for (size_t i = 0; i < p->n && rc == TCIO_SUCCESS; i++) {
        const tu_chunk *c = &p->chunks[i];
        if (c->owner != tu_rank)
            continue;
        if ((size_t)c->len > size) {
            free(buf);
            size = (size_t)c->len;
            if (!(buf = malloc(size)))
                return TCIO_ERR_NO_MEMORY;
        }
        tu_fill_pattern(buf, (size_t)c->len, c->seed);
        rc = tcio_write_at(fh, c->off, buf, (int)c->len, MPI_BYTE);
    }
    free(buf);
    return rc;
}

/* A plan of about TARGET bytes (times tu_scale) in pieces of at most
 * MAX_CHUNK bytes with gaps, and its reference file. */
static void plan_and_reference(tu_plan *p, uint64_t seed, int64_t target, int64_t max_chunk,
                               const char **ref, const char *ctx)
{
    tu_plan_random(p, seed, target * tu_scale(), max_chunk, max_chunk / 4, tu_nprocs);
    CHECK_ALL(p->n > 0, "%s: cannot build the plan", ctx);
    *ref = tu_path("bg-ref");
    CHECK_ALL(tu_plan_write_reference(p, *ref) == 0, "%s: cannot write the reference", ctx);
}

/* Open PATH for writing (created, truncated) with the settings KV on top of
 * segment size SEG and SPP slots per aggregator, write plan P. */
static tcio_file *open_and_write(const char *path, const char *seg, const char *spp,
                                 const char *const *kv, const tu_plan *p, const char *ctx)
{
    tcio_file *fh = NULL;
    expect_all(tu_open_kv(path, MPI_MODE_WRONLY | MPI_MODE_CREATE | TCIO_MODE_TRUNC, seg, spp,
                          kv, &fh), TCIO_SUCCESS, ctx, "tcio_open_comm");
    expect_all(write_own(fh, p), TCIO_SUCCESS, ctx, "tcio_write_at");
    return fh;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* About a millisecond of the program's own work: a sleep on even ranks, a
 * busy loop on odd ones.  No MPI call, no libtcio call. */
static void compute_a_little(void)
{
    if (tu_rank % 2 == 0) {
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
        return;
    }
    volatile double x = 1.0;
    double until = now() + 1e-3;
    while (now() < until)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
}

/* Between tcio_close_begin and tcio_close_end, every rank computes and
 * makes no MPI or libtcio call, while rank 0 watches the file with POSIX
 * reads until it equals REF (or TIMEOUT seconds pass) and then creates
 * MARKER, which ends the others' computing.  Returns (on every rank, after
 * agreeing) whether rank 0 saw the complete file: then the helper threads
 * wrote it without the application. */
static int compute_until_written(const char *path, const char *ref, double timeout)
{
    char marker[4200];
    snprintf(marker, sizeof marker, "%s.written", path);
    int seen = 0;
    double deadline = now() + timeout;
    if (tu_rank == 0) {
        while (!(seen = same_now(path, ref)) && now() < deadline)
            compute_a_little();
        int fd = open(marker, O_WRONLY | O_CREAT, 0644);
        if (fd >= 0)
            close(fd);
    } else {
        struct stat st;
        while (stat(marker, &st) != 0 && now() < deadline + 5)
            compute_a_little();
    }
    int all = tu_max_int(seen);
    if (tu_rank == 0)
        unlink(marker);
    return all;
}

/* ---- 1. round trips: the file complete while the program computes ------------------ */

typedef struct round_cfg {
    const char *seg, *spp;
    int64_t     target, max_chunk;
} round_cfg;

START_TEST(test_round_trip)
{
    TU_BEGIN();
    tu_clear_aggregation_env();
    no_faults();
    /* Segments that leave level 2 only at close; then a level 2 of 2
     * slots per aggregator that spills and drains early before the close;
     * then 64 KiB segments of small pieces (the thread sieves them). */
    static const round_cfg cfg[] = {
        { "4k", "64", 48 << 10, 3000 },
        { "1k", "2", 24 << 10, 700 },
        { "64k", "8", 96 << 10, 24 },
    };
    /* On several nodes shm is refused; mixed puts a shm tier per node in
     * front of rma aggregators, which the close settles before the thread
     * takes over. */
    const char *const transports[] = { "rma", tu_count_nodes() > 1 ? "mixed" : "shm" };
    if (tu_rank == 0)
        printf("round trips under %s and %s\n", transports[0], transports[1]);
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
            char ctx[200];
            snprintf(ctx, sizeof ctx, "round trip, transport %s, segment %s, %s slots",
                     transports[t], cfg[i].seg, cfg[i].spp);
            tu_plan p;
            const char *ref;
            plan_and_reference(&p, 1900 + 10 * (uint64_t)i + (uint64_t)t, cfg[i].target,
                               cfg[i].max_chunk, &ref, ctx);
            const char *path = tu_path("bg-round");
            const char *const kv[] = { "tcio_transport", transports[t], NULL };
            tcio_file *fh = open_and_write(path, cfg[i].seg, cfg[i].spp, kv, &p, ctx);
            expect_all(tu_close_begin(fh), TCIO_SUCCESS, ctx, "tcio_close_begin");
            int written = compute_until_written(path, ref, 30);
            expect_all(tu_close_end(fh), TCIO_SUCCESS, ctx, "tcio_close_end");
            CHECK_ALL(written, "%s: the file was not complete after 30 s of computing "
                      "between tcio_close_begin and tcio_close_end", ctx);
            expect_files_equal(path, ref, ctx);
            tu_plan_free(&p);
        }
}
END_TEST

/* ---- 2. tcio_close_begin returns before the file is written ----------------------- */

START_TEST(test_begin_returns_early)
{
    TU_BEGIN();
    tu_clear_aggregation_env();
    no_faults();
    const char *ctx = "the thread held back: tcio_close_begin returns, tcio_close_end waits";
    tu_plan p;
    const char *ref;
    plan_and_reference(&p, 1950, 32 << 10, 2000, &ref, ctx);
    const char *path = tu_path("bg-early");
    tcio_file *fh = open_and_write(path, "4k", "64", NULL, &p, ctx);
    gate(1, 0);                     /* no segment reaches the file until opened */
    expect_all(tu_close_begin(fh), TCIO_SUCCESS, ctx, "tcio_close_begin");
    CHECK_ALL(tu_rank != 0 || !same_now(path, ref),
              "%s: the file was complete when tcio_close_begin returned", ctx);
    CHECK_ALL(atomic_load(&thread_pwrites) == 0, "%s: the thread wrote through the gate", ctx);
    gate(0, 0);
    expect_all(tu_close_end(fh), TCIO_SUCCESS, ctx, "tcio_close_end");
    expect_files_equal(path, ref, ctx);
    tu_plan_free(&p);
}
END_TEST

/* ---- 3. reopening a file still draining ---------------------------------------------- */

/* NAME with "/./" before its last component: another name of the file,
 * so that the wait goes by the file's identity, not its spelling. */
static char *alias_of(const char *name)
{
    const char *slash = strrchr(name, '/');
    char *alias = malloc(strlen(name) + 3);
    if (!alias || !slash)
        return alias ? strcpy(alias, name) : NULL;
    size_t dir = (size_t)(slash - name);
    memcpy(alias, name, dir);
    strcpy(alias + dir, "/.");
    strcat(alias, slash);
    return alias;
}

#if !(defined(OPEN_MPI) && OPEN_MPI)
/* NAME with ROMIO's file-system prefix "ufs:", which MPICH opens as NAME
 * (Open MPI's ompio takes it as part of the name). */
static char *prefixed(const char *name)
{
    char *p = malloc(strlen(name) + 5);
    if (p) {
        strcpy(p, "ufs:");
        strcat(p, name);
    }
    return p;
}
#endif

/* The file written, its close begun with the thread held back for 300 ms,
 * then opened again under ALIAS(path) and read by every rank: the open
 * must wait for the thread. */
static void reopen_while_draining(const char *ctx, char *(*alias_for)(const char *))
{
    tu_plan p;
    const char *ref;
    plan_and_reference(&p, 1960, 32 << 10, 2000, &ref, ctx);
    int64_t size = p.end;
    unsigned char *want = tu_read_file(ref, &size);
    CHECK_ALL(want != NULL, "%s: cannot read the reference", ctx);
    const char *path = tu_path("bg-reopen");
    char *alias = alias_for(path);
    CHECK_ALL(alias != NULL, "out of memory");
    tcio_file *fh = open_and_write(path, "4k", "64", NULL, &p, ctx);
    /* The gate opens by itself after 300 ms: the open must wait for it. */
    gate(1, 300);
    expect_all(tu_close_begin(fh), TCIO_SUCCESS, ctx, "tcio_close_begin");
    tcio_file *rd = NULL;
    expect_all(tu_open(alias, MPI_MODE_RDONLY, "4k", "64", &rd), TCIO_SUCCESS, ctx,
               "tcio_open_comm of the file still closing");
    unsigned char *got = tu_zalloc((size_t)size);
    tu_status st;
    tu_status_init(&st);
    /* Every rank reads all of it. */
    tu_expect_rc(&st, tcio_read_at(rd, 0, got, (int)size, MPI_BYTE), TCIO_SUCCESS,
                 "%s: tcio_read_at", ctx);
    tu_expect_rc(&st, tcio_fetch(rd), TCIO_SUCCESS, "%s: tcio_fetch", ctx);
    tu_expect_mem(&st, got, want, (size_t)size, "%s: the bytes read back", ctx);
    CHECK_STATUS(st);
    expect_all(tu_close(rd), TCIO_SUCCESS, ctx, "tcio_close of the reader");
    expect_all(tu_close_end(fh), TCIO_SUCCESS, ctx, "tcio_close_end");
    expect_files_equal(path, ref, ctx);
    free(got);
    free(want);
    free(alias);
    tu_plan_free(&p);
}

START_TEST(test_reopen_while_draining)
{
    TU_BEGIN();
    tu_clear_aggregation_env();
    no_faults();
    reopen_while_draining("reopened (another spelling of its name) while the thread is held "
                          "back", alias_of);
#if defined(OPEN_MPI) && OPEN_MPI
    if (tu_rank == 0)
        printf("reopen_while_draining: Open MPI's ompio takes \"ufs:\" as part of the name: "
               "no reopen under the prefix\n");
#else
    reopen_while_draining("reopened under its name with the MPI-IO prefix ufs: while the "
                          "thread is held back", prefixed);
#endif
}
END_TEST

/* ---- 4. two files draining at once, a third opened meanwhile ----------------------- */

START_TEST(test_two_files)
{
    TU_BEGIN();
    tu_clear_aggregation_env();
    no_faults();
    const char *ctx = "two files draining at once, a third written meanwhile";
    tu_plan p[3];
    const char *ref[3], *path[3];
    tcio_file *fh[3];
    static const char *const segs[3] = { "4k", "1k", "2k" };
    for (int f = 0; f < 3; f++)
        plan_and_reference(&p[f], 1970 + (uint64_t)f, 24 << 10, 1500, &ref[f], ctx);
    for (int f = 0; f < 2; f++) {
        path[f] = tu_path("bg-two");
        fh[f] = open_and_write(path[f], segs[f], "64", NULL, &p[f], ctx);
    }
    gate(1, 100);
    expect_all(tu_close_begin(fh[0]), TCIO_SUCCESS, ctx, "tcio_close_begin A");
    expect_all(tu_close_begin(fh[1]), TCIO_SUCCESS, ctx, "tcio_close_begin B");
    /* Another file on the communicator of both: it waits for neither. */
    path[2] = tu_path("bg-third");
    double t0 = now();
    fh[2] = open_and_write(path[2], segs[2], "64", NULL, &p[2], ctx);
    expect_all(tu_close(fh[2]), TCIO_SUCCESS, ctx, "tcio_close C");
    double third = now() - t0;
    for (int k = 0; k < 200; k++)
        compute_a_little();
    expect_all(tu_close_end(fh[1]), TCIO_SUCCESS, ctx, "tcio_close_end B");
    expect_all(tu_close_end(fh[0]), TCIO_SUCCESS, ctx, "tcio_close_end A");
    for (int f = 0; f < 3; f++) {
        expect_files_equal(path[f], ref[f], ctx);
        tu_plan_free(&p[f]);
    }
    if (tu_rank == 0)
        printf("%s: the third file took %.3f s (the thread was held back 0.1 s)\n", ctx, third);
}
END_TEST

/* ---- 5. tcio_background_memory --------------------------------------------------------- */

/* Rank 0: segments of SEG bytes in which PATH and REF differ. */
static int differing_segments(const char *path, const char *ref, int64_t seg)
{
    int64_t a_size, b_size;
    unsigned char *a = tu_read_file(path, &a_size), *b = tu_read_file(ref, &b_size);
    int n = 0;
    int64_t end = a_size > b_size ? a_size : b_size;
    for (int64_t s = 0; a && b && s < end; s += seg)
        for (int64_t i = s; i < s + seg && i < end; i++) {
            unsigned char x = i < a_size ? a[i] : 0, y = i < b_size ? b[i] : 0;
            if (x != y) {
                n++;
                break;
            }
        }
    free(a);
    free(b);
    return a && b ? n : -1;
}

/* Collective: whether rank 0 and the last rank are on one node (as
 * tu_node_comm sees nodes). */
static bool first_and_last_share_a_node(void)
{
    MPI_Comm node = tu_node_comm();
    int lowest = tu_rank;          /* the lowest rank of this rank's node */
    MPI_Allreduce(&tu_rank, &lowest, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    MPI_Bcast(&lowest, 1, MPI_INT, tu_nprocs - 1, MPI_COMM_WORLD);
    return lowest == 0;
}

START_TEST(test_background_memory)
{
    TU_BEGIN();
    tu_clear_aggregation_env();
    no_faults();
    int aggregators = tu_nprocs < 2 ? 1 : 2;
    char one_each[32], placement[32];
    snprintf(one_each, sizeof one_each, "%d", aggregators * 4096);
    /* The first and the last rank aggregate.  tcio_background_memory is a
     * node's, split by its aggregators: on one node each may keep one
     * segment for the thread; on several nodes (tests/background.sh runs
     * two) they are on different nodes and each may keep two. */
    snprintf(placement, sizeof placement, "0,%d", tu_nprocs - 1);
    int per_aggregator = aggregators > 1 && !first_and_last_share_a_node() ? aggregators : 1;
    /* 0: no thread (the gate never opens: the thread must not be used);
     * one segment per aggregator: the others are written in the begin. */
    static const char *const limits[2] = { "0", NULL };
    for (int k = 0; k < 2; k++) {
        const char *limit = limits[k] ? limits[k] : one_each;
        char ctx[160];
        snprintf(ctx, sizeof ctx, "tcio_background_memory=%s, %d aggregator(s)", limit,
                 aggregators);
        tu_plan p;
        const char *ref;
        plan_and_reference(&p, 1980 + (uint64_t)k, 48 << 10, 2000, &ref, ctx);
        const char *path = tu_path("bg-memory");
        const char *const kv[] = { "tcio_background_memory", limit,
                                   "tcio_aggregator_placement", aggregators > 1 ? placement : "0",
                                   "tcio_early_drain", "off", NULL };
        tcio_file *fh = open_and_write(path, "4k", "64", kv, &p, ctx);
        gate(1, 0);
        expect_all(tu_close_begin(fh), TCIO_SUCCESS, ctx, "tcio_close_begin");
        int differ = tu_rank == 0 ? differing_segments(path, ref, 4096) : 0;
        int most = k == 0 ? 0 : aggregators * per_aggregator;
        CHECK_ALL(tu_rank != 0 || (differ >= (k == 0 ? 0 : 1) && differ <= most),
                  "%s: after tcio_close_begin %d segment(s) of the file were missing, "
                  "expected %s%d", ctx, differ, k == 0 ? "" : "1 to ", most);
        gate(0, 0);
        expect_all(tu_close_end(fh), TCIO_SUCCESS, ctx, "tcio_close_end");
        expect_files_equal(path, ref, ctx);
        tu_plan_free(&p);
    }
}
END_TEST

/* ---- 6. the drain fails: every rank hears of it at tcio_close_end ----------------------- */

START_TEST(test_drain_failure)
{
    TU_BEGIN();
    tu_clear_aggregation_env();
    no_faults();
    const char *ctx = "the thread's writes fail with ENOSPC after the first";
    tu_plan p;
    const char *ref;
    plan_and_reference(&p, 1990, 48 << 10, 2000, &ref, ctx);
    const char *path = tu_path("bg-fail");
    const char *const kv[] = { "tcio_early_drain", "off", NULL };
    tcio_file *fh = open_and_write(path, "4k", "64", kv, &p, ctx);
    atomic_store(&thread_pwrites, 0);
    atomic_store(&fail_after, 1);
    expect_all(tu_close_begin(fh), TCIO_SUCCESS, ctx, "tcio_close_begin");
    int rc = tu_close_end(fh);
    char why[TCIO_MAX_ERROR_STRING];
    tcio_last_error(why, sizeof why);
    no_faults();
    CHECK_ALL(rc == TCIO_ERR_NO_SPACE || rc == TCIO_ERR_REMOTE,
              "%s: tcio_close_end returned %d (%s), expected NO_SPACE or REMOTE", ctx, rc,
              tcio_error_string(rc));
    CHECK_ALL(tu_sum_int(rc == TCIO_ERR_NO_SPACE) >= 1, "%s: no rank reported NO_SPACE", ctx);
    CHECK_ALL(rc != TCIO_ERR_NO_SPACE || strstr(why, "background drain") != NULL,
              "%s: tcio_last_error says \"%s\"", ctx, why);
    /* Nothing else is touched: every byte of the file is the one written
     * or, where a write failed, still zero. */
    int ok = 1;
    if (tu_rank == 0) {
        int64_t got_size, want_size;
        unsigned char *got = tu_read_file(path, &got_size), *want = tu_read_file(ref, &want_size);
        ok = got && want && got_size <= want_size;
        for (int64_t i = 0; ok && i < got_size; i++)
            ok = got[i] == want[i] || got[i] == 0;
        free(got);
        free(want);
    }
    CHECK_ALL(ok, "%s: the file holds bytes that were never written", ctx);

    /* Only the thread's first write fails, the later ones succeed: the
     * failure is still every rank's at tcio_close_end (a mutation audit:
     * a later success overwrote the failure of the job's first slot, and
     * the close reported success with a segment missing from the file). */
    ctx = "only the thread's first write fails";
    fh = open_and_write(path, "4k", "64", kv, &p, ctx);
    atomic_store(&thread_pwrites, 0);
    atomic_store(&fail_only, 0);
    expect_all(tu_close_begin(fh), TCIO_SUCCESS, ctx, "tcio_close_begin");
    rc = tu_close_end(fh);
    int failed_writes = atomic_load(&thread_pwrites) > 0;
    no_faults();
    CHECK_ALL(rc == TCIO_ERR_NO_SPACE || rc == TCIO_ERR_REMOTE,
              "%s: tcio_close_end returned %d (%s), expected NO_SPACE or REMOTE", ctx, rc,
              tcio_error_string(rc));
    CHECK_ALL(tu_sum_int(failed_writes) >= 1, "%s: the thread wrote nothing", ctx);
    tu_plan_free(&p);
}
END_TEST

/* ---- 7. a closing handle accepts only tcio_close_end ------------------------------------ */

START_TEST(test_closing_handle)
{
    TU_BEGIN();
    tu_clear_aggregation_env();
    no_faults();
    const char *ctx = "a closing handle";
    const char *path = tu_path("bg-misuse");
    tcio_file *fh = NULL;
    expect_all(tu_open(path, MPI_MODE_RDWR | MPI_MODE_CREATE, "4k", "4", &fh), TCIO_SUCCESS,
               ctx, "tcio_open_comm");
    char byte = 'x', why[TCIO_MAX_ERROR_STRING];
    expect_all(tcio_write_at(fh, tu_rank, &byte, 1, MPI_BYTE), TCIO_SUCCESS, ctx, "tcio_write_at");
    /* tcio_close_end before tcio_close_begin: refused, the handle stays open. */
    expect_all(tcio_close_end(fh), TCIO_ERR_BAD_HANDLE, ctx, "tcio_close_end of an open handle");
    tcio_last_error(why, sizeof why);
    CHECK_ALL(strstr(why, "tcio_close_begin must come first") != NULL,
              "%s: tcio_last_error says \"%s\"", ctx, why);
    expect_all(tcio_write_at(fh, tu_nprocs + tu_rank, &byte, 1, MPI_BYTE), TCIO_SUCCESS, ctx,
               "tcio_write_at after the refused tcio_close_end");
    expect_all(tu_close_begin(fh), TCIO_SUCCESS, ctx, "tcio_close_begin");
    MPI_Offset off = 0;
    MPI_Info info = MPI_INFO_NULL;
    expect_all(tcio_write_at(fh, 0, &byte, 1, MPI_BYTE), TCIO_ERR_BAD_HANDLE, ctx, "tcio_write_at");
    expect_all(tcio_read_at(fh, 0, &byte, 1, MPI_BYTE), TCIO_ERR_BAD_HANDLE, ctx, "tcio_read_at");
    expect_all(tcio_seek(fh, off, MPI_SEEK_SET), TCIO_ERR_BAD_HANDLE, ctx, "tcio_seek");
    expect_all(tcio_fetch(fh), TCIO_ERR_BAD_HANDLE, ctx, "tcio_fetch");
    expect_all(tcio_progress(fh), TCIO_ERR_BAD_HANDLE, ctx, "tcio_progress");
    expect_all(tcio_get_info(fh, &info), TCIO_ERR_BAD_HANDLE, ctx, "tcio_get_info");
    expect_all(tcio_flush(fh), TCIO_ERR_BAD_HANDLE, ctx, "tcio_flush");
    expect_all(tcio_get_size(fh, &off), TCIO_ERR_BAD_HANDLE, ctx, "tcio_get_size");
    expect_all(tcio_set_size(fh, 0), TCIO_ERR_BAD_HANDLE, ctx, "tcio_set_size");
    tcio_last_error(why, sizeof why);
    CHECK_ALL(strstr(why, "closing") != NULL, "%s: tcio_last_error says \"%s\"", ctx, why);
    expect_all(tcio_sync(fh), TCIO_ERR_BAD_HANDLE, ctx, "tcio_sync");
    tcio_last_error(why, sizeof why);
    CHECK_ALL(strstr(why, "closing") != NULL, "%s: tcio_last_error says \"%s\"", ctx, why);
    expect_all(tcio_close_begin(fh), TCIO_ERR_BAD_HANDLE, ctx, "tcio_close_begin again");
    expect_all(tcio_close(fh), TCIO_ERR_BAD_HANDLE, ctx, "tcio_close");
    tcio_last_error(why, sizeof why);
    CHECK_ALL(strstr(why, "closing") != NULL, "%s: tcio_last_error says \"%s\"", ctx, why);
    expect_all(tu_close_end(fh), TCIO_SUCCESS, ctx, "tcio_close_end");
    expect_all(tcio_close_end(NULL), TCIO_ERR_BAD_HANDLE, ctx, "tcio_close_end(NULL)");
    expect_all(tcio_close_begin(NULL), TCIO_ERR_BAD_HANDLE, ctx, "tcio_close_begin(NULL)");
    int ok = 1;
    if (tu_rank == 0) {
        int64_t size;
        unsigned char *got = tu_read_file(path, &size);
        ok = got && size == 2 * tu_nprocs;
        for (int64_t i = 0; ok && i < size; i++)
            ok = got[i] == 'x';
        free(got);
    }
    CHECK_ALL(ok, "%s: the file does not hold the two bytes of every rank", ctx);
}
END_TEST

/* ---- 8. a file renamed and replaced before the close: never written by name ------------ */

START_TEST(test_renamed_file)
{
    TU_BEGIN();
    tu_clear_aggregation_env();
    no_faults();
    const char *ctx = "renamed and replaced by another file before tcio_close_begin";
    tu_plan p;
    const char *ref;
    plan_and_reference(&p, 1995, 24 << 10, 1500, &ref, ctx);
    const char *path = tu_path("bg-renamed"), *moved = tu_path("bg-moved");
    tcio_file *fh = open_and_write(path, "4k", "64", NULL, &p, ctx);
    unsigned char decoy[100];
    memset(decoy, 'd', sizeof decoy);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tu_rank == 0) {
        CHECK_ALL(rename(path, moved) == 0 && tu_posix_create(path, decoy, sizeof decoy) == 0,
                  "%s: rename", ctx);
    } else {
        CHECK_ALL(1, "%s", ctx);
    }
    /* The thread cannot reach the file by its name: tcio_close_begin
     * writes it with MPI-IO (the gate would hold the thread forever). */
    gate(1, 0);
    expect_all(tu_close_begin(fh), TCIO_SUCCESS, ctx, "tcio_close_begin");
    gate(0, 0);
    expect_all(tu_close_end(fh), TCIO_SUCCESS, ctx, "tcio_close_end");
    expect_files_equal(moved, ref, ctx);
    char why[300] = "";
    int ok = tu_rank != 0 || tu_compare_file_mem(path, decoy, sizeof decoy, why, sizeof why) == 0;
    CHECK_ALL(ok, "%s: the file now at the old name was changed: %s", ctx, why);
    tu_plan_free(&p);
}
END_TEST

/* ---- 9. names with an MPI-IO prefix (ROMIO: MPICH only) --------------------------------- */

/* The file a name with a ROMIO prefix opens is the one the thread writes:
 * "ufs:" + a path is drained by the thread into the path; where both
 * "ufs:x" and "x" exist (ROMIO opens x) or the prefix's driver is not the
 * operating system's file system ("testfs:", which writes nothing), the
 * thread never writes the file of the bare name. */
START_TEST(test_prefixed_names)
{
    TU_BEGIN();
    tu_clear_aggregation_env();
    no_faults();
#if defined(OPEN_MPI) && OPEN_MPI
    if (tu_rank == 0)
        printf("prefixed_names: Open MPI's ompio takes a prefix as part of the name: skipped\n");
#else
    const char *ctx = "opened as ufs:PATH";
    tu_plan p;
    const char *ref;
    plan_and_reference(&p, 2031, 24 << 10, 1500, &ref, ctx);
    const char *path = tu_path("bg-prefixed");
    char name[4200];
    snprintf(name, sizeof name, "ufs:%s", path);
    tcio_file *fh = open_and_write(name, "4k", "64", NULL, &p, ctx);
    expect_all(tu_close_begin(fh), TCIO_SUCCESS, ctx, "tcio_close_begin");
    expect_all(tu_close_end(fh), TCIO_SUCCESS, ctx, "tcio_close_end");
    expect_files_equal(path, ref, ctx);
    CHECK_ALL(tu_sum_int((int)atomic_load(&thread_pwrites)) > 0,
              "%s: the helper thread wrote nothing", ctx);
    tu_plan_free(&p);

    /* Both "ufs:x" (a decoy) and x, relative names in the test directory. */
    ctx = "opened as ufs:x where a file named ufs:x exists too";
    no_faults();
    plan_and_reference(&p, 2032, 24 << 10, 1500, &ref, ctx);
    const char *bare_path = tu_path("bg-ambiguous");
    const char *bare = strrchr(bare_path, '/') + 1;
    char here[4096], literal[4200];
    CHECK_ALL(getcwd(here, sizeof here) != NULL && chdir(tu_dir()) == 0, "%s: chdir", ctx);
    snprintf(literal, sizeof literal, "ufs:%s", bare);
    unsigned char decoy[100];
    memset(decoy, 'd', sizeof decoy);
    CHECK_ALL(tu_rank != 0 || tu_posix_create(literal, decoy, sizeof decoy) == 0,
              "%s: the decoy", ctx);
    fh = open_and_write(literal, "4k", "64", NULL, &p, ctx);
    expect_all(tu_close_begin(fh), TCIO_SUCCESS, ctx, "tcio_close_begin");
    expect_all(tu_close_end(fh), TCIO_SUCCESS, ctx, "tcio_close_end");
    char why[300] = "";
    int ok = tu_rank != 0 || tu_compare_file_mem(literal, decoy, sizeof decoy, why, sizeof why) == 0;
    if (tu_rank == 0)
        unlink(literal);
    int back = chdir(here) == 0;
    CHECK_ALL(ok, "%s: the decoy ufs:x was written: %s", ctx, why);
    CHECK_ALL(back, "%s: chdir back", ctx);
    expect_files_equal(bare_path, ref, ctx);
    tu_plan_free(&p);

    /* ROMIO's testfs driver writes nothing: the file of the bare name stays
     * as it was.  (An MPICH built without that driver refuses the name:
     * skipped.) */
    ctx = "opened as testfs:PATH";
    no_faults();
    plan_and_reference(&p, 2033, 2 << 10, 500, &ref, ctx);
    const char *target = tu_path("bg-testfs");
    CHECK_ALL(tu_rank != 0 || tu_posix_create(target, decoy, sizeof decoy) == 0,
              "%s: the decoy", ctx);
    snprintf(name, sizeof name, "testfs:%s", target);
    fh = NULL;
    int rc = tu_open_kv(name, MPI_MODE_WRONLY | MPI_MODE_CREATE | TCIO_MODE_TRUNC, "4k", "64",
                        NULL, &fh);
    if (tu_max_int(rc != TCIO_SUCCESS)) {
        if (fh)
            tu_close(fh);
        if (tu_rank == 0)
            printf("prefixed_names: this MPI refuses testfs: names: that part skipped\n");
        tu_plan_free(&p);
        return;
    }
    expect_all(write_own(fh, &p), TCIO_SUCCESS, ctx, "tcio_write_at");
    expect_all(tu_close_begin(fh), TCIO_SUCCESS, ctx, "tcio_close_begin");
    expect_all(tu_close_end(fh), TCIO_SUCCESS, ctx, "tcio_close_end");
    ok = tu_rank != 0 || tu_compare_file_mem(target, decoy, sizeof decoy, why, sizeof why) == 0;
    CHECK_ALL(ok, "%s: the file of the bare name was written: %s", ctx, why);
    tu_plan_free(&p);
#endif
}
END_TEST

/* A file opened with MPI_MODE_DELETE_ON_CLOSE is written by the begin
 * itself, never by the thread (rank 0 deletes it at the begin), and is
 * gone after the end. */
START_TEST(test_delete_on_close)
{
    TU_BEGIN();
    tu_clear_aggregation_env();
    no_faults();
    const char *ctx = "MPI_MODE_DELETE_ON_CLOSE";
    tu_plan p;
    const char *ref;
    plan_and_reference(&p, 2024, 24 << 10, 1500, &ref, ctx);
    const char *path = tu_path("bg-delete");
    tcio_file *fh = NULL;
    expect_all(tu_open_kv(path, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                          "4k", "64", NULL, &fh), TCIO_SUCCESS, ctx, "tcio_open_comm");
    expect_all(write_own(fh, &p), TCIO_SUCCESS, ctx, "tcio_write_at");
    gate(1, 200);     /* a thread that got slots would be held, and counted */
    expect_all(tu_close_begin(fh), TCIO_SUCCESS, ctx, "tcio_close_begin");
    gate(0, 0);
    expect_all(tu_close_end(fh), TCIO_SUCCESS, ctx, "tcio_close_end");
    long pwrites = atomic_load(&thread_pwrites);
    CHECK_ALL(pwrites == 0, "%s: the drain thread wrote %ld times", ctx, pwrites);
    CHECK_ALL(tu_rank != 0 || tu_file_size(path) < 0, "%s: the file still exists", ctx);
    tu_plan_free(&p);
}
END_TEST

/* ---- 9. the setting: parsed, refused, reported ---------------------------------------- */

START_TEST(test_setting)
{
    TU_BEGIN();
    tu_clear_aggregation_env();
    no_faults();
    const char *ctx = "tcio_background_memory";
    const char *path = tu_path("bg-setting");
    static const struct { const char *value; int rc; long long shown; } cases[] = {
        { "64k", TCIO_SUCCESS, 65536 }, { "0", TCIO_SUCCESS, 0 }, { NULL, TCIO_SUCCESS, -1 },
        { "-1", TCIO_ERR_BAD_CONFIG, 0 }, { "1.5M", TCIO_ERR_BAD_CONFIG, 0 },
        { "", TCIO_ERR_BAD_CONFIG, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char what[96];
        snprintf(what, sizeof what, "%s=\"%s\" (environment)", ctx,
                 cases[i].value ? cases[i].value : "(unset)");
        if (cases[i].value)
            setenv("TCIO_BACKGROUND_MEMORY", cases[i].value, 1);
        else
            unsetenv("TCIO_BACKGROUND_MEMORY");
        tcio_file *fh = NULL;
        int rc = tu_open(path, MPI_MODE_RDWR | MPI_MODE_CREATE, "4k", "4", &fh);
        unsetenv("TCIO_BACKGROUND_MEMORY");
        expect_all(rc, cases[i].rc, what, "tcio_open_comm");
        if (rc != TCIO_SUCCESS)
            continue;
        MPI_Info info = MPI_INFO_NULL;
        char value[MPI_MAX_INFO_VAL + 1] = "";
        int found = 0;
        expect_all(tcio_get_info(fh, &info), TCIO_SUCCESS, what, "tcio_get_info");
        MPI_Info_get(info, "tcio_background_memory", MPI_MAX_INFO_VAL, value, &found);
        MPI_Info_free(&info);
        long long shown = found ? atoll(value) : -2;
        CHECK_ALL(cases[i].shown >= 0 ? shown == cases[i].shown : shown > 0,
                  "%s: tcio_get_info shows tcio_background_memory=%s", what, value);
        expect_all(tu_close(fh), TCIO_SUCCESS, what, "tcio_close");
    }
}
END_TEST

/* ---- after the suite: MPI_Finalize ends a close never ended ------------------------------ */

/* Begin the close of a file while the thread is held back for 200 ms and
 * call MPI_Finalize without tcio_close_end: the file must be complete
 * afterwards.  Returns 0 if it is (on rank 0; the others return 0). */
static int finalize_while_draining(void)
{
    char path[4096], ref[4200];
    snprintf(path, sizeof path, "%s/tcio-test-background-finalize-%d", tu_dir(), tu_nprocs);
    snprintf(ref, sizeof ref, "%s.ref", path);
    tu_plan p;
    tu_plan_random(&p, 1999, 32 << 10, 2000, 500, tu_nprocs);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tu_rank == 0)
        unlink(ref);
    int ok = tu_plan_write_reference(&p, ref) == 0;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "tcio_segment_size", "4k");
    tcio_file *fh = NULL;
    ok = ok && tcio_open_comm(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_CREATE |
                              TCIO_MODE_TRUNC, info, &fh) == TCIO_SUCCESS;
    MPI_Info_free(&info);
    ok = ok && write_own(fh, &p) == TCIO_SUCCESS;
    gate(1, 200);
    ok = ok && tcio_close_begin(fh) == TCIO_SUCCESS;
    tu_plan_free(&p);
    MPI_Finalize();
    if (tu_rank != 0)
        return 0;
    int same = ok && same_now(path, ref);
    printf("test_background: MPI_Finalize with a close begun and not ended: %s\n",
           same ? "the file is complete" : "FAILED: the file is not complete");
    unlink(path);
    unlink(ref);
    return same ? 0 : 1;
}

int main(int argc, char **argv)
{
    main_thread = pthread_self();
    MPI_Init(&argc, &argv);
    tu_init();
    Suite *s = suite_create("background close");
    tu_add_case(s, "round_trip", test_round_trip);
    tu_add_case(s, "begin_returns_early", test_begin_returns_early);
    tu_add_case(s, "reopen_while_draining", test_reopen_while_draining);
    tu_add_case(s, "two_files", test_two_files);
    tu_add_case(s, "background_memory", test_background_memory);
    tu_add_case(s, "drain_failure", test_drain_failure);
    tu_add_case(s, "closing_handle", test_closing_handle);
    tu_add_case(s, "renamed_file", test_renamed_file);
    tu_add_case(s, "prefixed_names", test_prefixed_names);
    tu_add_case(s, "delete_on_close", test_delete_on_close);
    tu_add_case(s, "setting", test_setting);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    if (tu_rank == 0)
        printf("test_background: %d rank(s), files in %s\n", tu_nprocs, tu_dir());
    fflush(stdout);
    srunner_run_all(sr, tu_rank == 0 ? CK_ENV : CK_SILENT);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    int any = tu_max_int(failed);
    int finalize_failed = finalize_while_draining();   /* calls MPI_Finalize */
    return any || finalize_failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
