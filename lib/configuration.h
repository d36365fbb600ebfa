/* configuration.h - the settings of an open file (segment size, level-2
 * capacity, aggregators, early drain, statistics): parsing and defaults. */
#ifndef TCIO_CONFIGURATION_H
#define TCIO_CONFIGURATION_H

#include <stdint.h>
#include <stdio.h>
#include <mpi.h>
#include "switch.h"

#define TCI_DEFAULT_SEGMENT_SIZE      (1 << 20)  /* when no striping_unit */
#define TCI_DEFAULT_SEGMENTS_PER_PROC 16         /* 16 MiB at 1 MiB, as ROMIO's cb_buffer_size */
#define TCI_MAX_SEGMENT_SIZE          (1 << 30)  /* datatype displacements are int */
#define TCI_MAX_SEGMENTS_PER_PROC     (1 << 20)  /* with the size limit, any window
                                                    size fits in an MPI_Aint */

#define TCI_MAX_AGGREGATOR_LIST       4096       /* ranks in an explicit list */

#define TCI_DEFAULT_NODE_SEGMENTS     4          /* tier slots per rank of a node
                                                    by default, or
                                                    tcio_segments_per_proc if
                                                    smaller (doc/records/nodes.md) */
#define TCI_DEFAULT_FORWARD_STAGING   0          /* staged forwards per rank of a node:
                                                    off (doc/records/forwards.md) */
#define TCI_MAX_FORWARD_STAGING       64

/* How aggregators are chosen among the ranks (doc/configuration.md). */
typedef enum tci_placement_kind {
    TCI_PLACE_SPREAD = 0,   /* evenly spaced ranks (the default) */
    TCI_PLACE_NODE,         /* the same number on every node */
    TCI_PLACE_LIST          /* the ranks the user listed */
} tci_placement_kind;

enum { TCI_STATS_OFF = 0, TCI_STATS_TEXT = 1, TCI_STATS_JSON = 2 };

/* tcio_early_drain: who writes a segment whose every byte was written
 * (doc/design.md, "Who drains"); any nonzero value drains early. */
enum { TCI_DRAIN_OFF = 0, TCI_DRAIN_OWNER = 1, TCI_DRAIN_MOVER = 2 };

/* The transports a user can ask for (tcio_transport; transport.h). */
typedef enum tci_transport_kind {
    TCI_TRANSPORT_AUTO = 0,   /* the library chooses: shm on one node,
                                 mixed on several (tci_transport_plan_for) */
    TCI_TRANSPORT_RMA,        /* MPI one-sided operations */
    TCI_TRANSPORT_SHM,        /* node-shared memory, CPU atomics */
    TCI_TRANSPORT_MIXED       /* shm inside each node (the node's pieces
                                 combined there, lib/combiner.c), rma between
                                 nodes; shm on one node */
} tci_transport_kind;

typedef struct tci_config {
    int64_t segment_size;       /* 0 until known: then the striping default */
    int64_t segments_per_proc;  /* level-2 slots per aggregator */
    int64_t node_segments;      /* tcio_node_segments: slots per rank of a
                                   node's combining tier (several nodes);
                                   0 until known */
    int64_t aggregators;        /* 0 until known: then the default count */
    tci_placement_kind placement;
    int     list_len;           /* TCI_PLACE_LIST: ranks in LIST */
    int    *list;               /* malloc'ed; tci_config_free releases it */
    int     early_drain;        /* -1 until known: then TCI_DRAIN_OWNER */
    int     stats;              /* summary at close: TCI_STATS_OFF, _TEXT, _JSON */
    tci_transport_kind transport;
    char   *stats_file;         /* append it there (malloc'ed), NULL: stdout
                                   for text, stderr for JSON */
    int64_t background_memory;  /* tcio_background_memory: bytes per node
                                   of level 2 that may wait for the
                                   background drain; 0: none; -1 until
                                   used: then the default (background.c) */
    int64_t forward_staging;    /* tcio_forward_staging: forwards a node may
                                   have staged per rank of the node
                                   (forward.c); 0: none; -1 until known */
} tci_config;

