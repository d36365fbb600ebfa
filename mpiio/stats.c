/* stats.c - the interposer's counters of a file, summed over its ranks
 * and written by rank 0 when the file stops being served (close,
 * handover, MPI_Finalize), if TCIO_STATS asks, in TCIO_STATS's styles:
 * a text table on standard output, or one JSON line on standard error
 * for TCIO_STATS=json (libtcio's own summary of the file comes with it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tmi.h"

#define TMI_NAME(e, name, key) name,
#define TMI_KEY(e, name, key) key,
static const char *const names[TMI_S_COUNT] = { TMI_COUNTERS(TMI_NAME) };
static const char *const keys[TMI_S_COUNT] = { TMI_COUNTERS(TMI_KEY) };
#undef TMI_NAME
#undef TMI_KEY

int64_t tmi_yielded_collectives;

/* 0 off, 1 text, 2 json */
static int stats_format(void)
{
    const char *v = getenv("TCIO_STATS");
    if (!v || !*v || !strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "no") ||
        !strcmp(v, "false"))
        return 0;
    return strcmp(v, "json") == 0 ? 2 : 1;
}

void tmi_stats_report(tmi_entry *e)
{
    int format = stats_format(), rank, nprocs;
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
    if (format == 1) {
        printf("tcio mpiio stats: %s (%d ranks)\n", e->name, nprocs);
        printf("  %-28s %16s %16s\n", "count", "sum", "max/rank");
        for (int i = 0; i < TMI_S_COUNT; i++)
            printf("  %-28s %16lld %16lld\n", names[i], (long long)sum[i], (long long)max[i]);
        fflush(stdout);
    } else {
        /* the name is given as the program gave it; quotes escaped */
        fputs("{\"tcio_mpiio_stats\":1,\"file\":\"", stderr);
        for (const char *p = e->name; *p; p++) {
            if (*p == '"' || *p == '\\')
                fputc('\\', stderr);
            fputc(*p, stderr);
        }
        fprintf(stderr, "\",\"ranks\":%d,\"counts\":{", nprocs);
        for (int i = 0; i < TMI_S_COUNT; i++)
            fprintf(stderr, "%s\"%s\":{\"sum\":%lld,\"max\":%lld}", i ? "," : "", keys[i],
                    (long long)sum[i], (long long)max[i]);
        fputs("}}\n", stderr);
        fflush(stderr);
    }
}
