/* testutil.h - helpers for the MPI integration tests of libtcio: a small
 * PRNG, per-run temporary paths, POSIX reference files, byte comparisons,
 * collective assertions and bookkeeping of open tcio handles.
 *
 * Every assertion in tests/test_mpi.c goes through CHECK_ALL: the ranks first
 * agree (MPI_Allreduce) on whether the condition held everywhere, so either
 * every rank passes or every rank fails at the same point.  A test function
 * therefore never leaves one rank waiting in a collective call that the
 * others skipped. */
#ifndef TCIO_TESTUTIL_H
#define TCIO_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <check.h>
#include <mpi.h>
#include "tcio.h"

/* ---- PRNG (splitmix64): identical seeds give identical streams ---------- */

typedef struct tu_rng {
    uint64_t state;
} tu_rng;

void     tu_rng_seed(tu_rng *r, uint64_t seed);
uint64_t tu_rng_next(tu_rng *r);
/* Uniform in [0, n), n > 0. */
uint64_t tu_rng_below(tu_rng *r, uint64_t n);
/* Uniform in [lo, hi] (inclusive). */
int64_t  tu_rng_range(tu_rng *r, int64_t lo, int64_t hi);
/* Fisher-Yates shuffle of N size_t values. */
void     tu_shuffle(tu_rng *r, size_t *a, size_t n);
/* Mix several values into one seed. */
uint64_t tu_mix(uint64_t a, uint64_t b);

/* LEN bytes of the pseudo-random stream named SEED. */
void tu_fill_pattern(void *buf, size_t len, uint64_t seed);

/* ---- MPI context ---------------------------------------------------------- */

extern int tu_rank;
extern int tu_nprocs;

/* After MPI_Init: rank, size, rank 0's pid and the test directory. */
void tu_init(void);

/* 1 when some node runs more ranks than it has processors (the same answer
 * on every rank).  Each lock epoch on another rank's window then waits for
 * the scheduler (about 10 ms), so the tests shrink their data: sizes and
 * counts are multiplied by tu_scale(), 1 when oversubscribed, else 8.
 * TCIO_TEST_FULL=1 forces the full sizes. */
int tu_oversubscribed(void);
int64_t tu_scale(void);

/* The name of the running test (for timeouts and messages). */
void tu_set_test_name(const char *name);
#define TU_BEGIN() tu_set_test_name(__func__)

/* Checked fixture: arms a watchdog (TCIO_TEST_TIMEOUT seconds, default 120)
 * that kills a hung run with a message; the teardown closes tcio handles a
 * failed test left open (collectively: failures are agreed), removes the
 * test's files, unsets TCIO_SEGMENT_SIZE / TCIO_SEGMENTS_PER_PROC (which
 * tu_init also clears: the tests set them themselves) and restores the
 * aggregation variables below. */
/* Add test TEST to S as a case of its own named NAME, tagged NAME (so
 * that CK_INCLUDE_TAGS="a b" runs several cases) and run between
 * tu_setup and tu_teardown. */
void tu_add_case(Suite *s, const char *name, const TTest *test);

void tu_setup(void);
void tu_teardown(void);

/* The aggregation variables TCIO_AGGREGATORS, TCIO_AGGREGATOR_PLACEMENT,
 * TCIO_EARLY_DRAIN and TCIO_STATS are left as the run was started: they
 * select the configuration of the test matrix (tests/mpi-agg.sh), under
 * which every test must pass.  A test that sets them itself first calls
 * tu_clear_aggregation_env(); the teardown restores the values of the
 * start.  tu_aggregation_env() describes them ("" when none is set). */
void tu_clear_aggregation_env(void);
const char *tu_aggregation_env(void);

/* TCIO_TEST_PREFETCH=local or session makes the data tests declare ranges
 * before they read back, some that they read and some that they do not,
 * with tcio_prefetch or tcio_read_session (tests/mpi-agg.sh sets it).
 * Read once by tu_init and included in tu_aggregation_env(). */
