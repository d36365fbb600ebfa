/* aggregators.c - choosing the ranks that hold level-2 segments.
 *
 * Placements:
 *   spread  A ranks evenly spaced over the communicator, i * P / A (the
 *           activePEs/skipPEs layout of the Charm++ output paper), the
 *           ranks counted node by node;
 *   node    the same number on every node (nodes found with
 *           MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)), evenly spaced
 *           within each node and ordered so that consecutive segments go
 *           to different nodes;
 *   list    the ranks the user listed, in that order. */
#include <stdbool.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "tcio.h"
#include "aggregators.h"
#include "collective.h"
#include "error.h"
#include "finalize.h"
#include "configuration.h"

/* The rank in COMM of LOCAL's first member (LOCAL keeps COMM's order, so
 * it is the node's smallest rank), or -1: local calls only, so that a rank
 * for which one fails cannot leave its node's other ranks in a collective. */
static int node_leader(MPI_Comm comm, MPI_Comm local)
{
    MPI_Group local_group, comm_group;
    int first = 0, leader = -1;
    if (MPI_Comm_group(local, &local_group) != MPI_SUCCESS)
        return -1;
    if (MPI_Comm_group(comm, &comm_group) == MPI_SUCCESS) {
        if (MPI_Group_translate_ranks(local_group, 1, &first, comm_group, &leader) !=
                MPI_SUCCESS || leader == MPI_UNDEFINED)
            leader = -1;
        MPI_Group_free(&comm_group);
    }
    MPI_Group_free(&local_group);
    return leader;
}

/* TCIO_TEST_NODES=K (testing only, doc/configuration.md): every node is
 * cut further into the parts of K blocks of consecutive ranks, so that one
 * machine shows the multi-node protocols (the mixed transport) under any
 * MPI; Open MPI has nothing like MPICH's MPIR_CVAR_NUM_CLIQUES.  A
 * refinement of the real nodes only: ranks of different nodes never end up
 * on one, so shared memory is never asked for across machines.  Every rank
 * sees the same environment under mpiexec; ranks that do not are refused
 * by the open's first agreement, before the nodes are found (its value is
 * one of the settings agreed there: tci_aggregators_test_nodes).
 * Returns the node count. */
int tci_aggregators_test_nodes(void)
{
    /* A value that is not a count ("2x") is unset, as the first open says
     * (tci_config_report_environment). */
    int64_t k = 0;
    if (tci_parse_count(getenv(TCI_ENV_TEST_NODES), &k) != 0)
        k = 0;
    return k > 1 && k <= INT_MAX ? (int)k : 0;
}

static int split_for_testing(int nprocs, int nnodes, int *node_of, int *scratch)
{
    long k = tci_aggregators_test_nodes();
    if (k <= 1 || k > nprocs)
        return nnodes;
    /* A new node per (node, block of ranks), numbered in order of first
     * appearance.  The blocks come in rank order, so a pair is new exactly
     * when its node got no number yet in the current block: SCRATCH holds
     * each node's last number, and the numbers of the current block are
     * the ones from FIRST on (no allocation: a rank that could not cut as
     * the others do would disagree with them on the nodes). */
    int *last = scratch;
    for (int n = 0; n < nnodes; n++)
        last[n] = -1;
    int parts = 0, first = 0;
    long block = -1;
    for (int r = 0; r < nprocs; r++) {
        long b = (long)r * k / nprocs;
        if (b != block) {
            block = b;
            first = parts;
        }
        int n = node_of[r];
        if (last[n] < first)
            last[n] = parts++;
        node_of[r] = last[n];
    }
    return parts;
}

/* The node of every rank, numbered in order of first appearance: NODE_OF
 * gets P entries (SCRATCH: P more, for TCIO_TEST_NODES).  Returns the
 * number of nodes, or -1 on an MPI error.  A
 * rank whose split or leader lookup failed still joins the gather, with -1
 * for its leader, so that every rank returns -1 alike and no rank goes on
 * to a collective the others skip (a failure of the gather itself cannot
 * be agreed on: MPI's errors there are fatal in practice). */
static int find_nodes(MPI_Comm comm, int nprocs, int *node_of, int *scratch)
{
    MPI_Comm local;
    int leader = -1;
    /* Key 0 keeps COMM's order inside each node. */
    int err = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    if (err == MPI_SUCCESS) {
        leader = node_leader(comm, local);
        MPI_Comm_free(&local);
    } else {
        /* MPI's reason (MPICH: out of context ids, "Too many
         * communicators") reaches the caller's message. */
        tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Comm_split_type (finding the "
                                        "nodes of the communicator)", err);
    }
    /* Nonblocking, waited for yielding (collective.c): a blocking gather
     * spins where ranks share cores, and the first open of a communicator
     * waits here for every rank's split. */
    MPI_Request req;
    if (MPI_Iallgather(&leader, 1, MPI_INT, node_of, 1, MPI_INT, comm, &req) != MPI_SUCCESS ||
        tci_collective_wait(&req) != MPI_SUCCESS)
        return -1;
    for (int r = 0; r < nprocs; r++)
        if (node_of[r] < 0 || node_of[r] > r)
            return -1;
    /* Leaders are increasing in order of first appearance: a leader is the
     * smallest rank of its node, so it appears first at its own rank. */
    int nnodes = 0;
    for (int r = 0; r < nprocs; r++)
        node_of[r] = node_of[r] == r ? nnodes++ : node_of[node_of[r]];
    return split_for_testing(nprocs, nnodes, node_of, scratch);
}

