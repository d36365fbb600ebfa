/* stats.c - the TCIO_STATS summary printed by tcio_close on rank 0.  This
 * and the warning about unknown TCIO_* variables (configuration.c, on
 * stderr) are the only output the library produces. */
#include <stdio.h>
#include "stats.h"

static const char *const counter_names[TCI_C_COUNT] = {
    "bytes written", "bytes read", "puts", "gets", "segment loads", "spills",
    "segments drained early", "segments drained at close", "segments prefetched"
};

static const char *const phase_names[TCI_T_COUNT] = {
    "open", "write moves", "read moves", "loads", "spills", "early drains",
    "prefetch", "close"
};

void tci_stats_report(const tci_stats *s, MPI_Comm comm, const char *fname,
                      int naggregators)
{
    int64_t csum[TCI_C_COUNT], cmax[TCI_C_COUNT];
    double tsum[TCI_T_COUNT], tmax[TCI_T_COUNT];
    int rank, nprocs;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    if (MPI_Reduce(s->count, csum, TCI_C_COUNT, MPI_INT64_T, MPI_SUM, 0, comm) != MPI_SUCCESS ||
        MPI_Reduce(s->count, cmax, TCI_C_COUNT, MPI_INT64_T, MPI_MAX, 0, comm) != MPI_SUCCESS ||
        MPI_Reduce(s->time, tsum, TCI_T_COUNT, MPI_DOUBLE, MPI_SUM, 0, comm) != MPI_SUCCESS ||
        MPI_Reduce(s->time, tmax, TCI_T_COUNT, MPI_DOUBLE, MPI_MAX, 0, comm) != MPI_SUCCESS ||
        rank != 0)
        return;
    printf("tcio stats: %s (%d ranks, %d aggregators)\n", fname ? fname : "?", nprocs,
           naggregators);
    printf("  %-28s %16s %16s\n", "count", "sum", "max/rank");
    for (int i = 0; i < TCI_C_COUNT; i++)
        printf("  %-28s %16lld %16lld\n", counter_names[i], (long long)csum[i],
               (long long)cmax[i]);
    printf("  %-28s %16s %16s\n", "time (s)", "sum", "max/rank");
    for (int i = 0; i < TCI_T_COUNT; i++)
        printf("  %-28s %16.6f %16.6f\n", phase_names[i], tsum[i], tmax[i]);
    fflush(stdout);
}
