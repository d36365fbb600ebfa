/* combiner.c - a node's combining tier (combiner.h; doc/design.md,
 * "Several nodes: the combining tier").
 *
 * The tier is a second level 2 (FH->node) in front of the file's (FH->l2):
 * the shm transport over the node's ranks, every segment of the file
 * mapped onto the node's slots, and the far side of its slots is not the
 * file but the segment's slot in the file's level 2, reached with the rma
 * transport.  So every path by which a segment leaves a level 2 (a spill
 * when its slot is claimed for another segment, the node's share complete,
 * tcio_flush, the close) is one forward (forward.c): the node's combined
 * bytes and their bitmap, merged under the aggregator's lock as one move,
 * or staged and sent without waiting (tcio_forward_staging); and every
 * load of a slot is one fetch of the span its readers want (the whole
 * segment when that is most of it), with the node's staged forwards not
 * merged yet laid over it.  State words never see both kinds of atomics: the
 * tier's are only ever touched by the node's CPUs, the file's level 2's
 * only by MPI (its owners' own accesses included).
 *
 * A forward runs while its mover holds the tier's slot: the one place
 * where a rank holds two slot locks, always the tier's first and the file's
 * level 2's second (with the aggregator's forward lock between them,
 * forward.c), and no one takes them in the other order (a mover into the
 * file's level 2 never touches the tier), so they cannot deadlock.
 * Its one-sided operations may need the target's MPI progress, and that
 * target may be a rank of this node waiting for the tier slot held:
 * waiters for tier slots therefore turn MPI's progress engine
 * (tci_transport_wait_progress). */
#include <stdlib.h>
#include "combiner.h"
#include "forward.h"
#include "collective.h"
#include "comm_cache.h"
#include "error.h"
#include "file.h"
#include "owner.h"
#include "slot_drain.h"

/* ---- the far side of the tier's slots ------------------------------------- */

/* The tier's spill, and its drains': the node's combined bytes of SEGMENT
 * (DATA where BITMAP's bits are set) to the segment's slot in the file's
 * level 2 (forward.c: staged and sent, or merged under the aggregator's
 * lock). */
static int forward(tcio_file *fh, int64_t segment, const char *data,
                   const unsigned char *bitmap)
{
    double t0 = MPI_Wtime(), waited0 = fh->l2.t.op_wait_seconds;
    int rc = tci_forward_send(fh, segment, data, bitmap);   /* counts itself */
    fh->stats.time[TCI_T_FORWARDS] += MPI_Wtime() - t0;
    fh->stats.time[TCI_T_FORWARD_WAITS] += fh->l2.t.op_wait_seconds - waited0;
    return tci_error_explain(rc, "forwarding the node's bytes of segment %lld to its "
                             "aggregator", (long long)segment);
}

/* The tier's spill: a forward that frees its slot for another segment
 * (the node's ranks wrote more segments at once than the tier holds), so
 * the segment may be forwarded again when they write more of it. */
static int forward_to_free(tcio_file *fh, int64_t segment, const char *data,
                           const unsigned char *bitmap)
{
    int64_t forwards = fh->stats.count[TCI_C_FORWARDS];
    int rc = forward(fh, segment, data, bitmap);
    /* as the forward counted itself (not where it had nothing to send) */
    fh->stats.count[TCI_C_TIER_SPILLS] += fh->stats.count[TCI_C_FORWARDS] - forwards;
    return rc;
}

/* A fetch's segment, for the node's staged forwards laid over it. */
typedef struct fetched {
    int64_t segment;
    char   *buf;
} fetched;

static int overlay_staged(tcio_file *fh, void *arg)
{
    const fetched *f = arg;
    return tci_forward_overlay(fh, f->segment, f->buf);
}

/* The tier's load: the bytes [LO, HI) of the segment from the file's
 * level 2, with this node's forwards of it that its aggregator has not
 * merged yet (laid over the whole of BUF). */