/* ---- the node map, cached on the user's communicator ----------------------
 * Finding the nodes costs two collectives (about a third of tcio_open
 * with oversubscribed ranks), and codes open many files on one
 * communicator: the map is kept as an attribute of it, freed with it. */

typedef struct node_cache {
    int nprocs, nnodes;
    int node_of[];
} node_cache;

static int node_keyval = MPI_KEYVAL_INVALID;   /* freed at MPI_Finalize */

static int free_node_cache(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    free(value);
    return MPI_SUCCESS;
}

static void free_node_keyval(void)
{
    MPI_Comm_free_keyval(&node_keyval);   /* the caches go with their comms */
}

static const node_cache *cached_nodes(MPI_Comm comm, int nprocs)
{
    void *value = NULL;
    int found = 0;
    if (node_keyval == MPI_KEYVAL_INVALID ||
        MPI_Comm_get_attr(comm, node_keyval, &value, &found) != MPI_SUCCESS || !found)
        return NULL;
    const node_cache *c = value;
    return c->nprocs == nprocs ? c : NULL;
}

void tci_aggregators_cache_nodes(MPI_Comm comm, const tci_aggregators *a)
{
    if (a->nnodes <= 0 || !a->node_of || cached_nodes(comm, a->nprocs))
        return;
    if (node_keyval == MPI_KEYVAL_INVALID) {
        if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_node_cache, &node_keyval,
                                   NULL) != MPI_SUCCESS) {
            node_keyval = MPI_KEYVAL_INVALID;
            return;
        }
        if (tci_at_finalize(free_node_keyval) != 0) {
            free_node_keyval();
            return;
        }
    }
    node_cache *c = malloc(sizeof *c + (size_t)a->nprocs * sizeof c->node_of[0]);
    if (!c)
        return;   /* the next open on COMM finds the nodes again, on every
                     rank: tci_aggregators_choose agrees on the cache first */
    c->nprocs = a->nprocs;
    c->nnodes = a->nnodes;
    memcpy(c->node_of, a->node_of, (size_t)a->nprocs * sizeof c->node_of[0]);
    if (MPI_Comm_set_attr(comm, node_keyval, c) != MPI_SUCCESS)
        free(c);
}

/* One reduction before anything else collective: a rank without memory
 * must not skip find_nodes' collectives while the others run them, and a
 * node map cached on some ranks only (caching it can fail) must be found
 * again by all of them.  Returns TCIO_SUCCESS, TCIO_ERR_NO_MEMORY (on
 * every rank if any lacks memory) or TCIO_ERR_MPI; *EVERYWHERE says
 * whether every rank has the map cached. */
