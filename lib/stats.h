/* stats.h - what one open file did, for the TCIO_STATS summary.
 *
 * Every counter and phase is defined once, in the lists below (X-macros,
 * as Darshan defines its counters): the enum, the text table's row names
 * and the JSON member names all come from them, so a new one cannot be
 * added to one and missed in another.  doc/configuration.md describes
 * each JSON name. */
#ifndef TCIO_STATS_H
#define TCIO_STATS_H

#include <stdint.h>
#include <mpi.h>

/* X(ENUM SUFFIX, text table name, JSON name) */
#define TCI_COUNTERS(X)                                                              \
    X(BYTES_WRITTEN, "bytes written", "bytes_written")                               \
    X(BYTES_READ, "bytes read", "bytes_read")                                        \
    X(PUTS, "puts", "puts")                                                          \
    X(GETS, "gets", "gets")                                                          \
    X(LOADS, "segment loads", "segment_loads")                                       \
    X(SPILLS, "spills", "spills")                                                    \
    X(EARLY_DRAINS, "segments drained early", "segments_drained_early")              \
    X(CLOSE_DRAINS, "segments drained at close", "segments_drained_at_close")        \
    X(SYNC_DRAINS, "segments drained at sync", "segments_drained_at_sync")          \
    X(PREFETCHED, "segments prefetched", "segments_prefetched")                      \
    X(SHARED_MOVES, "shared moves", "shared_moves")                                  \
    X(MOVER_DRAINS, "drained by the mover", "segments_drained_by_mover")             \
    X(BUSY_TAKES, "slot takes that waited", "busy_takes")                            \
    /* segment writes (spills, drains) that were sieved */                           \
    X(SIEVED, "segment writes sieved", "sieved_writes")                              \
    /* write moves whose bytes went straight to the file, around an older           \
     * segment others still fill */                                                  \
    X(WRITES_AROUND, "writes around", "writes_around")                               \
    /* write moves that waited for such a segment */                                 \
    X(OLDER_WAITS, "waits for older segments", "older_segment_waits")                \
    X(BACKGROUND_DRAINS, "drained in the background", "segments_drained_in_background") \
    /* puts and gets whose slot is on another node, and their level-1 bytes */       \
    X(OFF_NODE_MOVES, "moves to other nodes", "off_node_moves")                      \
    X(OFF_NODE_BYTES, "bytes to other nodes", "off_node_bytes")                      \
    /* combined segments a node's combining tier put into the file's level 2         \
     * (combiner.c), their bytes, and the segments it got from there */              \
    X(FORWARDS, "node forwards", "forwards")                                         \
    /* of them, those that freed a tier slot for another segment (the tier's        \
     * spills): beyond one forward per node and segment between flushes */         \
    X(TIER_SPILLS, "  of them freeing a tier slot", "tier_spills")                   \
    X(FORWARD_BYTES, "bytes forwarded", "forward_bytes")                             \
    /* the bytes a forward's merge moved to and from another rank's slot of the     \
     * file's level 2: the node's ranges of data and their bitmap words, out,       \
     * and in where the slot held bytes of the segment (level2.c) */                \
    X(MERGE_BYTES, "bytes merged remotely", "merge_bytes")                           \
    X(FETCHES, "node fetches", "fetches")                                           \
    /* of them, those read without the aggregator's slot lock, and the reads        \
     * done again because the slot changed meanwhile or was locked (level2.c) */    \
    X(UNLOCKED_FETCHES, "  read without the slot lock", "unlocked_fetches")         \
    X(FETCH_RETRIES, "  read again", "fetch_retries")                               \
    /* the bytes of the fetches: the spans a node's readers wanted, or whole       \
     * segments (level2.c, partial loads) */                                         \
    X(FETCH_BYTES, "bytes fetched", "fetch_bytes")                                   \
    /* forwards staged and sent without waiting, forwards merged under the          \
     * aggregator's forward lock (staging full, or the aggregator itself),         \
     * staged forwards an aggregator received, those of them a locked forward      \
     * had merged first, and staged forwards a fetch laid over what it fetched     \
     * (forward.c) */                                                                \
    X(STAGED_FORWARDS, "forwards staged", "staged_forwards")                         \
    /* of them, the bytes of their messages past the header: the bitmap words       \
     * and data of the node's ranges (forward.c) */                                 \
    X(STAGED_BYTES, "  bytes staged", "staged_bytes")                                \
    X(LOCKED_FORWARDS, "forwards locked", "locked_forwards")                         \
    X(FORWARDS_RECEIVED, "forwards received", "forwards_received")                   \
    X(FORWARDS_OVERTAKEN, "forwards overtaken", "forwards_overtaken")                \
    X(STAGED_OVERLAYS, "staged forwards fetched", "staged_overlays")                 \
    /* opens that took the level-2 window, and on several nodes the node's          \
     * combining tier, kept on the communicator by the previous file */              \
    X(REUSED_WINDOWS, "windows reused", "reused_windows")                            \
    X(REUSED_TIERS, "node tiers reused", "reused_tiers")

