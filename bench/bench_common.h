/* bench_common.h - what tcio_bench and art_bench share: option parsing,
 * deterministic array contents, timing, peak memory and the report. */
#ifndef TCIO_BENCH_COMMON_H
#define TCIO_BENCH_COMMON_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define BENCH_MAX_ARRAYS 16
#define BENCH_LAST_METHOD 5   /* tcio_bench's methods are 0..5 */

/* libtcio settings given on the command line (NULL/false: not given). */
typedef struct bench_tuning {
    const char *aggregators;   /* --aggregators N */
    const char *placement;     /* --placement spread|node|RANKS */
    const char *early_drain;   /* --early-drain on|off */
    bool        prefetch;      /* --prefetch on|off: declare a read session */
} bench_tuning;

/* The usage lines of the tuning options. */
#define BENCH_TUNING_USAGE                                                        \
    "  --aggregators N     libtcio aggregators (default: the library's)\n"          \
    "  --placement P       aggregator placement: spread, node or a rank list\n"      \
    "  --early-drain X     on or off: write full segments before close\n"           \
    "  --prefetch X        on or off (default): declare the read-back as a\n"        \
    "                      tcio_read_session so that aggregators load it first\n"   \
    "The first three set TCIO_AGGREGATORS, TCIO_AGGREGATOR_PLACEMENT and\n"        \
    "TCIO_EARLY_DRAIN (overriding the environment); every TCIO_* variable of\n"     \
    "doc/configuration.md applies.\n"

/* getopt_long codes of the long-only options. */
enum {
    BENCH_OPT_CSV = 256, BENCH_OPT_AGGREGATORS, BENCH_OPT_PLACEMENT, BENCH_OPT_EARLY_DRAIN,
    BENCH_OPT_PREFETCH, BENCH_OPT_DUMPS, BENCH_OPT_COMPUTE_MS, BENCH_OPT_CLOSE
};

/* The tuning options' entries of a getopt_long option table. */
#define BENCH_TUNING_LONGOPTS                                                    \
    { "aggregators", required_argument, NULL, BENCH_OPT_AGGREGATORS },           \
    { "placement", required_argument, NULL, BENCH_OPT_PLACEMENT },               \
    { "early-drain", required_argument, NULL, BENCH_OPT_EARLY_DRAIN },           \
    { "prefetch", required_argument, NULL, BENCH_OPT_PREFETCH }

/* If getopt_long's CODE is a tuning option, store its VALUE: returns 1, or
 * -1 with *PROBLEM set for a bad value; 0 if it is not one. */
int bench_tuning_option(int code, const char *value, bench_tuning *t, const char **problem);

/* What is wrong when getopt_long returned '?' (unknown option or missing
 * value), naming the option. */
const char *bench_getopt_problem(int argc, char **argv);

/* Export the given settings as TCIO_* environment variables, which the
 * library reads at each open (and which win over info keys). */
void bench_apply_tuning(const bench_tuning *t);

typedef struct bench_options {
    int         method;                       /* 0 ocio, 1 tcio, 2 mpiio, 3 contiguous,
                                                 4 pnetcdf, 5 file per rank */
    int         num_array;
    char        types[BENCH_MAX_ARRAYS];      /* one of c s i f d per array */
    const char *types_text;
    long        len_array;
    long        size_access;
    const char *file;
    bool        csv;
    bool        help;                         /* -h/--help */
    bench_tuning tuning;
    long        dumps;                        /* --dumps N: 0 = one write and read */
    long        compute_ms;                   /* --compute-ms M between dumps */
    bool        close_background;             /* --close background (METHOD 1) */
} bench_options;

/* Handle HELP (-h/--help was given) and a PROBLEM found while parsing
 * (NULL if none): print the usage on rank 0 (stdout for help, stderr with
 * the problem) and return the exit status (0 for help, 2 for a problem);
 * -1 to go on.  Calls MPI_Finalize when it returns an exit status. */
int bench_usage_exit(bool help, const char *program, const char *problem, const char *usage);

/* Parse tcio_bench's options with getopt_long; NULL when valid (or help
 * was asked for), else what is wrong. */
const char *bench_parse_options(int argc, char **argv, bench_options *opt);

/* Bytes of one element of type letter T (c s i f d); 0 if unknown. */
size_t bench_type_size(char t);

/* A new array of LEN elements of type T whose values depend only on
 * (rank, array, index), so any reader can regenerate them (NULL if there
 * is no memory). */
char *bench_fill_array(char t, int rank, int array, long len);

/* Fill A (LEN elements of type T) with the values of round ROUND: those of
 * bench_fill_array for round 0, others for each round (a checkpointing
 * code's dumps differ from one another). */
void bench_set_array(char *a, char t, int rank, int array, long len, long round);

/* Barrier, then the start time. */
double bench_start(void);

/* Seconds since T0, the maximum over all ranks (collective). */
double bench_stop(double t0);

/* The maximum of MINE over all ranks (collective). */
double bench_max(double mine);

/* True on every rank iff OK is true on every rank (collective). */
bool bench_all_true(bool ok);

/* Peak resident memory (VmHWM) in MiB, maximum over ranks (collective). */
double bench_max_peak_rss_mib(void);

typedef struct bench_row {
    const char *method;
    int         nprocs;
    int         num_array;
    const char *types;
    long        len_array;
    long        size_access;
    const bench_tuning *tuning;
    const char *shape;     /* the text report's words for the data where they
                              are not tcio_bench's arrays (NULL: arrays) */
} bench_row;

typedef struct bench_result {
    double bytes;
    double write_s, read_s;
    double close_s;            /* tcio_close of the write phase (max over
                                  ranks); 0 for the other methods */
    int    write_rc, read_rc;
    double peak_rss_mib;
    bool   verified;
    /* --dumps: BYTES, WRITE_S, READ_S and CLOSE_S are per dump (averages),
     * and these describe the loop. */
    long   dumps, compute_ms;
    const char *close_mode;    /* "sync" or "background" */
    double blocked_s;          /* inside the I/O calls, summed over the
                                  dumps, max over ranks */
    double total_s;            /* the whole loop, wall time */
} bench_result;

/* Print the result: a CSV header and row, or a readable table.  With
 * R->dumps > 0 the CSV row has the columns dumps, compute_ms, close,
 * blocked_s and total_s before verified (which stays last); without, the
 * columns are those of every earlier version. */
void bench_report(FILE *out, bool csv, const bench_row *row, const bench_result *r);

/* The median of V's N values (sorted in place); -1 when N is 0. */
double bench_median(double *v, long n);

#endif