static int fetch(tcio_file *fh, int64_t segment, char *buf, int lo, int hi)
{
    double waited0 = fh->l2.t.op_wait_seconds;
    fetched f = { .segment = segment, .buf = buf };
    tci_under_lock overlay = { .run = overlay_staged, .arg = &f };
    int rc = tci_level2_fetch(fh, segment, buf, lo, hi,
                              tci_forward_staged(fh, segment) ? &overlay : NULL);
    fh->stats.time[TCI_T_FETCH_WAITS] += fh->l2.t.op_wait_seconds - waited0;
    return tci_error_explain(rc, "fetching segment %lld from its aggregator for this node",
                             (long long)segment);
}

/* ---- open and free -------------------------------------------------------- */

/* The map of every segment over the ranks of the node communicator
 * FH->comb.comm.  Local. */
static int node_geometry(tcio_file *fh)
{
    tci_combiner *c = &fh->comb;
    MPI_Comm_rank(c->comm, &c->node_rank);
    MPI_Comm_size(c->comm, &c->node_size);
    c->ranks = malloc((size_t)c->node_size * sizeof *c->ranks);
    if (!c->ranks)
        return tci_error_set(TCIO_ERR_NO_MEMORY, "no memory for the node's combining tier");
    for (int i = 0; i < c->node_size; i++)
        c->ranks[i] = i;
    c->map = (tci_segmap){ .segment_size = fh->map.segment_size,
                           .naggregators = c->node_size, .aggregator_rank = c->ranks,
                           .nslots = fh->config.node_segments };
    return TCIO_SUCCESS;
}

/* The group of FH->comm's ranks on this node, in its order: local (the
 * node map is libtcio's own, TCIO_TEST_NODES included, and agreed on by
 * the open), so that its failures are agreed before the node's ranks
 * enter the collective creation.  *GROUP stays MPI_GROUP_NULL on
 * failure. */
static int node_group(const tcio_file *fh, MPI_Group *group)
{
    *group = MPI_GROUP_NULL;
    int node = fh->aggr.node_of[fh->rank], n = 0;
    int *members = malloc((size_t)fh->nprocs * sizeof *members);
    if (!members)
        return tci_error_set(TCIO_ERR_NO_MEMORY, "no memory for the ranks of this node");
    for (int r = 0; r < fh->nprocs; r++)
        if (fh->aggr.node_of[r] == node)
            members[n++] = r;
    MPI_Group all;
    int err = MPI_Comm_group(fh->comm, &all);
    if (err == MPI_SUCCESS) {
        err = MPI_Group_incl(all, n, members, group);
        MPI_Group_free(&all);
    }
    free(members);
    if (err == MPI_SUCCESS)
        return TCIO_SUCCESS;
    *group = MPI_GROUP_NULL;
    return tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Group_incl (the ranks of this node)", err);
}

/* The communicator of this node's ranks (GROUP), made by them alone:
 * MPI_Comm_create_group is collective over the group only, where
 * MPI_Comm_split gathers every rank's colour (4 ranks of 8 on two
 * "nodes" under MPICH's cliques, 4 ranks per core: 30 ms against 101; at
 * scale, the node's ranks against all of them). */
static int node_comm(tcio_file *fh, MPI_Group group)
{
    tci_combiner *c = &fh->comb;
    int err = MPI_Comm_create_group(fh->comm, group, TCI_TAG_NODE_COMM, &c->comm);
    if (err == MPI_SUCCESS)
        return TCIO_SUCCESS;
    c->comm = MPI_COMM_NULL;
    return tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Comm_create_group (the ranks of this node)", err);
}

/* The node's geometry on its communicator, and whether the node holds
 * the tier's memory.  Local. */
static int prepare(tcio_file *fh)
{
    tci_combiner *c = &fh->comb;
    int rc = node_geometry(fh);
    if (rc == TCIO_SUCCESS)
        rc = tci_forward_prepare(fh);
    if (rc != TCIO_SUCCESS)
        return rc;
    /* Each rank's part of the tier, and its share of the node's staged
     * forwards (forward.c). */
    int64_t staging = fh->config.forward_staging > 0
                          ? (int64_t)tci_staging_bytes((int)fh->config.forward_staging *
                                                           c->node_size,
                                                       fh->map.naggregators,
                                                       fh->map.segment_size)
                          : 0;
    int64_t bytes = tci_transport_shm.memory_bytes(c->map.nslots, fh->map.segment_size) +
                    (staging + c->node_size - 1) / c->node_size;
    const char *limit = tci_transport_exceeds(bytes, c->node_size);
    if (limit)
        return tci_error_set(TCIO_ERR_NO_MEMORY, "the node's combining tier and staged "
                             "forwards need %d parts of %lld bytes, more than %s",
                             c->node_size, (long long)bytes, limit);
    return TCIO_SUCCESS;
}