/* Phases, in seconds of MPI_Wtime; a phase inside another counts in both
 * (loads and spills happen inside moves).  CLOSE is the time inside
 * tcio_close, or tcio_close_begin and tcio_close_end together, SYNC and
 * SET_SIZE the time inside tcio_sync and tcio_set_size; BACKGROUND
 * the drain thread's, which no call waits for unless tcio_close_end comes
 * before it is done.  OPEN_LEVEL2 and OPEN_TIER are the part of OPEN that
 * made a new level 2 (window or shared segment, with the progress probe,
 * after freeing a kept one of another geometry) and, on several nodes, a
 * new combining tier or a failed try at one: 0 where the open took over
 * the ones the previous file kept, and OPEN_TIER 0 without a tier.  The *_WAITS phases are time spent waiting for
 * other ranks (doc/configuration.md): for a slot another rank held, for
 * one-sided operations to complete at their target (inside every kind of
 * move; FORWARD_WAITS and FETCH_WAITS are the part of it inside a node's
 * forwards and fetches), for staged forwards (STAGING_WAITS: a node-mate
 * filling a copy that a locked forward merges first; at flush and close
 * the copies on their way and the aggregators' acknowledgements), and in
 * the library's collective steps. */
#define TCI_PHASES(X)                                                                \
    X(OPEN, "open", "open")                                                          \
    X(OPEN_LEVEL2, "  of it making level 2", "open_level2")                          \
    X(OPEN_TIER, "  of it making the node tier", "open_tier")                        \
    X(WRITE_MOVES, "write moves", "write_moves")                                     \
    X(READ_MOVES, "read moves", "read_moves")                                        \
    X(LOADS, "loads", "loads")                                                       \
    X(SPILLS, "spills", "spills")                                                    \
    X(EARLY_DRAINS, "early drains", "early_drains")                                  \
    X(PREFETCH, "prefetch", "prefetch")                                              \
    X(CLOSE, "close", "close")                                                       \
    X(SYNC, "sync", "sync")                                                          \
    X(SET_SIZE, "set size", "set_size")                                              \
    X(WRITES_AROUND, "writes around", "writes_around")                               \
    X(OLDER_WAITS, "waits for older segments", "older_segment_waits")                \
    X(BACKGROUND, "background drain", "background_drain")                            \
    X(FORWARDS, "node forwards", "forwards")                                         \
    X(FORWARD_MERGES, "merges of forwards received", "forward_merges")               \
    X(SLOT_WAITS, "waits for held slots", "slot_waits")                              \
    X(ONE_SIDED_WAITS, "waits for one-sided ops", "one_sided_waits")                 \
    X(FORWARD_WAITS, "  of them in forwards", "forward_waits")                       \
    X(FETCH_WAITS, "  of them in fetches", "fetch_waits")                            \
    X(STAGING_WAITS, "waits for staged forwards", "staging_waits")                   \
    X(COLLECTIVE_WAITS, "waits in collectives", "collective_waits")

#define TCI_STATS_ENUM_C(e, name, key) TCI_C_##e,
#define TCI_STATS_ENUM_T(e, name, key) TCI_T_##e,
enum tci_counter { TCI_COUNTERS(TCI_STATS_ENUM_C) TCI_C_COUNT };
enum tci_phase { TCI_PHASES(TCI_STATS_ENUM_T) TCI_T_COUNT };
#undef TCI_STATS_ENUM_C
#undef TCI_STATS_ENUM_T

typedef struct tci_stats {
    int64_t count[TCI_C_COUNT];
    double  time[TCI_T_COUNT];
} tci_stats;

/* Collective over COMM: sum and maximum over the ranks; rank 0 writes one
 * summary for file FNAME (naming its aggregator count and TRANSPORT) in
 * FORMAT (TCI_STATS_TEXT or TCI_STATS_JSON), appended to the file PATH, or
 * when PATH is NULL (or cannot be opened) to standard output (text) or
 * standard error (JSON). */
void tci_stats_report(const tci_stats *s, MPI_Comm comm, const char *fname,
                      int naggregators, const char *transport, int format, const char *path);

#endif
