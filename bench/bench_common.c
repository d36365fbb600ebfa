/* bench_common.c - shared pieces of the benchmarks. */
#define _GNU_SOURCE               /* setenv, getopt_long */
#include <ctype.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "bench_common.h"

size_t bench_type_size(char t)
{
    switch (t) {
    case 'c': return sizeof(char);
    case 's': return sizeof(short);
    case 'i': return sizeof(int);
    case 'f': return sizeof(float);
    case 'd': return sizeof(double);
    default: return 0;
    }
}

/* A positive count with an optional k/m suffix (powers of 1024). */
static bool parse_count(const char *text, long *value)
{
    char *end;
    long n = strtol(text, &end, 10);
    if (end == text || n <= 0)
        return false;
    if (*end == 'k' || *end == 'K')
        n <<= 10, end++;
    else if (*end == 'm' || *end == 'M')
        n <<= 20, end++;
    *value = n;
    return *end == '\0';
}

static const char *parse_types(const char *text, bench_options *opt)
{
    int n = 0;
    for (const char *p = text; *p; p++) {
        if (*p == ',')
            continue;
        if (bench_type_size(*p) == 0 || (p[1] != ',' && p[1] != '\0'))
            return "TYPES must be a comma-separated list of c, s, i, f, d";
        if (n == BENCH_MAX_ARRAYS)
            return "too many TYPES";
        opt->types[n++] = *p;
    }
    if (n != opt->num_array)
        return "TYPES must name one type per array (NUM_ARRAY of them)";
    opt->types_text = text;
    return NULL;
}

static bool is_switch(const char *v)
{
    return strcmp(v, "on") == 0 || strcmp(v, "off") == 0;
}

int bench_tuning_option(int code, const char *v, bench_tuning *t, const char **problem)
{
    switch (code) {
    case BENCH_OPT_AGGREGATORS: t->aggregators = v; return 1;  /* the library checks these */
    case BENCH_OPT_PLACEMENT: t->placement = v; return 1;
    case BENCH_OPT_EARLY_DRAIN:
    case BENCH_OPT_PREFETCH:
        if (!is_switch(v)) {
            *problem = "--early-drain and --prefetch take on or off";
            return -1;
        }
        if (code == BENCH_OPT_EARLY_DRAIN)
            t->early_drain = v;
        else
            t->prefetch = strcmp(v, "on") == 0;
        return 1;
    default: return 0;
    }
}

void bench_apply_tuning(const bench_tuning *t)
{
    if (t->aggregators)
        setenv("TCIO_AGGREGATORS", t->aggregators, 1);
    if (t->placement)
        setenv("TCIO_AGGREGATOR_PLACEMENT", t->placement, 1);
    if (t->early_drain)
        setenv("TCIO_EARLY_DRAIN", t->early_drain, 1);
}

const char *bench_getopt_problem(int argc, char **argv)
{
    static char problem[160];
    const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
    /* A long option's optopt is its value, which for long-only options lies
     * past every character: name those by their word. */
    if (optopt > 0 && optopt < 128 && isalnum(optopt))
        snprintf(problem, sizeof problem, "option -%c: unknown or lacks its value", optopt);
    else
        snprintf(problem, sizeof problem, "option %s: unknown or lacks its value", arg);
    return problem;
}

int bench_usage_exit(bool help, const char *program, const char *problem, const char *usage)
{
    if (!help && !problem)
        return -1;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0 && help)
        fputs(usage, stdout);
    else if (rank == 0)
        fprintf(stderr, "%s: %s\n%s", program, problem, usage);
    MPI_Finalize();
    return help ? 0 : 2;
}

