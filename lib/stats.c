/* stats.c - the TCIO_STATS summary written by tcio_close on rank 0: a text
 * table (to standard output unless TCIO_STATS_FILE names a file) or one
 * JSON object per file on one line (to standard error unless
 * TCIO_STATS_FILE names a file).  This, when asked, and the warning about
 * unknown TCIO_* variables (configuration.c, on standard error) are the
 * only output the library produces. */
#include <stdio.h>
#include "collective.h"
#include "configuration.h"
#include "json_string.h"
#include "stats.h"
#include "tcio.h"

#define TCI_STATS_NAME(e, name, key) name,
#define TCI_STATS_KEY(e, name, key) key,
static const char *const counter_names[TCI_C_COUNT] = { TCI_COUNTERS(TCI_STATS_NAME) };
/* The same, as JSON member names (doc/configuration.md lists them). */
static const char *const counter_keys[TCI_C_COUNT] = { TCI_COUNTERS(TCI_STATS_KEY) };
static const char *const phase_names[TCI_T_COUNT] = { TCI_PHASES(TCI_STATS_NAME) };
static const char *const phase_keys[TCI_T_COUNT] = { TCI_PHASES(TCI_STATS_KEY) };
#undef TCI_STATS_NAME
#undef TCI_STATS_KEY

typedef struct summary {
    const char *fname;
    const char *transport;
    int     nprocs, naggregators;
    int64_t csum[TCI_C_COUNT], cmax[TCI_C_COUNT];
    double  tsum[TCI_T_COUNT], tmax[TCI_T_COUNT];
} summary;

static void print_table(FILE *out, const summary *m)
{
    fprintf(out, "tcio stats: %s (%d ranks, %d aggregators, transport %s)\n", m->fname,
            m->nprocs, m->naggregators, m->transport);
    fprintf(out, "  %-28s %16s %16s\n", "count", "sum", "max/rank");
    for (int i = 0; i < TCI_C_COUNT; i++)
        fprintf(out, "  %-28s %16lld %16lld\n", counter_names[i], (long long)m->csum[i],
                (long long)m->cmax[i]);
    fprintf(out, "  %-28s %16s %16s\n", "time (s)", "sum", "max/rank");
    for (int i = 0; i < TCI_T_COUNT; i++)
        fprintf(out, "  %-28s %16.6f %16.6f\n", phase_names[i], m->tsum[i], m->tmax[i]);
}

/* TEXT as a JSON string: quotes, backslashes and control characters
 * escaped; bytes >= 0x80 pass (file names are UTF-8 or opaque bytes). */
static void print_json(FILE *out, const summary *m)
{
    fputs("{\"tcio_stats\":1,\"version\":", out);
    tci_print_json_string(out, TCIO_VERSION);   /* this library's own */
    fputs(",\"file\":", out);
    tci_print_json_string(out, m->fname);
    fprintf(out, ",\"ranks\":%d,\"aggregators\":%d,\"transport\":", m->nprocs, m->naggregators);
    tci_print_json_string(out, m->transport);
    fputs(",\"counts\":{", out);
    for (int i = 0; i < TCI_C_COUNT; i++)
        fprintf(out, "%s\"%s\":{\"sum\":%lld,\"max\":%lld}", i ? "," : "", counter_keys[i],
                (long long)m->csum[i], (long long)m->cmax[i]);
    fputs("},\"seconds\":{", out);
    for (int i = 0; i < TCI_T_COUNT; i++)
        fprintf(out, "%s\"%s\":{\"sum\":%.6f,\"max\":%.6f}", i ? "," : "", phase_keys[i],
                m->tsum[i], m->tmax[i]);
    fputs("}}\n", out);
}


static void print_summary(FILE *out, int format, const summary *m)
{
    if (format == TCI_STATS_JSON)
        print_json(out, m);
    else
        print_table(out, m);
}
void tci_stats_report(const tci_stats *s, MPI_Comm comm, const char *fname,
                      int naggregators, const char *transport, int format, const char *path)
{
    summary m = { .fname = fname ? fname : "?", .transport = transport,
                  .naggregators = naggregators };
    int rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &m.nprocs);
    /* The library's waits that give the processor away (collective.h):
     * a blocking reduction costs a scheduler tick per step where ranks
     * share cores. */
    if (tci_allreduce(s->count, m.csum, TCI_C_COUNT, MPI_INT64_T, MPI_SUM, comm) != MPI_SUCCESS ||
        tci_allreduce(s->count, m.cmax, TCI_C_COUNT, MPI_INT64_T, MPI_MAX, comm) != MPI_SUCCESS ||
        tci_allreduce(s->time, m.tsum, TCI_T_COUNT, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS ||
        tci_allreduce(s->time, m.tmax, TCI_T_COUNT, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS ||
        rank != 0)
        return;
    /* The file when it takes and keeps the summary; else (it cannot be
     * opened, or a full file system shows only at the buffer's write, in
     * fclose) the default stream. */
    FILE *file = path ? fopen(path, "a") : NULL;
    if (file) {
        print_summary(file, format, &m);
        int bad = ferror(file);   /* before the close frees FILE */
        bad |= fclose(file);
        if (!bad)
            return;
    }
    FILE *out = format == TCI_STATS_JSON ? stderr : stdout;
    print_summary(out, format, &m);
    fflush(out);
}