static int agree_before_nodes(MPI_Comm comm, bool no_memory, bool cached, bool *everywhere)
{
    int mine[2] = { no_memory, !cached }, any[2];
    if (tci_allreduce(mine, any, 2, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return TCIO_ERR_MPI;
    *everywhere = !any[1];
    return any[0] ? TCIO_ERR_NO_MEMORY : TCIO_SUCCESS;
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

/* COUNT ranks evenly spaced over the ranks taken node by node (each
 * node's in rank order): i * P / A of that order.  Where ranks fill the
 * nodes in blocks (the usual mapping) this is i * P / A itself; where they
 * are dealt round robin (mpiexec's --map-by node, MPICH's cliques) it
 * still spreads the aggregators over the nodes, instead of putting them
 * all on the nodes that the evenly spaced ranks happen to share.
 * Returns COUNT, or -1 without memory. */
static int place_spread(int count, int nprocs, int nnodes, const int *node_of, int *ranks)
{
    int *start = calloc((size_t)nnodes + 1, sizeof *start);
    int *order = malloc((size_t)nprocs * sizeof *order);
    if (!start || !order) {
        free(start);
        free(order);
        return -1;
    }
    for (int r = 0; r < nprocs; r++)          /* a counting sort by node */
        start[node_of[r] + 1]++;
    for (int n = 0; n < nnodes; n++)
        start[n + 1] += start[n];
    for (int r = 0; r < nprocs; r++)
        order[start[node_of[r]]++] = r;
    for (int i = 0; i < count; i++)
        ranks[i] = order[(int64_t)i * nprocs / count];
    free(start);
    free(order);
    return count;
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
            return tci_error_set(TCIO_ERR_BAD_CONFIG, "tcio_aggregator_placement lists rank "
                                 "%d, but the communicator has only %d ranks", cfg->list[i],
                                 nprocs);
        ranks[i] = cfg->list[i];
    }
    return TCIO_SUCCESS;
}

int tci_aggregators_prepare(MPI_Comm cache_comm, int nprocs, tci_aggregators *out,
                            bool *cached)
{
    memset(out, 0, sizeof *out);
    out->index = -1;
    out->nprocs = nprocs;
    out->node_of = malloc((size_t)nprocs * sizeof *out->node_of);
    out->ranks = malloc((size_t)nprocs * sizeof *out->ranks);
    *cached = cached_nodes(cache_comm, nprocs) != NULL;
    return out->node_of && out->ranks ? TCIO_SUCCESS : TCIO_ERR_NO_MEMORY;
}

int tci_aggregators_find_nodes(MPI_Comm comm, MPI_Comm cache_comm, bool cached_everywhere,
                               tci_aggregators *out)
{
    const node_cache *cache = cached_everywhere ? cached_nodes(cache_comm, out->nprocs) : NULL;
    if (cache) {
        memcpy(out->node_of, cache->node_of, (size_t)out->nprocs * sizeof out->node_of[0]);
        out->nnodes = cache->nnodes;
        return TCIO_SUCCESS;
    }
    /* RANKS is the nodes' scratch until the aggregators are placed. */
    out->nnodes = find_nodes(comm, out->nprocs, out->node_of, out->ranks);
    if (out->nnodes < 0)
        return TCIO_ERR_MPI;
    tci_aggregators_cache_nodes(cache_comm, out);   /* every rank has the map now */
    return TCIO_SUCCESS;
}

int tci_aggregators_choose_agreed(const tci_config *cfg, MPI_Comm comm, int64_t stripe_factor,
                                  tci_aggregators *out)
{
    int nprocs = out->nprocs, me;
    MPI_Comm_rank(comm, &me);
    int rc = TCIO_SUCCESS;
    int count = cfg->aggregators > 0 ? (int)cfg->aggregators
                                     : tci_aggregators_default(nprocs, out->nnodes, stripe_factor);
    if (out->nnodes <= 0)
        rc = tci_error_set(TCIO_ERR_MPI, "the nodes of the communicator are not known");
    else if (count > nprocs)
        rc = tci_error_set(TCIO_ERR_BAD_CONFIG, "%d aggregators asked for, more than the %d "
                           "ranks of the communicator", count, nprocs);
    else if (cfg->placement == TCI_PLACE_LIST)
        rc = place_list(cfg, nprocs, out->ranks);
    else if (cfg->placement == TCI_PLACE_NODE)
        count = place_on_nodes(count, nprocs, out->nnodes, out->node_of, out->ranks);
    else
        count = place_spread(count, nprocs, out->nnodes, out->node_of, out->ranks);
    if (rc == TCIO_SUCCESS && count < 0)
        rc = tci_error_set(TCIO_ERR_NO_MEMORY, "no memory to place the aggregators on %d "
                           "nodes", out->nnodes);
    out->count = rc == TCIO_SUCCESS ? count : 0;
    for (int i = 0; i < out->count; i++)
        if (out->ranks[i] == me)
            out->index = i;
    return rc;
}

int tci_aggregators_choose(const tci_config *cfg, MPI_Comm comm, MPI_Comm cache_comm,
                           int64_t stripe_factor, tci_aggregators *out)
{
    int nprocs;
    MPI_Comm_size(comm, &nprocs);
    bool cached, everywhere;
    int rc = tci_aggregators_prepare(cache_comm, nprocs, out, &cached);
    rc = agree_before_nodes(comm, rc != TCIO_SUCCESS, cached, &everywhere);
    if (rc == TCIO_SUCCESS)
        rc = tci_aggregators_find_nodes(comm, cache_comm, everywhere, out);
    if (rc != TCIO_SUCCESS)
        return rc;                      /* the caller agrees on the outcome */
    return tci_aggregators_choose_agreed(cfg, comm, stripe_factor, out);
}

/* FNV-1a over N ints, kept non-negative (the agreements negate it). */
static int64_t digest_of(const int *values, int n)
{
    uint64_t h = 1469598103934665603u;
    for (int i = 0; i < n; i++) {
        h ^= (uint64_t)values[i];
        h *= 1099511628211u;
    }
    return (int64_t)(h >> 1);
}

int64_t tci_aggregators_digest(const tci_aggregators *a)
{
    return digest_of(a->ranks, a->count);
}

int64_t tci_aggregators_nodes_digest(const tci_aggregators *a)
{
    return a->node_of ? digest_of(a->node_of, a->nprocs) : 0;
}

void tci_aggregators_free(tci_aggregators *a)
{
    free(a->ranks);
    free(a->node_of);
    a->ranks = NULL;
    a->node_of = NULL;
    a->count = 0;
}