/* The tier's downstream: the segment's slot in the file's level 2. */
static const tci_downstream to_the_file_level2 = {
    .spill = forward_to_free, .drain = forward, .load = fetch, .is_file = false,
    .loads_spans = true
};

/* Waits for the tier's slots turn MPI's progress over the file's
 * communicator, once the tier is open or adopted. */
static void connect(tcio_file *fh)
{
    fh->node.t.progress_comm = fh->comm;
}

bool tci_combiner_adopt_kept(tcio_file *fh)
{
    tci_transport kept;
    tci_forward_kept forwards;
    if (!tci_comm_take_tier(fh->comm_entry, &kept, &fh->comb.comm, &forwards))
        return false;
    /* Taken: the tier is this handle's now, whatever follows (freed with
     * it, or kept again with the window). */
    int rc = node_geometry(fh);
    tci_level2_adopt(&fh->node, &kept, &fh->comb.map, &to_the_file_level2);
    bool forwards_fit = tci_forward_adopt(fh, &forwards);
    if (rc != TCIO_SUCCESS || !forwards_fit)
        return false;
    connect(fh);
    return true;
}

int tci_combiner_open(tcio_file *fh, bool reuse)
{
    if (reuse) {                        /* adopted before the open's agreement */
        fh->stats.count[TCI_C_REUSED_TIERS] = 1;
        return TCIO_SUCCESS;
    }
    /* A tier some ranks adopted but not all (or not with the window):
     * every rank that took one out of the cache gives it up (the cache is
     * alike on every rank, so they are all the node's ranks that held
     * one). */
    tci_combiner_free(fh);
    tci_comm_drop_tier(fh->comm_entry);
    /* Every rank of a node enters the node's collective creation, or
     * none: the group, made locally, is agreed on first. */
    MPI_Group group;
    int rc = tci_agree(fh->comm, node_group(fh, &group));
    if (rc == TCIO_SUCCESS)
        rc = node_comm(fh, group);
    if (group != MPI_GROUP_NULL)
        MPI_Group_free(&group);
    if (rc == TCIO_SUCCESS)
        rc = prepare(fh);
    rc = tci_agree(fh->comm, rc);
    if (rc != TCIO_SUCCESS)
        return rc;
    /* Every rank of the node holds slots: the node's segments spread
     * over all of them, and so do the forwards at close. */
    rc = tci_level2_open(&fh->node, &tci_transport_shm, fh->comb.comm, &fh->comb.map, true,
                         &to_the_file_level2);
    tci_error_explain(rc, "creating the node's combining tier (%lld slots of %lld bytes per "
                      "rank of the node)", (long long)fh->comb.map.nslots,
                      (long long)fh->map.segment_size);
    rc = tci_agree(fh->comm, rc);
    if (rc == TCIO_SUCCESS)
        rc = tci_forward_open(fh);
    if (rc == TCIO_SUCCESS)
        connect(fh);
    return rc;
}

void tci_combiner_keep(tcio_file *fh)
{
    tci_transport kept;
    if (!fh->node.t.ops || !tci_level2_keep(&fh->node, &kept))
        return;
    tci_forward_kept forwards;
    tci_forward_keep(fh, &forwards);
    if (tci_comm_keep_tier(fh->comm_entry, &kept, fh->comb.comm, &forwards)) {
        fh->comb.comm = MPI_COMM_NULL;       /* the cache's now */
    } else {
        tci_transport_close(&kept);
        tci_forward_kept_free(&forwards);
    }
}

void tci_combiner_free(tcio_file *fh)
{
    tci_combiner *c = &fh->comb;
    tci_level2_free(&fh->node);
    tci_forward_free(fh);
    free(c->ranks);
    c->ranks = NULL;
    if (c->comm != MPI_COMM_NULL)
        MPI_Comm_free(&c->comm);
}