const char *bench_parse_options(int argc, char **argv, bench_options *opt)
{
    static const struct option longopts[] = {
        { "csv", no_argument, NULL, BENCH_OPT_CSV },
        { "help", no_argument, NULL, 'h' },
        { "dumps", required_argument, NULL, BENCH_OPT_DUMPS },
        { "compute-ms", required_argument, NULL, BENCH_OPT_COMPUTE_MS },
        { "close", required_argument, NULL, BENCH_OPT_CLOSE },
        BENCH_TUNING_LONGOPTS,
        { NULL, 0, NULL, 0 }
    };
    memset(opt, 0, sizeof *opt);
    opt->method = -1;
    const char *types = NULL;
    int c;
    opterr = 0;                     /* rank 0 alone reports problems */
    while ((c = getopt_long(argc, argv, "hm:n:t:l:s:o:", longopts, NULL)) != -1) {
        const char *v = optarg, *problem = NULL;
        long n = 0;
        int tuning = bench_tuning_option(c, v, &opt->tuning, &problem);
        if (tuning < 0)
            return problem;
        if (tuning > 0)
            continue;
        switch (c) {
        case 'h': opt->help = true; break;
        case BENCH_OPT_CSV: opt->csv = true; break;
        case 'm':
            if ((!parse_count(v, &n) && strcmp(v, "0") != 0) || n > BENCH_LAST_METHOD)
                return "METHOD must be 0, 1, 2, 3, 4 or 5";
            opt->method = (int)n;
            break;
        case 'n':
            if (!parse_count(v, &n) || n > BENCH_MAX_ARRAYS)
                return "NUM_ARRAY must be 1..16";
            opt->num_array = (int)n;
            break;
        case 't': types = v; break;
        case 'l':
            if (!parse_count(v, &opt->len_array))
                return "LEN_ARRAY must be a positive number";
            break;
        case 's':
            if (!parse_count(v, &opt->size_access))
                return "SIZE_ACCESS must be a positive number";
            break;
        case 'o': opt->file = v; break;
        case BENCH_OPT_DUMPS:
            if (!parse_count(v, &opt->dumps))
                return "--dumps needs a positive number";
            break;
        case BENCH_OPT_COMPUTE_MS:
            if (strcmp(v, "0") != 0 && !parse_count(v, &opt->compute_ms))
                return "--compute-ms needs a number of milliseconds";
            break;
        case BENCH_OPT_CLOSE:
            if (strcmp(v, "sync") != 0 && strcmp(v, "background") != 0)
                return "--close takes sync or background";
            opt->close_background = strcmp(v, "background") == 0;
            break;
        default: return bench_getopt_problem(argc, argv);
        }
    }
    if (opt->help)
        return NULL;
    if (optind < argc)
        return "unexpected argument (all arguments are options)";
    if (opt->method < 0 || !opt->num_array || !types || !opt->len_array ||
        !opt->size_access || !opt->file)
        return "options -m, -n, -t, -l, -s and -o are required";
    if (opt->len_array % opt->size_access != 0)
        return "LEN_ARRAY must be a multiple of SIZE_ACCESS";
    if ((opt->compute_ms || opt->close_background) && !opt->dumps)
        return "--compute-ms and --close need --dumps";
    if (opt->close_background && opt->method != 1)
        return "--close background is TCIO's (-m 1): the other methods close synchronously";
    return parse_types(types, opt);
}

char *bench_fill_array(char t, int rank, int array, long len)
{
    char *a = malloc((size_t)len * bench_type_size(t));
    if (a)
        bench_set_array(a, t, rank, array, len, 0);
    return a;
}

void bench_set_array(char *a, char t, int rank, int array, long len, long round)
{
    size_t size = bench_type_size(t);
    for (long i = 0; i < len; i++) {
        long v = (long)rank * 1000003L + (long)array * 7919L + round * 104729L + i;
        char *p = a + (size_t)i * size;
        switch (t) {
        case 'c': *(char *)p = (char)(v * 31); break;
        case 's': *(short *)p = (short)(v * 131); break;
        case 'i': *(int *)p = (int)v; break;
        case 'f': *(float *)p = (float)(v % 16777216) * 0.25f; break;
        case 'd': *(double *)p = (double)v * 0.5 + 0.125; break;
        }
    }
}

double bench_start(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime();
}

