/* prefetch.c - loading declared read ranges into level 2 ahead of the
 * reads.
 *
 * A range maps to segments; a segment is loaded into its slot with one
 * whole-segment read (a whole stripe with the default segment size).  A
 * hint never evicts unsaved bytes and never loads more segments than there
 * are slots to keep them: past that, the segments loaded first would be
 * evicted by the later ones before anybody read them.
 *
 * tcio_prefetch: the calling rank does the loads itself, into whichever
 * aggregator owns each segment (remote puts).
 * tcio_read_session: the ranks gather their ranges and every aggregator
 * loads the segments of the union that it owns, straight into its own
 * window, all aggregators at once (the reader/consumer split of the CkIO
 * read sessions). */
#include <stdlib.h>
#include <string.h>
#include "prefetch.h"
#include "collective.h"
#include "error.h"
#include "handle.h"

/* Segments FIRST..LAST (inclusive) of the bytes [offset, end), clipped to
 * the file's size when nobody can extend it.  Returns false if empty. */
static bool segments_of(const tcio_file *fh, MPI_Offset offset, MPI_Offset end,
                        int64_t *first, int64_t *last)
{
    if (!fh->can_write && end > fh->size_at_open)
        end = fh->size_at_open;
    if (end <= offset)
        return false;
    *first = offset / fh->map.segment_size;
    *last = (end - 1) / fh->map.segment_size;
    return true;
}

static int prefetch_one(tcio_file *fh, tci_level2 *l2, int64_t segment)
{
    bool loaded = false;
    int rc = tci_level2_prefetch(fh, l2, segment, &loaded);
    if (loaded)
        fh->stats.count[TCI_C_PREFETCHED]++;
    return rc;
}

/* Where tcio_prefetch loads: the caller's node's tier for a file opened
 * MPI_MODE_RDONLY on several nodes without a read session, where its
 * node's reads look (the aggregators of such a file serve nobody, and the
 * other nodes' fetches read the file: level2.h,
 * tci_level2_reached_by_others); else the file's level 2, whose slots
 * every rank's reads look in. */
static tci_level2 *prefetch_target(tcio_file *fh)
{
    return tci_level2_reached_by_others(fh) ? &fh->l2 : &fh->node;
}

int tci_prefetch_range(tcio_file *fh, MPI_Offset offset, MPI_Offset length)
{
    int64_t first, last;
    tci_level2 *l2 = prefetch_target(fh);
    if (!segments_of(fh, offset, offset + length, &first, &last))
        return TCIO_SUCCESS;
    /* Consecutive segments map to distinct slots for A x N of them (A the
     * aggregators, or the node's ranks for its tier). */
    int64_t capacity = (int64_t)l2->t.map->naggregators * l2->t.map->nslots;
    if (last - first >= capacity)
        last = first + capacity - 1;
    double t0 = MPI_Wtime();
    int rc = TCIO_SUCCESS;
    for (int64_t k = first; k <= last && rc == TCIO_SUCCESS; k++) {
        rc = prefetch_one(fh, l2, k);
        if (rc != TCIO_SUCCESS)
            tci_error_explain(rc, "loading segment %lld into level 2", (long long)k);
    }
    fh->stats.time[TCI_T_PREFETCH] += MPI_Wtime() - t0;
    return rc;
}

/* ---- read sessions ---------------------------------------------------------- */

typedef struct range {
    MPI_Offset start, end;      /* gathered as two MPI_OFFSETs */
} range;

_Static_assert(sizeof(range) == 2 * sizeof(MPI_Offset), "range must have no padding");

static int by_start(const void *a, const void *b)
{
    MPI_Offset x = ((const range *)a)->start, y = ((const range *)b)->start;
    return (x > y) - (x < y);
}

/* Sort the N ranges and merge overlapping or touching ones, dropping empty
 * ones.  Returns how many remain. */
static int merge_ranges(range *r, int n)
{
    qsort(r, (size_t)n, sizeof *r, by_start);
    int out = 0;
    for (int i = 0; i < n; i++) {
        if (r[i].end <= r[i].start)
            continue;
        if (out > 0 && r[i].start <= r[out - 1].end) {
            if (r[i].end > r[out - 1].end)
                r[out - 1].end = r[i].end;
        } else {
            r[out++] = r[i];
        }
    }
    return out;
}

/* The aggregator loads its segments of the merged ranges in file order,
 * one per slot: a later segment whose slot is taken is left to the lazy
 * reads. */
static int load_own_segments(tcio_file *fh, const range *r, int n)
{
    int64_t nslots = fh->l2.t.local_slots, used = 0;
    bool *taken = calloc((size_t)nslots, sizeof *taken);
    if (!taken)
        return tci_error_set(TCIO_ERR_NO_MEMORY, "no memory for the table of %lld slots",
                             (long long)nslots);
    int64_t naggr = fh->map.naggregators, mine = fh->aggr.index;
    int rc = TCIO_SUCCESS;
    for (int i = 0; i < n && used < nslots && rc == TCIO_SUCCESS; i++) {
        int64_t first, last;
        if (!segments_of(fh, r[i].start, r[i].end, &first, &last))
            continue;
        /* The first segment at or after FIRST that this aggregator owns. */
        int64_t k = first + ((mine - first % naggr) + naggr) % naggr;
        for (; k <= last && used < nslots && rc == TCIO_SUCCESS; k += naggr) {
            int64_t slot = tci_segmap_locate(&fh->map, k).slot;
            if (taken[slot])
                continue;
            taken[slot] = true;
            used++;
            rc = prefetch_one(fh, &fh->l2, k);
            if (rc != TCIO_SUCCESS)
                tci_error_explain(rc, "loading segment %lld into level 2", (long long)k);
        }
    }
    free(taken);
    return rc;
}

