/* aggregators.h - which ranks hold level-2 segments and write the file. */
#ifndef TCIO_AGGREGATORS_H
#define TCIO_AGGREGATORS_H

#include <stdbool.h>
#include <stdint.h>
#include <mpi.h>
#include "configuration.h"

typedef struct tci_aggregators {
    int  count;    /* A: segment k belongs to ranks[k % A] */
    int *ranks;    /* distinct ranks of the file's communicator */
    int  index;    /* this rank's position in RANKS, -1 if not an aggregator */
    int  nnodes;   /* nodes the communicator spans */
    int  nprocs;
    int *node_of;  /* the node of every rank (NPROCS entries) */
} tci_aggregators;

/* The default number of aggregators for NPROCS ranks on NNODES nodes and
 * a file striped over STRIPE_FACTOR storage targets (0 if unknown): see
 * doc/configuration.md for the reasoning. */
int tci_aggregators_default(int nprocs, int nnodes, int64_t stripe_factor);

/* Collective over COMM unless CACHE_COMM (the same ranks: the user's
 * communicator, of which COMM is a private duplicate) has the node map
 * cached: choose the aggregators from the configuration (count,
 * placement, list; a count of 0 takes the default for STRIPE_FACTOR).
 * Returns TCIO_SUCCESS, TCIO_ERR_BAD_CONFIG (more aggregators than ranks,
 * a listed rank out of range), TCIO_ERR_NO_MEMORY or TCIO_ERR_MPI; every
 * rank gets the same result for the same input. */
int tci_aggregators_choose(const tci_config *cfg, MPI_Comm comm, MPI_Comm cache_comm,
                           int64_t stripe_factor, tci_aggregators *out);

/* tci_aggregators_choose in three steps, for a caller that agrees on the
 * outcome of the first in a reduction of its own (tcio_open, which needs
 * the node count before MPI_File_open to choose the transport):
 *   _prepare (local) allocates OUT's arrays for NPROCS ranks and tells
 *     whether the node map is *CACHED on CACHE_COMM on this rank; returns
 *     TCIO_SUCCESS or TCIO_ERR_NO_MEMORY;
 *   _find_nodes runs only when _prepare succeeded on every rank, with
 *     CACHED_EVERYWHERE true only when the map was cached on every rank:
 *     then it copies the map (local, no MPI call), else it finds the nodes
 *     collectively over COMM (MPI_Comm_split_type, then MPI_Iallgather
 *     waited for yielding) and caches the map on CACHE_COMM.  Sets
 *     OUT->nnodes and OUT->node_of; returns TCIO_SUCCESS or TCIO_ERR_MPI,
 *     the same on every rank;
 *   _choose_agreed (local) places the aggregators on those nodes. */
int tci_aggregators_prepare(MPI_Comm cache_comm, int nprocs, tci_aggregators *out,
                            bool *cached);
int tci_aggregators_find_nodes(MPI_Comm comm, MPI_Comm cache_comm, bool cached_everywhere,
                               tci_aggregators *out);
int tci_aggregators_choose_agreed(const tci_config *cfg, MPI_Comm comm, int64_t stripe_factor,
                                  tci_aggregators *out);

/* Keep A's node map as an attribute of COMM for later opens (freed with
 * COMM).  Call only once every rank has the map: a rank that finds it
 * cached skips the collectives that find it. */
void tci_aggregators_cache_nodes(MPI_Comm comm, const tci_aggregators *a);

/* A checksum of the choice, for checking that all ranks agree. */
int64_t tci_aggregators_digest(const tci_aggregators *a);

/* A checksum of the node map (0 without one): each node's ranks make its
 * combining tier's communicator from their own copy of it (combiner.c),
 * so every rank must hold the same. */
int64_t tci_aggregators_nodes_digest(const tci_aggregators *a);

/* TCIO_TEST_NODES as the node map uses it (testing only): the parts each
 * node is cut into, 0 for none.  Local; the open agrees on it before the
 * nodes are found, so that every rank cuts them alike. */
int tci_aggregators_test_nodes(void);

void tci_aggregators_free(tci_aggregators *a);

#endif