typedef enum tu_prefetch_mode {
    TU_PREFETCH_OFF, TU_PREFETCH_LOCAL, TU_PREFETCH_SESSION
} tu_prefetch_mode;
tu_prefetch_mode tu_prefetch(void);

/* ---- collective assertions ------------------------------------------------ */

/* Agree on OK across all ranks.  Returns 1 when every rank passed OK != 0.
 * Otherwise MSG receives the message (formatted from FMT on the lowest
 * failing rank) prefixed with that rank and the number of failing ranks. */
#if defined(__GNUC__)
#define TU_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TU_PRINTF(f, a)
#endif
int tu_agree(int ok, char *msg, size_t msgsize, const char *fmt, ...) TU_PRINTF(4, 5);

#define CHECK_ALL(ok, ...)                                                    \
    do {                                                                      \
        char tu_msg_[768];                                                    \
        int tu_all_ = tu_agree((ok), tu_msg_, sizeof tu_msg_, __VA_ARGS__);   \
        ck_assert_msg(tu_all_, "%s", tu_msg_);                                \
    } while (0)

/* Local bookkeeping of a test phase: OK stays 1 until the first failure,
 * whose description is kept in MSG.  Checked collectively with
 * CHECK_STATUS once the phase is over. */
typedef struct tu_status {
    int  ok;
    char msg[480];
} tu_status;

void tu_status_init(tu_status *st);
/* Record a failure (only the first one is kept). */
void tu_fail(tu_status *st, const char *fmt, ...) TU_PRINTF(2, 3);
/* Record a failure unless RC == WANT; returns RC == WANT.  FMT describes
 * the call. */
int tu_expect_rc(tu_status *st, int rc, int want, const char *fmt, ...) TU_PRINTF(4, 5);
/* Record a failure unless the LEN bytes at GOT equal EXPECTED. */
int tu_expect_mem(tu_status *st, const void *got, const void *expected, size_t len,
                  const char *fmt, ...) TU_PRINTF(5, 6);

#define CHECK_STATUS(st) CHECK_ALL((st).ok, "%s", (st).msg)

/* strstr ignoring case (TCIO_AGGREGATORS names tcio_aggregators too). */
const char *tu_find_nocase(const char *hay, const char *needle);

/* Whether tcio_last_error explains the failure RC that CALL just returned
 * on this rank: it returns RC, its message is "rank R: CALL: REASON", and
 * REASON is more than the generic tcio_error_string(RC) and contains each
 * string of WANT (NULL-terminated, may be NULL; case-insensitive).
 * Records a failure in ST (WHAT describes the case) otherwise. */
int tu_expect_reason(tu_status *st, int rc, const char *call, const char *const *want,
                     const char *what);

/* Collective over MPI_COMM_WORLD: the ranks of this rank's node as libtcio
 * sees nodes: MPI_Comm_split_type's, each cut into the parts of
 * TCIO_TEST_NODES blocks of consecutive ranks when that is set (the
 * library's testing-only split, lib/aggregators.c). */
MPI_Comm tu_node_comm(void);
/* Collective: the number of nodes the ranks span, as tu_node_comm sees
 * them. */
int tu_count_nodes(void);

/* Collective reductions over MPI_COMM_WORLD. */
int tu_min_int(int v);
int tu_max_int(int v);
int tu_sum_int(int v);

/* ---- paths ---------------------------------------------------------------- */

/* The directory for test files: $TCIO_TEST_DIR, else $TMPDIR, else /tmp. */
const char *tu_dir(void);

/* A fresh path "<dir>/tcio-test-<pid of rank 0>-<n>-<tag>" (same on every
 * rank).  The file is removed (by rank 0) at the test's teardown.  The
 * string stays valid until then. */
const char *tu_path(const char *tag);