/* ---- forwards ------------------------------------------------------------- */

/* Forward the segment of tier slot LOC if it is dirty (with ONLY_FULL,
 * only if the node wrote all of it) and empty the slot (the drain engine,
 * slot_drain.h), unless a failed forward left bytes in it (the failure
 * sticks to the handle). */
static int forward_slot(tcio_file *fh, tci_location loc, bool only_full)
{
    bool forwarded;
    return tci_slot_drain(fh, &fh->node, loc,
                          (tci_drain_rule){ .only_complete = only_full, .keep = false },
                          &forwarded);
}

int tci_combiner_filled(tcio_file *fh)
{
    tci_level2 *l2 = &fh->node;
    if (!l2->t.ops || !l2->filled_valid)
        return TCIO_SUCCESS;
    l2->filled_valid = false;
    return forward_slot(fh, l2->filled, true);
}

/* Whether the nodes' settles may start at different tier slots: only
 * while a node's tier spans no more segments than the file's level 2
 * (its ranks no more than the aggregators, and its slots per rank no more
 * than an aggregator's: the measured cases; the span alone would allow
 * more, unmeasured).  Then segments that two
 * nodes forward at once, fewer than a tier's span apart, never share a
 * slot of the file's level 2; with more ranks per node, two nodes'
 * staggered slots may hold segments k and k + A * nslots, one slot of the
 * file's level 2, and each would evict the other's half written segment
 * there. */
static bool stagger_applies(const tcio_file *fh)
{
    return fh->comb.node_size <= fh->map.naggregators &&
           fh->comb.map.nslots <= fh->map.nslots;
}

/* Forward every dirty slot this rank holds in the tier and empty all of
 * them (loaded ones too, so that later reads fetch what other nodes wrote
 * meanwhile).  Each node starts at its own share of the slots where that
 * is safe (stagger_applies): every node maps the segments alike, so in
 * one order all nodes would forward the same segment at once, into the
 * same aggregator's same slot, and wait for each other's lock on it.
 * A read-only file's tier holds only segments loaded from the file, which
 * nobody changes while it is open (doc/semantics.md): they stay for later
 * reads, tcio_prefetch's among them (the close's keep or free of the tier
 * empties them). */
static int drain_all(tcio_file *fh)
{
    if (!fh->node.t.ops || !fh->can_write)
        return TCIO_SUCCESS;
    int rc = TCIO_SUCCESS;
    int64_t nslots = fh->comb.map.nslots;
    int64_t first = stagger_applies(fh)
                        ? (int64_t)fh->aggr.node_of[fh->rank] * nslots / fh->aggr.nnodes
                        : 0;
    for (int64_t i = 0; i < nslots; i++) {
        tci_location loc = { .rank = fh->comb.node_rank, .slot = (first + i) % nslots };
        int slot_rc = forward_slot(fh, loc, false);
        if (rc == TCIO_SUCCESS)
            rc = slot_rc;
    }
    return rc;
}

int tci_combiner_settle(tcio_file *fh, int settled)
{
    if (!fh->node.t.ops)
        return settled;
    /* Every rank of the node has moved its level 1 into the node's tier
     * (the tier's slots hold only this node's bytes, so only its ranks
     * need to have arrived). */
    /* SETTLED's failure first, with its reason, then this step's. */
    tci_first_failure first = { 0 };
    tci_first_failure_note(&first, settled);
    tci_first_failure mine = { 0 };
    tci_first_failure_note(&mine, tci_error_from_mpi(tci_barrier(fh->comb.comm)));
    tci_first_failure_note(&mine, drain_all(fh));
    /* Every staged forward merged by its aggregator (a collective step:
     * entered even after a failure here). */
    tci_first_failure_note(&mine, tci_forward_settle(fh));
    tci_first_failure_note(&mine, tci_level2_complete_all(&fh->l2));
    int rc = tci_first_failure_result(&mine);
    tci_first_failure_note(&first, tci_error_explain(rc, "forwarding the segments of the "
                                                     "node's combining tier"));
    return tci_first_failure_result(&first);
}