double bench_stop(double t0)
{
    double mine = MPI_Wtime() - t0, slowest = mine;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

bool bench_all_true(bool ok)
{
    int mine = ok, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all != 0;
}

double bench_max_peak_rss_mib(void)
{
    double mine = 0, most = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "VmHWM:", 6) == 0)
                mine = strtod(line + 6, NULL) / 1024.0;   /* kB -> MiB */
        fclose(f);
    }
    MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return most;
}

/* A setting as given, or what the library chooses. */
static const char *given(const char *v)
{
    return v ? v : "default";
}

void bench_report(FILE *out, bool csv, const bench_row *row, const bench_result *r)
{
    double wmb = r->write_s > 0 ? r->bytes / 1e6 / r->write_s : 0;
    double rmb = r->read_s > 0 ? r->bytes / 1e6 / r->read_s : 0;
    static const bench_tuning none = { NULL, NULL, NULL, false };
    const bench_tuning *t = row->tuning ? row->tuning : &none;
    const char *aggregators = given(t->aggregators), *placement = given(t->placement);
    const char *early_drain = given(t->early_drain), *prefetch = t->prefetch ? "on" : "off";
    if (csv) {
        fprintf(out, "method,nprocs,num_array,types,len_array,size_access,bytes,write_s,"
                     "read_s,write_MBps,read_MBps,peak_rss_MiB,close_s,aggregators,"
                     "placement,early_drain,prefetch,%sverified\n",
                r->dumps ? "dumps,compute_ms,close,blocked_s,total_s," : "");
        fprintf(out, "%s,%d,%d,\"%s\",%ld,%ld,%.0f,%.6f,%.6f,%.2f,%.2f,%.1f,%.6f,%s,\"%s\","
                     "%s,%s,",
                row->method, row->nprocs, row->num_array, row->types, row->len_array,
                row->size_access, r->bytes, r->write_s, r->read_s, wmb, rmb,
                r->peak_rss_mib, r->close_s, aggregators, placement, early_drain, prefetch);
        if (r->dumps)
            fprintf(out, "%ld,%ld,%s,%.6f,%.6f,", r->dumps, r->compute_ms, r->close_mode,
                    r->blocked_s, r->total_s);
        fprintf(out, "%s\n", r->verified ? "yes" : "no");
        return;
    }
    if (row->shape)
        fprintf(out, "method %s, %d ranks, %s\n", row->method, row->nprocs, row->shape);
    else
        fprintf(out, "method %s, %d ranks, %d arrays (%s) of %ld elements, %ld per access\n",
                row->method, row->nprocs, row->num_array, row->types, row->len_array,
                row->size_access);
    fprintf(out, "  libtcio       aggregators %s, placement %s, early drain %s, prefetch %s\n",
            aggregators, placement, early_drain, prefetch);
    if (r->dumps)
        fprintf(out, "  loop          %ld dumps, %ld ms of computing before each and after "
                "the last, close %s\n  (write, close and read are per dump)\n", r->dumps,
                r->compute_ms, r->close_mode);
    fprintf(out, "  bytes         %.0f (%.1f MB)\n", r->bytes, r->bytes / 1e6);
    fprintf(out, "  write         %10.4f s  %10.2f MB/s\n", r->write_s, wmb);
    if (r->close_s > 0)
        fprintf(out, "  of it close   %10.4f s  (%.0f%% of the write)\n", r->close_s,
                r->write_s > 0 ? 100.0 * r->close_s / r->write_s : 0.0);
    fprintf(out, "  read          %10.4f s  %10.2f MB/s\n", r->read_s, rmb);
    if (r->dumps) {
        fprintf(out, "  blocked       %10.4f s  (inside the I/O calls, all dumps, max over "
                "ranks)\n", r->blocked_s);
        fprintf(out, "  total         %10.4f s  (the whole loop: %.4f s of it computing)\n",
                r->total_s, (double)(r->dumps + 1) * (double)r->compute_ms / 1000.0);
    }
    fprintf(out, "  peak RSS/rank %10.1f MiB\n", r->peak_rss_mib);
    fprintf(out, "  verified      %s\n", r->verified ? "yes" : "no");
}

double bench_max(double mine)
{
    double most = mine;
    MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return most;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, long n)
{
    if (n <= 0)
        return -1.0;
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