/* ---- POSIX helpers (plain open/pwrite/pread) ------------------------------ */

/* Create or truncate PATH and write LEN bytes of DATA (may be 0). 0 or -1. */
int tu_posix_create(const char *path, const void *data, size_t len);
/* pwrite LEN bytes at OFF into PATH (created if missing). 0 or -1. */
int tu_posix_pwrite(const char *path, int64_t off, const void *data, size_t len);
/* Size of PATH, or -1 if it does not exist. */
int64_t tu_file_size(const char *path);
/* Whole file in a malloc'ed buffer (at least 1 byte allocated); NULL on
 * error.  *SIZE receives the size. */
unsigned char *tu_read_file(const char *path, int64_t *size);
/* Zero-filled buffer of N bytes (at least 1 byte allocated). */
unsigned char *tu_zalloc(size_t n);

/* Compare two files byte by byte (sizes too).  0 when equal, else -1 with a
 * description of the first difference in WHY. */
int tu_compare_files(const char *got, const char *expected, char *why, size_t whysize);
/* Compare a file with an expected image of SIZE bytes. */
int tu_compare_file_mem(const char *path, const void *expected, int64_t size, char *why,
                        size_t whysize);
/* Compare memory; WHAT names the buffer in the message. */
int tu_compare_mem(const void *got, const void *expected, size_t len, char *why,
                   size_t whysize, const char *what);

/* ---- tcio helpers ---------------------------------------------------------- */

/* tcio_open_comm on MPI_COMM_WORLD with the info keys tcio_segment_size=SEG
 * and tcio_segments_per_proc=SPP (each may be NULL: not set).  A handle
 * opened here is remembered so that the teardown can close it if the test
 * fails before tu_close. */
int tu_open(const char *path, int mode, const char *seg, const char *spp, tcio_file **fh);
/* tu_open with further info keys: KV holds key, value, key, value, ...,
 * NULL (KV itself may be NULL). */
/* Whether MPI_Info_set accepts an empty value in this MPI (the standard
 * leaves it open); WHY (may be NULL) gets the MPI library and its answer. */
int tu_info_accepts_empty_value(char *why, size_t size);

int tu_open_kv(const char *path, int mode, const char *seg, const char *spp,
               const char *const *kv, tcio_file **fh);
/* tcio_close, forgetting the handle. */
int tu_close(tcio_file *fh);
/* tcio_close_begin (the teardown ends a handle left closing with
 * tcio_close_end), and tcio_close_end, forgetting the handle. */
int tu_close_begin(tcio_file *fh);
int tu_close_end(tcio_file *fh);

/* ---- write plans ------------------------------------------------------------ */

/* A chunk of the file written by one rank with the pattern SEED. */
typedef struct tu_chunk {
    int64_t  off;
    int64_t  len;
    int      owner;
    uint64_t seed;
} tu_chunk;

typedef struct tu_plan {
    tu_chunk *chunks;   /* ascending, non-overlapping */
    size_t    n;
    int64_t   end;      /* end of the last chunk: the file size */
} tu_plan;

/* A random plan covering about TARGET bytes: chunks of 1..MAX_CHUNK bytes
 * (half of them at most 32 bytes), owned by random ranks, with unwritten gaps
 * of 1..MAX_GAP bytes between some chunks when MAX_GAP > 0.  The plan never
 * ends with a gap.  Depends only on SEED and NPROCS. */
void tu_plan_random(tu_plan *p, uint64_t seed, int64_t target, int64_t max_chunk,
                    int64_t max_gap, int nprocs);
void tu_plan_free(tu_plan *p);

/* Rank 0 writes the plan to PATH with pwrite, one call per chunk, in plan
 * order, on top of what PATH holds (created if missing).  Collective: returns
 * the same 0/-1 on every rank, after the file is complete. */
int tu_plan_write_reference(const tu_plan *p, const char *path);

#endif
