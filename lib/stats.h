/* stats.h - what one open file did, for the TCIO_STATS summary. */
#ifndef TCIO_STATS_H
#define TCIO_STATS_H

#include <stdint.h>
#include <mpi.h>

enum tci_counter {
    TCI_C_BYTES_WRITTEN, TCI_C_BYTES_READ, TCI_C_PUTS, TCI_C_GETS, TCI_C_LOADS,
    TCI_C_SPILLS, TCI_C_EARLY_DRAINS, TCI_C_CLOSE_DRAINS, TCI_C_PREFETCHED,
    TCI_C_SHARED_MOVES, TCI_C_MOVER_DRAINS, TCI_C_BUSY_TAKES,
    TCI_C_SIEVED,        /* segment writes (spills, drains) that were sieved */
    TCI_C_WRITES_AROUND, /* write moves whose bytes went straight to the file,
                            around an older segment others still fill */
    TCI_C_OLDER_WAITS,   /* write moves that waited for such a segment */
    TCI_C_BACKGROUND_DRAINS,   /* segments handed to the background drain */
    TCI_C_OFF_NODE_MOVES,      /* puts and gets whose slot is on another node */
    TCI_C_OFF_NODE_BYTES,      /* the level-1 bytes they carried */
    TCI_C_FORWARDS,      /* combined segments a node's combining tier put
                            into the file's level 2 (combiner.c) */
    TCI_C_FORWARD_BYTES, /* their bytes */
    TCI_C_FETCHES,       /* segments it got from there for reads */
    TCI_C_COUNT
};

/* Phases, in seconds of MPI_Wtime; a phase inside another counts in both
 * (loads and spills happen inside moves).  TCI_T_CLOSE is the time inside
 * tcio_close, or tcio_close_begin and tcio_close_end together;
 * TCI_T_BACKGROUND the drain thread's, which no call waits for unless
 * tcio_close_end comes before it is done. */
enum tci_phase {
    TCI_T_OPEN, TCI_T_WRITE_MOVES, TCI_T_READ_MOVES, TCI_T_LOADS, TCI_T_SPILLS,
    TCI_T_EARLY_DRAINS, TCI_T_PREFETCH, TCI_T_CLOSE, TCI_T_WRITES_AROUND,
    TCI_T_OLDER_WAITS, TCI_T_BACKGROUND,
    TCI_T_FORWARDS,      /* a node's combining tier forwarding (combiner.c) */
    TCI_T_COUNT
};

typedef struct tci_stats {
    int64_t count[TCI_C_COUNT];
    double  time[TCI_T_COUNT];
} tci_stats;

/* Collective over COMM: sum and maximum over the ranks; rank 0 writes one
 * summary for file FNAME (naming its aggregator count and TRANSPORT) in FORMAT (TCI_STATS_TEXT or TCI_STATS_JSON),
 * appended to the file PATH, or when PATH is NULL (or cannot be opened)
 * to standard output (text) or standard error (JSON). */
void tci_stats_report(const tci_stats *s, MPI_Comm comm, const char *fname,
                      int naggregators, const char *transport, int format, const char *path);

#endif
