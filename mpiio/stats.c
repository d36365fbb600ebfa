/* stats.c - the interposer's counters of a file, summed over its ranks
 * and written by rank 0 when the file stops being served (close,
 * handover, MPI_Finalize), where libtcio's own summary of the file goes
 * and in its style: libtcio's settings for the file (TCIO_STATS and
 * TCIO_STATS_FILE or the info keys tcio_stats and tcio_stats_file) as
 * tcio_get_info reports them at the open.  A text table on standard
 * output, or one JSON line on standard error, or either appended to the
 * statistics file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json_string.h"
#include "tmi.h"

#define TMI_NAME(e, name, key) name,
#define TMI_KEY(e, name, key) key,
static const char *const names[TMI_S_COUNT] = { TMI_COUNTERS(TMI_NAME) };
static const char *const keys[TMI_S_COUNT] = { TMI_COUNTERS(TMI_KEY) };
#undef TMI_NAME
#undef TMI_KEY

int64_t tmi_yielded_collectives;

/* The format as libtcio reports it for E's file: 0 off, 1 text, 2 JSON,
 * -1 where tcio_get_info failed; and the file, if any, into E. */
static int format_of_file(tmi_entry *e)
{
    MPI_Info info = MPI_INFO_NULL;
    if (TMI_LIB(tcio_get_info(e->tf, &info)) != TCIO_SUCCESS || info == MPI_INFO_NULL)
        return -1;
    char value[MPI_MAX_INFO_VAL + 1];
    int found = 0, format = 0;
    if (MPI_Info_get(info, "tcio_stats", MPI_MAX_INFO_VAL, value, &found) == MPI_SUCCESS &&
        found)
        format = strcmp(value, "json") == 0 ? 2 : strcmp(value, "on") == 0 ? 1 : 0;
    found = 0;
    if (MPI_Info_get(info, "tcio_stats_file", MPI_MAX_INFO_VAL, value, &found) == MPI_SUCCESS &&
        found)
        e->stats_file = strdup(value);
    MPI_Info_free(&info);
    /* tcio_get_info leaves out a name of MPI_MAX_INFO_VAL characters or
     * more, which TCIO_STATS_FILE gives (it takes precedence over the info
     * key, as in libtcio); an info key of exactly that length (MPICH
     * accepts one) is not found here, and the summary goes to the default
     * stream. */
    const char *env = getenv("TCIO_STATS_FILE");
    if (!found && env && strlen(env) >= MPI_MAX_INFO_VAL)
        e->stats_file = strdup(env);
    return format;
}

void tmi_stats_settings(tmi_entry *e)
{
    e->stats_file = NULL;
    int mine = format_of_file(e);
    /* Collective over E's ranks: the summary's reductions need every rank
     * to decide alike, and tcio_get_info can fail on one rank alone (its
     * memory, an info value longer than the MPI allows): no summary
     * unless every rank read the same format. */
    long long f[2] = { mine, -mine }, all[2];
    if (tmi_allreduce(f, all, 2, MPI_LONG_LONG, MPI_MAX, e->comm) != MPI_SUCCESS ||
        all[0] != -all[1] || all[0] < 0)
        mine = 0;
    e->stats_format = mine;
}

static void print_text(FILE *out, const tmi_entry *e, int nprocs, const int64_t *sum,
                       const int64_t *max)
{
    fprintf(out, "tcio mpiio stats: %s (%d ranks)\n", e->name, nprocs);
    fprintf(out, "  %-28s %16s %16s\n", "count", "sum", "max/rank");
    for (int i = 0; i < TMI_S_COUNT; i++)
        fprintf(out, "  %-28s %16lld %16lld\n", names[i], (long long)sum[i],
                (long long)max[i]);
}

static void print_json(FILE *out, const tmi_entry *e, int nprocs, const int64_t *sum,
                       const int64_t *max)
{
    /* the name as the program gave it, escaped as libtcio's own line */
    fputs("{\"tcio_mpiio_stats\":1,\"file\":", out);
    tci_print_json_string(out, e->name);
    fprintf(out, ",\"ranks\":%d,\"counts\":{", nprocs);
    for (int i = 0; i < TMI_S_COUNT; i++)
        fprintf(out, "%s\"%s\":{\"sum\":%lld,\"max\":%lld}", i ? "," : "", keys[i],
                (long long)sum[i], (long long)max[i]);
    fputs("}}\n", out);
}

static void print_summary(FILE *out, const tmi_entry *e, int format, int nprocs,
                          const int64_t *sum, const int64_t *max)
{
    if (format == 2)
        print_json(out, e, nprocs, sum, max);
    else
        print_text(out, e, nprocs, sum, max);
}

void tmi_stats_report(tmi_entry *e)
{
    int format = e->stats_format, rank, nprocs;
    if (!format || e->comm == MPI_COMM_NULL)
        return;
    int64_t sum[TMI_S_COUNT], max[TMI_S_COUNT];
    MPI_Comm_rank(e->comm, &rank);
    MPI_Comm_size(e->comm, &nprocs);
    e->count[TMI_S_YIELDED] = tmi_yielded_collectives - e->yielded_base;
    /* Waits that yield (tmi_allreduce): blocking reductions cost a
     * scheduler tick per step where ranks share cores. */
    if (tmi_allreduce(e->count, sum, TMI_S_COUNT, MPI_INT64_T, MPI_SUM, e->comm) !=
            MPI_SUCCESS ||
        tmi_allreduce(e->count, max, TMI_S_COUNT, MPI_INT64_T, MPI_MAX, e->comm) !=
            MPI_SUCCESS ||
        rank != 0)
        return;
    /* Where libtcio's summary went: the file (the default stream where it
     * cannot be opened or kept, as libtcio does), else standard output
     * for text and standard error for JSON. */
    FILE *file = e->stats_file ? fopen(e->stats_file, "a") : NULL;
    if (file) {
        print_summary(file, e, format, nprocs, sum, max);
        int bad = ferror(file);   /* before the close frees FILE */
        bad |= fclose(file);
        if (!bad)
            return;
    }
    FILE *out = format == 2 ? stderr : stdout;
    print_summary(out, e, format, nprocs, sum, max);
    fflush(out);
}