int tci_prefetch_session(tcio_file *fh, MPI_Offset offset, MPI_Offset length)
{
    double t0 = MPI_Wtime();
    /* Set before the first collective, so that no rank leaves the session
     * before every rank counts its level 2 as served again. */
    fh->read_session = true;
    tci_level2_update_serving(fh);
    range mine = { offset, offset + length };
    range *all = malloc((size_t)fh->nprocs * sizeof *all);
    /* Agree on the buffer first: a rank without one cannot take part in
     * the gather. */
    int missing = all == NULL, any_missing = 1;
    int err = tci_allreduce(&missing, &any_missing, 1, MPI_INT, MPI_MAX, fh->comm);
    int rc = err != MPI_SUCCESS ? tci_error_from_mpi(err)
           : missing ? tci_error_set(TCIO_ERR_NO_MEMORY, "no memory for the ranges of %d ranks",
                                     fh->nprocs)
           : any_missing ? tci_error_set(TCIO_ERR_REMOTE, "another rank had no memory for the "
                                         "ranges of the read session")
           : TCIO_SUCCESS;
    if (rc == TCIO_SUCCESS) {
        MPI_Request req;
        int gather_err = MPI_Iallgather(&mine, 2, MPI_OFFSET, all, 2, MPI_OFFSET, fh->comm, &req);
        rc = tci_error_from_mpi(gather_err != MPI_SUCCESS ? gather_err
                                                          : tci_collective_wait(&req));
    }
    if (rc == TCIO_SUCCESS && fh->aggr.index >= 0)
        rc = load_own_segments(fh, all, merge_ranges(all, fh->nprocs));
    free(all);
    fh->stats.time[TCI_T_PREFETCH] += MPI_Wtime() - t0;
    return rc;
}

/* ---- tcio_prefetch and tcio_read_session ---------------------------------- */

/* Arguments of a prefetch on an open handle (and its sticky failure). */
static int check_prefetch(const tcio_file *fh, MPI_Offset offset, MPI_Offset length)
{
    if (fh->failure != TCIO_SUCCESS)
        return tci_failed_earlier(fh);
    if (!fh->can_read)
        return tci_error_set(TCIO_ERR_WRITE_ONLY, "the file was opened MPI_MODE_WRONLY");
    if (offset < 0)
        return tci_error_set(TCIO_ERR_BAD_ARG, "offset %lld is negative", (long long)offset);
    if (length < 0)
        return tci_error_set(TCIO_ERR_BAD_ARG, "length %lld is negative", (long long)length);
    if (offset > fh->max_end - length)
        return tci_error_set(TCIO_ERR_BAD_ARG, "offset %lld plus length %lld ends past the "
                             "largest addressable offset %lld", (long long)offset,
                             (long long)length, (long long)fh->max_end);
    return TCIO_SUCCESS;
}

static int prefetch_call(tcio_file *fh, MPI_Offset offset, MPI_Offset length)
{
    if (!fh || !tci_handle_is_open(fh))
        return tci_error_bad_handle(fh);
    int rc = check_prefetch(fh, offset, length);
    return rc != TCIO_SUCCESS ? rc : tci_prefetch_range(fh, offset, length);
}

static int read_session_call(tcio_file *fh, MPI_Offset offset, MPI_Offset length)
{
    if (!fh || !tci_handle_is_open(fh))
        return tci_error_bad_handle(fh);
    tci_collective_enter("tcio_read_session");
    /* A rank with bad arguments (or a failed handle) still takes part,
     * declaring nothing. */
    int rc = check_prefetch(fh, offset, length);
    if (rc != TCIO_SUCCESS)
        offset = length = 0;
    double waited0 = tci_collective_waited();
    int session_rc = tci_prefetch_session(fh, offset, length);
    rc = tci_collective_result(fh->comm, rc != TCIO_SUCCESS ? rc : session_rc);
    /* Late ranks in the session's collective steps, as in every other
     * collective call's (doc/configuration.md). */
    fh->stats.time[TCI_T_COLLECTIVE_WAITS] += tci_collective_waited() - waited0;
    return rc;
}

/* ---- the public calls ---------------------------------------------------- */

int tcio_prefetch(tcio_file *fh, MPI_Offset offset, MPI_Offset length)
{
    return tci_error_note("tcio_prefetch", prefetch_call(fh, offset, length));
}

int tcio_read_session(tcio_file *fh, MPI_Offset offset, MPI_Offset length)
{
    int rc = read_session_call(fh, offset, length);
    tci_collective_leave();
    return tci_error_note("tcio_read_session", rc);
}
