/* aggregators.c - choosing the ranks that hold level-2 segments.
 *
 * Placements:
 *   spread  A ranks evenly spaced over the communicator, i * P / A (the
 *           activePEs/skipPEs layout of the Charm++ output paper);
 *   node    the same number on every node (nodes found with
 *           MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)), evenly spaced
 *           within each node and ordered so that consecutive segments go
 *           to different nodes;
 *   list    the ranks the user listed, in that order. */
#include <stdlib.h>
#include <string.h>
#include "tcio.h"
#include "aggregators.h"
#include "error.h"

/* The node of every rank, numbered in order of first appearance: NODE_OF
 * gets P entries.  Returns the number of nodes, or -1 on an MPI error. */
static int find_nodes(MPI_Comm comm, int nprocs, int *node_of)
{
    MPI_Comm local;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) !=
        MPI_SUCCESS)
        return -1;
    /* The node's name is the communicator rank of its first member. */
    int me, leader = 0;
    MPI_Comm_rank(comm, &me);
    int err = MPI_Allreduce(&me, &leader, 1, MPI_INT, MPI_MIN, local);
    MPI_Comm_free(&local);
    if (err == MPI_SUCCESS)
        err = MPI_Allgather(&leader, 1, MPI_INT, node_of, 1, MPI_INT, comm);
    if (err != MPI_SUCCESS)
        return -1;
    /* Leaders are increasing in order of first appearance: a leader is the
     * smallest rank of its node, so it appears first at its own rank. */
    int nnodes = 0;
    for (int r = 0; r < nprocs; r++)
        node_of[r] = node_of[r] == r ? nnodes++ : node_of[node_of[r]];
    return nnodes;
}

int tci_aggregators_default(int nprocs, int nnodes, int64_t stripe_factor)
{
    /* One per node, as ROMIO's cb_nodes; on a single node two, so that one
     * aggregator can drain while the other takes moves. */
    int base = nnodes > 1 ? nnodes : 2;
    if (base > nprocs)
        base = nprocs;
    if (stripe_factor <= 0)
        return base;
    /* With a known stripe count, a multiple of it (each aggregator then
     * writes one storage target) or a divisor of it (each writes its own
     * set of targets), whichever is closest below the base. */
    if (stripe_factor <= base)
        return (int)(base / stripe_factor * stripe_factor);
    for (int a = base; a > 1; a--)
        if (stripe_factor % a == 0)
            return a;
    return 1;
}

static void place_spread(int count, int nprocs, int *ranks)
{
    for (int i = 0; i < count; i++)
        ranks[i] = (int)((int64_t)i * nprocs / count);
}

/* COUNT rounded up to a multiple of the node count, at most the smallest
 * node's size per node; RANKS needs room for NPROCS entries.  Returns the
 * number placed. */
static int place_on_nodes(int count, int nprocs, int nnodes, const int *node_of, int *ranks)
{
    int *size = calloc((size_t)nnodes, sizeof *size);
    int *seen = calloc((size_t)nnodes, sizeof *seen);
    if (!size || !seen) {
        free(size);
        free(seen);
        return -1;
    }
    for (int r = 0; r < nprocs; r++)
        size[node_of[r]]++;
    int smallest = nprocs;
    for (int n = 0; n < nnodes; n++)
        if (size[n] < smallest)
            smallest = size[n];
    int per_node = (count + nnodes - 1) / nnodes;
    if (per_node > smallest)
        per_node = smallest;
    /* The j-th aggregator of node n is its member floor(j * L / per_node)
     * and gets index j * nnodes + n. */
    for (int r = 0; r < nprocs; r++) {
        int n = node_of[r], local = seen[n]++;
        for (int j = 0; j < per_node; j++)
            if ((int)((int64_t)j * size[n] / per_node) == local)
                ranks[j * nnodes + n] = r;
    }
    free(size);
    free(seen);
    return per_node * nnodes;
}

static int place_list(const tci_config *cfg, int nprocs, int *ranks)
{
    for (int i = 0; i < cfg->list_len; i++) {
        if (cfg->list[i] >= nprocs)
            return TCIO_ERR_BAD_CONFIG;
        ranks[i] = cfg->list[i];
    }
    return TCIO_SUCCESS;
}

int tci_aggregators_choose(const tci_config *cfg, MPI_Comm comm, int64_t stripe_factor,
                           tci_aggregators *out)
{
    memset(out, 0, sizeof *out);
    out->index = -1;
    int nprocs, me;
    MPI_Comm_size(comm, &nprocs);
    MPI_Comm_rank(comm, &me);
    int *node_of = malloc((size_t)nprocs * sizeof *node_of);
    out->ranks = malloc((size_t)nprocs * sizeof *out->ranks);
    if (!node_of || !out->ranks) {
        free(node_of);
        return TCIO_ERR_NO_MEMORY;      /* the caller agrees on the outcome */
    }
    int rc = TCIO_SUCCESS;
    out->nnodes = find_nodes(comm, nprocs, node_of);
    int count = cfg->aggregators > 0 ? (int)cfg->aggregators
                                     : tci_aggregators_default(nprocs, out->nnodes, stripe_factor);
    if (out->nnodes < 0)
        rc = TCIO_ERR_MPI;
    else if (count > nprocs)
        rc = TCIO_ERR_BAD_CONFIG;
    else if (cfg->placement == TCI_PLACE_LIST)
        rc = place_list(cfg, nprocs, out->ranks);
    else if (cfg->placement == TCI_PLACE_NODE)
        count = place_on_nodes(count, nprocs, out->nnodes, node_of, out->ranks);
    else
        place_spread(count, nprocs, out->ranks);
    free(node_of);
    if (rc == TCIO_SUCCESS && count < 0)
        rc = TCIO_ERR_NO_MEMORY;
    out->count = rc == TCIO_SUCCESS ? count : 0;
    for (int i = 0; i < out->count; i++)
        if (out->ranks[i] == me)
            out->index = i;
    return rc;
}

int64_t tci_aggregators_digest(const tci_aggregators *a)
{
    uint64_t h = 1469598103934665603u;     /* FNV-1a over the rank list */
    for (int i = 0; i < a->count; i++) {
        h ^= (uint64_t)a->ranks[i];
        h *= 1099511628211u;
    }
    return (int64_t)(h >> 1);
}

void tci_aggregators_free(tci_aggregators *a)
{
    free(a->ranks);
    a->ranks = NULL;
    a->count = 0;
}