/* Parse a positive size such as "4096", "64k" or "1M" (powers of 1024).
 * Returns 0 and stores it, or -1 for an empty, malformed, zero, negative or
 * overflowing value. */
int tci_parse_size(const char *text, int64_t *value);

/* Parse a positive decimal integer without suffix ("4").  Returns 0 and
 * stores it, or -1. */
int tci_parse_count(const char *text, int64_t *value);

/* Parse a positive number of seconds in decimal ("2", "0.5"), below 1e9.
 * Returns 0 and stores it, or -1. */
int tci_parse_seconds(const char *text, double *value);

/* tci_parse_switch: switch.h (the MPI-IO interposer parses its own
 * switches with it too). */

/* Parse a transport name: "auto", "rma", "shm" or "mixed" (lower case).  Returns 0
 * and stores it; -1 for anything else. */
int tci_parse_transport(const char *text, tci_transport_kind *kind);

/* Parse an aggregator placement: "spread", "node", or a comma-separated
 * list of distinct non-negative ranks ("0,4,8").  For a list, stores a
 * malloc'ed array in *LIST and its length in *LEN.  Returns 0, -1 (also
 * for duplicates and lists longer than TCI_MAX_AGGREGATOR_LIST) or -2 (no
 * memory for the list). */
int tci_parse_placement(const char *text, tci_placement_kind *kind, int **list, int *len);

/* Settings given explicitly: the environment (TCIO_SEGMENT_SIZE, ...)
 * first, then the info keys.  Unset sizes and counts stay 0, early_drain
 * -1.  Returns TCIO_SUCCESS or TCIO_ERR_BAD_CONFIG (nothing to free then). */
int tci_config_from_user(MPI_Info info, tci_config *cfg);

/* The settings that depend only on the number of ranks: at most NPROCS
 * aggregators, listed ranks below NPROCS.  Returns TCIO_SUCCESS or
 * TCIO_ERR_BAD_CONFIG. */
int tci_config_check_ranks(const tci_config *cfg, int nprocs);

/* Release what tci_config_from_user allocated. */
void tci_config_free(tci_config *cfg);

/* Fill what the user left unset: segment size from the file's
 * striping_unit hint (STRIPING_UNIT, 0 if none) else 1 MiB; the default
 * segment count.  Returns TCIO_SUCCESS or TCIO_ERR_BAD_CONFIG. */
int tci_config_finish(tci_config *cfg, int64_t striping_unit);


#define TCI_ENV_COLLECTIVE_TIMEOUT "TCIO_COLLECTIVE_TIMEOUT"   /* collective.c */
#define TCI_ENV_WARN_UNKNOWN       "TCIO_WARN_UNKNOWN"
#define TCI_ENV_TEST_NODES         "TCIO_TEST_NODES"   /* aggregators.c: testing only */

/* Print one line on OUT for each TCIO_* environment variable that the
 * library does not know, and for each environment-only setting whose
 * value it cannot read (TCIO_COLLECTIVE_TIMEOUT, TCIO_WARN_UNKNOWN,
 * TCIO_TEST_NODES: they cannot fail an open), unless TCIO_WARN_UNKNOWN is
 * off.  Returns how many were reported. */
int tci_config_report_environment(FILE *out);

/* Print one line on OUT for each tcio_* key of INFO that is neither a
 * setting, nor a key that tcio_get_info reports (a program may pass its
 * info back), nor the MPI-IO interposer's tcio_mpiio, unless
 * TCIO_WARN_UNKNOWN is off: MPI ignores unknown keys, but a misspelt
 * setting of libtcio's own must not pass unsaid.  Returns how many. */
int tci_config_report_unknown_keys(MPI_Info info, FILE *out);

/* A copy of INFO without the tcio_* keys, for MPI_File_open (MPI_INFO_NULL
 * when INFO is).  Returns an MPI error code. */
int tci_config_passthrough_info(MPI_Info info, MPI_Info *out);

#endif
