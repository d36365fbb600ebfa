/* level2.c - the level-2 window and the one-sided moves into and out of it.
 *
 * The window is opened once, at tcio_open, with a shared MPI_Win_lock_all
 * epoch that lasts until tcio_close; exclusive access to a slot comes from
 * a lock word in its header, taken with an atomic swap (MPI_REPLACE in
 * MPI_Rget_accumulate: the old word tells whether it was free).  A mover
 * holds at most one slot lock at a time and never waits, while holding it,
 * for another rank to call the library: inside the lock it may write the
 * slot's previous segment to the file and load the segment from the file,
 * both with independent MPI-IO.  Waits poll request-based operations and
 * yield the processor between polls, because with MPI libraries whose
 * one-sided operations need the target's progress engine (MPICH ch4 over
 * UCX, measured in doc/design.md) the target may be a process that shares
 * our core.  See doc/design.md for the protocol and why it cannot deadlock. */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <stdlib.h>
#include <string.h>
#include "file.h"
#include "drain.h"
#include "error.h"


/* ---- datatypes of the moves -------------------------------------------- */

/* A vector type for COUNT blocks of LEN bytes STRIDE apart, from the cache
 * or newly built and cached (evicting the oldest). */
static int cached_vector(tci_vector_cache *c, int count, int len, int stride, MPI_Datatype *type)
{
    for (int i = 0; i < c->used; i++)
        if (c->count[i] == count && c->len[i] == len && c->stride[i] == stride) {
            *type = c->type[i];
            return MPI_SUCCESS;
        }
    int err = MPI_Type_vector(count, len, stride, MPI_BYTE, type);
    if (err == MPI_SUCCESS)
        err = MPI_Type_commit(type);
    if (err != MPI_SUCCESS)
        return err;
    int slot = c->next;
    if (c->used == TCI_VECTOR_CACHE)
        MPI_Type_free(&c->type[slot]);
    else
        c->used++;
    c->type[slot] = *type;
    c->count[slot] = count;
    c->len[slot] = len;
    c->stride[slot] = stride;
    c->next = (slot + 1) % TCI_VECTOR_CACHE;
    return MPI_SUCCESS;
}

static void free_vector_cache(tci_vector_cache *c)
{
    for (int i = 0; i < c->used; i++)
        MPI_Type_free(&c->type[i]);
    c->used = c->next = 0;
}

/* Whether extents FROM..TO-1 (at least two) have one length and one
 * stride. */
static bool is_regular(const tci_extents *e, int from, int to)
{
    int stride = e->disp[from + 1] - e->disp[from];
    for (int i = from + 1; i < to; i++)
        if (e->len[i] != e->len[from] || e->disp[i] - e->disp[i - 1] != stride)
            return false;
    return true;
}

/* Regular extents framed by a first and a last one of other lengths (a
 * strided pattern cut by the segment boundaries): a struct of the first
 * extent, a cached vector of the middle ones and the last extent, built in
 * constant time.  Displacements are relative to the first extent. */
static int framed_vector(tci_level2 *l2, const tci_extents *e, MPI_Datatype *type)
{
    int n = e->count;
    MPI_Datatype middle;
    int err = cached_vector(&l2->vectors, n - 2, e->len[1], e->disp[2] - e->disp[1], &middle);
    if (err != MPI_SUCCESS)
        return err;
    int lengths[3] = { e->len[0], 1, e->len[n - 1] };
    MPI_Aint displs[3] = { 0, e->disp[1] - e->disp[0], e->disp[n - 1] - e->disp[0] };
    MPI_Datatype types[3] = { MPI_BYTE, middle, MPI_BYTE };
    err = MPI_Type_create_struct(3, lengths, displs, types, type);
    if (err == MPI_SUCCESS)
        err = MPI_Type_commit(type);
    return err;
}

/* Describe the (normalised) extents of a move as one datatype, relative
 * to the first extent: plain bytes for one extent, a cached vector for
 * equal extents at a constant stride, a struct around a cached vector when
 * only the first and last extent break the pattern, else an indexed type
 * built for this move (MPI_Type_indexed costs about 1 ms, 6M
 * instructions, for 20,000 extents). */
static int move_type(tci_level2 *l2, const tci_extents *e, tci_move_type *m)
{
    m->offset = e->disp[0];
    m->temporary = false;
    if (e->count == 1) {
        m->type = MPI_BYTE;
        m->count = e->len[0];
        return MPI_SUCCESS;
    }
    m->count = 1;
    if (is_regular(e, 0, e->count))
        return cached_vector(&l2->vectors, e->count, e->len[0], e->disp[1] - e->disp[0],
                             &m->type);
    if (e->count >= 4 && is_regular(e, 1, e->count - 1)) {
        m->temporary = true;
        return framed_vector(l2, e, &m->type);
    }
    int err = MPI_Type_indexed(e->count, e->len, e->disp, MPI_BYTE, &m->type);
    if (err == MPI_SUCCESS)
        err = MPI_Type_commit(&m->type);
    if (err == MPI_SUCCESS) {
        m->offset = 0;       /* the indexed type carries the displacements */
        m->temporary = true;
    }
    return err;
}

static void move_type_done(tci_move_type *m)
{
    if (m->temporary)
        MPI_Type_free(&m->type);
}

/* Whether the window has MPI's unified memory model, in which the memory
 * that local loads and stores reach and the memory that one-sided
 * operations reach are the same.  The owner's early drains, close drains
 * and in-place loads read and write its slots with plain loads and stores
 * (ordered by MPI_Win_sync and the slot locks); under the separate model
 * that is erroneous, so such a window is refused at open rather than
 * trusted with data.  Every MPI tested gives the unified model for
 * MPI_Win_allocate (doc/portability.md). */
static bool window_is_unified(MPI_Win win)
{
    int *model = NULL, flag = 0;
    return MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag) == MPI_SUCCESS && flag &&
           *model == MPI_WIN_UNIFIED;
}

static int bitmap_bytes_of(int64_t segment_size)
{
    return (int)(((segment_size + 7) / 8 + 7) / 8 * 8);
}

int64_t tci_level2_window_bytes(int64_t nslots, int64_t segment_size)
{
    int64_t bytes = TCI_NOTICE_BYTES +
                    nslots * (TCI_HEADER_BYTES + bitmap_bytes_of(segment_size) + segment_size);
    return (bytes + 63) / 64 * 64;
}

const char *tci_level2_exceeds(int64_t bytes, int windows)
{
    if (windows <= 0 || bytes <= 0)
        return NULL;
    if (bytes > INT64_MAX / windows)
        return "64-bit byte counts";
    int64_t total = bytes * windows;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0 && total > (int64_t)pages / 2 * page)
        return "half of this node's physical memory";
    struct rlimit as;
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY &&
        (uint64_t)total >= (uint64_t)as.rlim_cur)
        return "the address-space limit (RLIMIT_AS, ulimit -v)";
    /* MPICH and Open MPI place a node's windows in shared memory files
     * under /dev/shm: one larger than its free space would not fail at
     * MPI_Win_allocate but kill the process (SIGBUS) when first touched. */
    struct statvfs shm;
    if (statvfs("/dev/shm", &shm) == 0 && shm.f_frsize > 0 &&
        (uint64_t)total > (uint64_t)shm.f_bavail * shm.f_frsize)
        return "the free space of /dev/shm";
    return NULL;
}

static void set_geometry(tci_level2 *l2, MPI_Comm comm, int64_t nslots, int segment_size)
{
    memset(l2, 0, sizeof *l2);
    l2->win = MPI_WIN_NULL;
    l2->comm = comm;
    l2->nslots = nslots;
    l2->segment_size = segment_size;
    l2->bitmap_bytes = bitmap_bytes_of(segment_size);
}

int tci_level2_create(tci_level2 *l2, MPI_Comm comm, int64_t nslots, int segment_size,
                      bool aggregator)
{
    set_geometry(l2, comm, nslots, segment_size);
    /* MPICH 4.0.2 (ch4) places other ranks' accesses wrongly in a window
     * whose size is not a multiple of 16 bytes (doc/design.md): the size is
     * rounded up to a cache line. */
    MPI_Aint bytes = aggregator ? (MPI_Aint)tci_level2_window_bytes(nslots, segment_size) : 0;
    int err = MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, comm, &l2->base, &l2->win);
    if (err != MPI_SUCCESS) {
        l2->win = MPI_WIN_NULL;
        return tci_error_from_mpi(err);
    }
    MPI_Win_set_errhandler(l2->win, MPI_ERRORS_RETURN);
    if (!window_is_unified(l2->win))   /* tci_level2_free releases the window */
        return tci_error_set(TCIO_ERR_MPI, "MPI_Win_allocate gave the level-2 window the "
                             "separate memory model, which libtcio does not support");
    l2->local_slots = aggregator ? nslots : 0;
    MPI_Comm_rank(comm, &l2->self);
    /* Zero is the empty state, a zero counter, no notice, a clear bitmap. */
    if (aggregator)
        memset(l2->base, 0, (size_t)tci_data_disp(l2, 0));
    /* The caller synchronises all ranks before the first move, so nobody
     * reaches these slots before they are initialised. */
    err = MPI_Win_lock_all(MPI_MODE_NOCHECK, l2->win);
    if (err != MPI_SUCCESS)
        return tci_error_from_mpi(err);
    l2->epoch_open = true;
    MPI_Win_sync(l2->win);
    l2->bitmap = malloc((size_t)l2->bitmap_bytes);
    return l2->bitmap ? TCIO_SUCCESS : TCIO_ERR_NO_MEMORY;
}

int tci_level2_adopt(tci_level2 *l2, MPI_Comm comm, int64_t nslots, int segment_size,
                     bool aggregator, MPI_Win win, void *base)
{
    set_geometry(l2, comm, nslots, segment_size);
    l2->win = win;
    l2->base = base;
    l2->epoch_open = true;
    l2->local_slots = aggregator ? nslots : 0;
    MPI_Comm_rank(comm, &l2->self);
    l2->bitmap = malloc((size_t)l2->bitmap_bytes);
    return l2->bitmap ? TCIO_SUCCESS : TCIO_ERR_NO_MEMORY;
}

void tci_level2_keep(tci_level2 *l2, MPI_Win *win, void **base)
{
    /* Zero is the empty state, as after tci_level2_create.  Only the
     * owner writes its slots now (every rank's operations completed
     * before the close drain); the next open's first agreement orders
     * this before any access of the next file.  A slot whose state word
     * is still zero was never claimed (a claimed slot's state never
     * returns to zero), so its counter and bitmap are zero too: only the
     * slots this file used are cleared. */
    if (l2->win != MPI_WIN_NULL && l2->local_slots > 0) {
        memset(l2->base, 0, TCI_NOTICE_BYTES);
        for (int64_t s = 0; s < l2->local_slots; s++) {
            char *header = l2->base + tci_header_disp(l2, s);
            if (*(const int64_t *)header == 0)
                continue;
            memset(header, 0, TCI_HEADER_BYTES);
            memset(l2->base + tci_bitmap_disp(l2, s), 0, (size_t)l2->bitmap_bytes);
        }
        MPI_Win_sync(l2->win);
    }
    *win = l2->win;
    *base = l2->base;
    l2->win = MPI_WIN_NULL;
    l2->epoch_open = false;
    tci_level2_free(l2);
}

int tci_level2_complete_all(tci_level2 *l2)
{
    return tci_error_from_mpi(MPI_Win_flush_all(l2->win));
}

void tci_level2_free(tci_level2 *l2)
{
    free_vector_cache(&l2->vectors);
    if (l2->win != MPI_WIN_NULL) {
        if (l2->epoch_open)
            MPI_Win_unlock_all(l2->win);
        MPI_Win_free(&l2->win);
    }
    l2->epoch_open = false;
    free(l2->scratch);
    free(l2->loadbuf);
    free(l2->bitmap);
    l2->scratch = NULL;
    l2->loadbuf = NULL;
    l2->bitmap = NULL;
}

void tci_bitmap_set_range(unsigned char *bitmap, int from, int to)
{
    while (from < to && (from & 7)) {
        bitmap[from >> 3] |= (unsigned char)(1u << (from & 7));
        from++;
    }
    if (to - from >= 8) {
        memset(bitmap + (from >> 3), 0xff, (size_t)((to - from) >> 3));
        from += (to - from) & ~7;
    }
    while (from < to) {
        bitmap[from >> 3] |= (unsigned char)(1u << (from & 7));
        from++;
    }
}

static inline int bit_is(const unsigned char *bitmap, int i)
{
    return (bitmap[i >> 3] >> (i & 7)) & 1;
}

/* First index in [from, limit) whose bit equals WANT, skipping whole bytes
 * that cannot contain it. */
static int scan_for(const unsigned char *bitmap, int from, int limit, int want)
{
    const unsigned char skip = want ? 0x00 : 0xff;
    int i = from;
    while (i < limit) {
        if ((i & 7) == 0 && bitmap[i >> 3] == skip) {
            i += 8;
            continue;
        }
        if (bit_is(bitmap, i) == want)
            return i;
        i++;
    }
    return limit;
}

int tci_bitmap_next_run(const unsigned char *bitmap, int from, int limit, int want, int *end)
{
    int start = scan_for(bitmap, from, limit, want);
    *end = start < limit ? scan_for(bitmap, start, limit, !want) : limit;
    if (*end > limit)
        *end = limit;
    return start;
}

/* ---- waiting ------------------------------------------------------------ */

#define MAX_REQUESTS 3   /* the most a move waits for at once */

/* Give the processor away between two polls: yield for the first
 * BACKOFF_YIELDS polls (about a millisecond), then sleep BACKOFF_SLEEP_NS
 * per poll, so that a long wait for a busy target that shares our core
 * leaves the core to it; sched_yield alone does not, under Linux's fair
 * scheduler.  With 4 ranks on 2 cores and one aggregator this doubled the
 * write throughput of Table II's shape; short waits never sleep
 * (doc/design.md has the measurements). */
#define BACKOFF_YIELDS   1024
#define BACKOFF_SLEEP_NS 50000

static void back_off(int polls)
{
    if (polls < BACKOFF_YIELDS) {
        sched_yield();
        return;
    }
    struct timespec pause = { 0, BACKOFF_SLEEP_NS };
    nanosleep(&pause, NULL);
}

/* Complete request-based operations, giving the processor away between
 * polls so that a target sharing our core can run its progress engine. */
static int wait_yielding(int count, MPI_Request *requests)
{
    MPI_Status statuses[MAX_REQUESTS];   /* not MPI_STATUSES_IGNORE: gcc
                                            misreads MPICH's annotation */
    for (int polls = 0;; polls++) {
        int done = 0;
        int err = MPI_Testall(count, requests, &done, statuses);
        if (err != MPI_SUCCESS || done)
            return err;
        back_off(polls);
    }
}

/* ---- the slot lock ------------------------------------------------------- */

/* Let MPI progress other ranks' operations on our window while we wait for
 * a slot lock.  MPI promises progress to a process that is blocked in an
 * MPI call or keeps calling a test procedure (MPI_Test*, MPI_Iprobe) that
 * returns false (MPI-3.1 sections 3.7.4 and 11.7.3; MPI-4.1 section 2.9).
 * The swap of the retry loop is neither when the slot is our own: it
 * completes at once, so MPI_Testall returns true and Open MPI 4.1 never
 * enters its progress engine.  The holder's MPI_Win_flush (osc/pt2pt) or
 * release accumulate (osc/ucx with emulated atomics), which need us to
 * progress, then wait forever while we wait for them (doc/design.md).  A
 * probe that finds nothing is such a test call; libtcio sends no messages
 * on its communicator, so it never finds one. */
static void let_others_progress(tci_level2 *l2)
{
    int found = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, l2->comm, &found, MPI_STATUS_IGNORE);
}

/* Take the slot: swap TCI_STATE_LOCKED into its state word.  If the old word
 * was not LOCKED the slot is ours and the old word is its header; if it
 * was, the swap changed nothing (LOCKED over LOCKED) and we try again.
 * Only MPI_REPLACE ever touches the word, as the window's default
 * accumulate_ops (same_op_no_op) requires, and the swap is on one element,
 * which MPI makes atomic. */
int tci_level2_lock(tci_level2 *l2, tci_location loc, tci_slot_header *h)
{
    static const int64_t locked = TCI_STATE_LOCKED;
    for (int tries = 0;; tries++) {
        int64_t old;
        MPI_Request req;
        int err = MPI_Rget_accumulate(&locked, 1, MPI_INT64_T, &old, 1, MPI_INT64_T, loc.rank,
                                      tci_header_disp(l2, loc.slot), 1, MPI_INT64_T,
                                      MPI_REPLACE, l2->win, &req);
        if (err == MPI_SUCCESS)
            err = wait_yielding(1, &req);
        if (err != MPI_SUCCESS)
            return err;
        if (old != TCI_STATE_LOCKED) {
            *h = tci_state_decode(old);
            return MPI_SUCCESS;
        }
        let_others_progress(l2);
        back_off(tries);
    }
}

/* Release the slot, publishing header H in the same atomic write.  When
 * the slot's bitmap or data changed, MPI_Win_flush first makes those
 * updates complete at the owner: operations on different locations are not
 * ordered, and the next holder must not see the slot free before its
 * data.  A second MPI_Win_flush completes the release itself at the owner:
 * a completed MPI_Raccumulate request is only local completion, and in a
 * passive-target epoch MPI may hold the operation at the origin until the
 * origin's next flush or unlock (MPI-3.1 sections 11.5.4, 11.7.3); Open
 * MPI's osc/pt2pt does, so without it two ranks that each released the
 * other's slot and then waited for their own deadlocked.  The release is
 * attempted even if the first flush failed, so that an error here cannot
 * leave the slot locked for everybody. */
int tci_level2_unlock(tci_level2 *l2, tci_location loc, const tci_slot_header *h,
                      bool modified)
{
    int flush_err = modified ? MPI_Win_flush(loc.rank, l2->win) : MPI_SUCCESS;
    l2->state_out = tci_state_encode(h);
    MPI_Request req;
    int err = MPI_Raccumulate(&l2->state_out, 1, MPI_INT64_T, loc.rank,
                              tci_header_disp(l2, loc.slot), 1, MPI_INT64_T, MPI_REPLACE,
                              l2->win, &req);
    if (err == MPI_SUCCESS)
        err = wait_yielding(1, &req);   /* state_out may be reused after this */
    if (err == MPI_SUCCESS)
        err = MPI_Win_flush(loc.rank, l2->win);
    return flush_err != MPI_SUCCESS ? flush_err : err;
}

int tci_level2_notices(tci_level2 *l2, int64_t *count)
{
    static const int64_t unused = 0;
    int err = MPI_Fetch_and_op(&unused, count, MPI_INT64_T, l2->self, 0, MPI_NO_OP, l2->win);
    if (err == MPI_SUCCESS)
        err = MPI_Win_flush(l2->self, l2->win);
    return err;
}

int tci_level2_peek_states(tci_level2 *l2, int64_t *words)
{
    /* One atomic read of every header word (MPI_NO_OP is atomic per
     * element): a snapshot to decide which slots are worth locking. */
    int count = (int)(l2->local_slots * (TCI_HEADER_BYTES / 8));
    int err = MPI_Get_accumulate(NULL, 0, MPI_INT64_T, words, count, MPI_INT64_T, l2->self,
                                 tci_header_disp(l2, 0), count, MPI_INT64_T, MPI_NO_OP,
                                 l2->win);
    if (err == MPI_SUCCESS)
        err = MPI_Win_flush(l2->self, l2->win);
    return err;
}

/* Tell the owner of LOC that a segment there may be full. */
static int send_notice(tci_level2 *l2, tci_location loc)
{
    static const int64_t one = 1;
    MPI_Request req;
    int err = MPI_Raccumulate(&one, 1, MPI_INT64_T, loc.rank, 0, 1, MPI_INT64_T, MPI_SUM,
                              l2->win, &req);
    if (err == MPI_SUCCESS)
        err = wait_yielding(1, &req);
    /* As with the release: without a flush the notice may stay at the
     * origin (osc/pt2pt), and the early drain would wait for close. */
    if (err == MPI_SUCCESS)
        err = MPI_Win_flush(loc.rank, l2->win);
    return err;
}

/* ---- one-sided pieces of a move, all under the slot lock ---------------- */

/* Wait for the first N requests of REQ (all that were started), keeping
 * the first error: no request is left behind on a failure path. */
static int finish_started(int n, MPI_Request *req, int err)
{
    int wait_err = n > 0 ? wait_yielding(n, req) : MPI_SUCCESS;
    return err != MPI_SUCCESS ? err : wait_err;
}

/* The scratch segment is allocated at its first use: ranks that never
 * spill or load a written segment never hold it. */
static int have_scratch(tci_level2 *l2)
{
    if (!l2->scratch)
        l2->scratch = malloc((size_t)l2->segment_size);
    return l2->scratch ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static int fetch_bitmap_and_data(tci_level2 *l2, tci_location loc)
{
    if (have_scratch(l2) != MPI_SUCCESS)
        return MPI_ERR_NO_MEM;
    MPI_Request req[2];
    int n = 0;
    int err = MPI_Rget(l2->bitmap, l2->bitmap_bytes, MPI_BYTE, loc.rank,
                       tci_bitmap_disp(l2, loc.slot), l2->bitmap_bytes, MPI_BYTE, l2->win,
                       &req[n]);
    if (err == MPI_SUCCESS && ++n)
        err = MPI_Rget(l2->scratch, l2->segment_size, MPI_BYTE, loc.rank,
                       tci_data_disp(l2, loc.slot), l2->segment_size, MPI_BYTE, l2->win,
                       &req[n]);
    if (err == MPI_SUCCESS)
        n++;
    return finish_started(n, req, err);
}

/* The slot holds another segment with unsaved bytes: write them to the
 * file before the slot changes hands (the spill path). */
static int spill_slot(tcio_file *fh, tci_location loc, int64_t victim)
{
    int err = fetch_bitmap_and_data(&fh->l2, loc);
    if (err != MPI_SUCCESS)
        return tci_error_from_mpi(err);
    /* A failed spill keeps the victim in its slot (close tries again), but
     * the handle remembers it so that close cannot report success. */
    double t0 = MPI_Wtime();
    int rc = tci_note_failure(fh, tci_drain_segment(fh, victim, fh->l2.scratch, fh->l2.bitmap));
    fh->stats.count[TCI_C_SPILLS]++;
    fh->stats.time[TCI_T_SPILLS] += MPI_Wtime() - t0;
    return rc;
}

/* Make the locked slot hold SEGMENT, spilling its previous segment and
 * clearing its bitmap and written-byte counter.  They are cleared with
 * accumulates so that later MPI_BOR/MPI_SUM on the same bytes are ordered
 * after them.  *H becomes the header the slot must end up with (published
 * at release); on failure it is left as it was, so the release keeps the
 * victim.  *CHANGED says the slot's contents were touched. */
static int claim_slot(tcio_file *fh, tci_location loc, int64_t segment, tci_slot_header *h,
                      bool *changed)
{
    tci_level2 *l2 = &fh->l2;
    static const int64_t zero = 0;
    *changed = false;
    if (h->segment == segment)
        return TCIO_SUCCESS;
    if (h->flags & TCI_SLOT_DIRTY) {
        int rc = spill_slot(fh, loc, h->segment);
        if (rc != TCIO_SUCCESS)
            return rc;
    }
    memset(l2->bitmap, 0, (size_t)l2->bitmap_bytes);
    MPI_Request req[2];
    int n = 0;
    int err = MPI_Raccumulate(l2->bitmap, l2->bitmap_bytes, MPI_UNSIGNED_CHAR, loc.rank,
                              tci_bitmap_disp(l2, loc.slot), l2->bitmap_bytes,
                              MPI_UNSIGNED_CHAR, MPI_REPLACE, l2->win, &req[n]);
    if (err == MPI_SUCCESS && ++n)
        err = MPI_Raccumulate(&zero, 1, MPI_INT64_T, loc.rank,
                              tci_header_disp(l2, loc.slot) + TCI_WRITTEN_OFFSET, 1,
                              MPI_INT64_T, MPI_REPLACE, l2->win, &req[n]);
    if (err == MPI_SUCCESS)
        n++;
    err = finish_started(n, req, err);   /* l2->bitmap is reused at once */
    *changed = true;
    if (err != MPI_SUCCESS)
        return tci_error_from_mpi(err);
    h->segment = segment;
    h->flags = 0;
    return TCIO_SUCCESS;
}

/* OR the written extents into the slot's bitmap: one accumulate over the
 * bitmap bytes they span. */
static int mark_written(tci_level2 *l2, tci_location loc, const tci_extents *e,
                        MPI_Request *req)
{
    int lo = e->disp[0] / 8;
    int hi = (e->disp[e->count - 1] + e->len[e->count - 1] + 7) / 8;
    memset(l2->bitmap + lo, 0, (size_t)(hi - lo));
    for (int i = 0; i < e->count; i++)
        tci_bitmap_set_range(l2->bitmap, e->disp[i], e->disp[i] + e->len[i]);
    return MPI_Raccumulate(l2->bitmap + lo, hi - lo, MPI_UNSIGNED_CHAR, loc.rank,
                           tci_bitmap_disp(l2, loc.slot) + lo, hi - lo, MPI_UNSIGNED_CHAR,
                           MPI_BOR, l2->win, req);
}

/* ---- write move ---------------------------------------------------------- */

static int64_t bytes_in(const tci_extents *e)
{
    int64_t sum = 0;
    for (int i = 0; i < e->count; i++)
        sum += e->len[i];
    return sum;
}

/* Put the level-1 extents into the locked slot, OR their bits into its
 * bitmap and, with early drain, add their length to its written-byte
 * counter: all three in flight at once.  Sets TCI_SLOT_FULL in *H when the
 * counter reaches the segment size. */
static int put_extents_locked(tcio_file *fh, tci_location loc, tci_slot_header *h,
                              const tci_move_type *m, bool *modified)
{
    tci_level2 *l2 = &fh->l2;
    int rc = claim_slot(fh, loc, fh->l1.segment, h, modified);
    if (rc != TCIO_SUCCESS)
        return rc;
    *modified = true;
    int64_t moved = bytes_in(&fh->l1.extents), before = 0;
    MPI_Request req[MAX_REQUESTS];
    int n = 0;
    int err = MPI_Rput(fh->l1.buf + m->offset, m->count, m->type, loc.rank,
                       tci_data_disp(l2, loc.slot) + m->offset, m->count, m->type, l2->win,
                       &req[n]);
    if (err == MPI_SUCCESS && ++n)
        err = mark_written(l2, loc, &fh->l1.extents, &req[n]);
    if (err == MPI_SUCCESS && ++n && fh->config.early_drain) {
        err = MPI_Rget_accumulate(&moved, 1, MPI_INT64_T, &before, 1, MPI_INT64_T, loc.rank,
                                  tci_header_disp(l2, loc.slot) + TCI_WRITTEN_OFFSET, 1,
                                  MPI_INT64_T, MPI_SUM, l2->win, &req[n]);
        if (err == MPI_SUCCESS)
            n++;                  /* counted only once it has started */
    }
    err = finish_started(n, req, err);
    if (err != MPI_SUCCESS)
        return tci_error_from_mpi(err);
    h->flags |= TCI_SLOT_DIRTY;   /* published by the release */
    if (fh->config.early_drain && before + moved >= l2->segment_size)
        h->flags |= TCI_SLOT_FULL;
    fh->stats.count[TCI_C_PUTS]++;
    return TCIO_SUCCESS;
}

int tci_level2_put_writes(tcio_file *fh)
{
    tci_level1 *l1 = &fh->l1;
    if (l1->mode != TCI_L1_WRITING)
        return TCIO_SUCCESS;
    if (l1->extents.count == 0) {
        tci_level1_reset(l1);
        return TCIO_SUCCESS;
    }
    double t0 = MPI_Wtime();
    tci_drain_full_slots(fh);          /* the owner's duties first */
    if (tci_extents_normalize(&l1->extents) != 0)
        return TCIO_ERR_NO_MEMORY;
    tci_move_type m;
    int err = move_type(&fh->l2, &l1->extents, &m);
    if (err != MPI_SUCCESS)
        return tci_error_from_mpi(err);
    tci_location loc = tci_segmap_locate(&fh->map, l1->segment);
    tci_slot_header h;
    int rc = tci_error_from_mpi(tci_level2_lock(&fh->l2, loc, &h));
    if (rc == TCIO_SUCCESS) {
        bool modified = false;
        rc = put_extents_locked(fh, loc, &h, &m, &modified);
        int unlock_rc = tci_error_from_mpi(tci_level2_unlock(&fh->l2, loc, &h, modified));
        if (rc == TCIO_SUCCESS)
            rc = unlock_rc;
        /* After the release, so that the owner finds the slot free. */
        if (rc == TCIO_SUCCESS && (h.flags & TCI_SLOT_FULL))
            rc = tci_error_from_mpi(send_notice(&fh->l2, loc));
    }
    move_type_done(&m);
    if (rc == TCIO_SUCCESS)
        tci_level1_reset(l1);
    fh->stats.time[TCI_T_WRITE_MOVES] += MPI_Wtime() - t0;
    return rc;
}

/* ---- read move ----------------------------------------------------------- */

/* The slot does not hold the file's bytes yet: read the segment into SEG
 * (a segment-sized buffer), lay the bytes already written on top, and
 * store the result in the slot so later readers find it loaded.
 * NEED_COPY: the caller uses the segment in SEG afterwards. */
static int load_into_slot(tcio_file *fh, tci_location loc, tci_slot_header *h, char *seg,
                          bool need_copy)
{
    tci_level2 *l2 = &fh->l2;
    /* An aggregator loading a clean slot of its own reads the file
     * straight into its window (no copy, no put), unless the caller needs
     * the segment in SEG as well. */
    bool in_place = !need_copy && loc.rank == l2->self && !(h->flags & TCI_SLOT_DIRTY);
    if (in_place)
        seg = l2->base + tci_data_disp(l2, loc.slot);
    double t0 = MPI_Wtime();
    int rc = tci_load_segment(fh, h->segment, seg);
    fh->stats.count[TCI_C_LOADS]++;
    fh->stats.time[TCI_T_LOADS] += MPI_Wtime() - t0;
    if (rc != TCIO_SUCCESS)
        return rc;
    if (h->flags & TCI_SLOT_DIRTY) {
        int err = fetch_bitmap_and_data(l2, loc);
        if (err != MPI_SUCCESS)
            return tci_error_from_mpi(err);
        int end, start = tci_bitmap_next_run(l2->bitmap, 0, l2->segment_size, 1, &end);
        while (start < l2->segment_size) {
            memcpy(seg + start, l2->scratch + start, (size_t)(end - start));
            start = tci_bitmap_next_run(l2->bitmap, end, l2->segment_size, 1, &end);
        }
    }
    int err;
    if (in_place) {
        err = MPI_Win_sync(l2->win);   /* our stores, before the release */
    } else {
        MPI_Request req;
        err = MPI_Rput(seg, l2->segment_size, MPI_BYTE, loc.rank, tci_data_disp(l2, loc.slot),
                       l2->segment_size, MPI_BYTE, l2->win, &req);
        if (err == MPI_SUCCESS)
            err = wait_yielding(1, &req);
    }
    if (err == MPI_SUCCESS)
        h->flags |= TCI_SLOT_LOADED;   /* published by the release */
    return tci_error_from_mpi(err);
}

/* Fetch the pending extents; returns whether the slot was modified (loaded
 * or claimed), which decides if the release must flush first. */
static int get_extents_locked(tcio_file *fh, tci_location loc, tci_slot_header *h,
                              bool *modified)
{
    int rc = claim_slot(fh, loc, fh->l1.segment, h, modified);
    if (rc != TCIO_SUCCESS)
        return rc;
    if (!(h->flags & TCI_SLOT_LOADED)) {
        *modified = true;
        return load_into_slot(fh, loc, h, fh->l1.buf, true);   /* the segment stays in l1 */
    }
    tci_move_type m;
    int err = move_type(&fh->l2, &fh->l1.extents, &m);
    if (err != MPI_SUCCESS)
        return tci_error_from_mpi(err);
    MPI_Request req;
    err = MPI_Rget(fh->l1.buf + m.offset, m.count, m.type, loc.rank,
                   tci_data_disp(&fh->l2, loc.slot) + m.offset, m.count, m.type, fh->l2.win,
                   &req);
    if (err == MPI_SUCCESS)
        err = wait_yielding(1, &req);
    move_type_done(&m);
    return tci_error_from_mpi(err);
}

int tci_level2_get_reads(tcio_file *fh)
{
    tci_level1 *l1 = &fh->l1;
    if (l1->mode != TCI_L1_READING)
        return TCIO_SUCCESS;
    if (l1->nreads == 0) {
        tci_level1_reset(l1);
        return TCIO_SUCCESS;
    }
    if (tci_extents_normalize(&l1->extents) != 0)
        return TCIO_ERR_NO_MEMORY;
    double t0 = MPI_Wtime();
    tci_drain_full_slots(fh);
    tci_location loc = tci_segmap_locate(&fh->map, l1->segment);
    tci_slot_header h;
    int rc = tci_error_from_mpi(tci_level2_lock(&fh->l2, loc, &h));
    if (rc == TCIO_SUCCESS) {
        bool modified = false;
        rc = get_extents_locked(fh, loc, &h, &modified);
        int unlock_rc = tci_error_from_mpi(tci_level2_unlock(&fh->l2, loc, &h, modified));
        if (rc == TCIO_SUCCESS)
            rc = unlock_rc;
    }
    if (rc == TCIO_SUCCESS) {
        tci_level1_deliver_reads(l1);
        tci_level1_reset(l1);
        fh->stats.count[TCI_C_GETS]++;
    }
    fh->stats.time[TCI_T_READ_MOVES] += MPI_Wtime() - t0;
    return rc;
}

/* ---- prefetch ------------------------------------------------------------ */

/* Whether a prefetch of SEGMENT may take a slot holding H: never at the
 * price of a spill (a hint must not write another segment out), and only
 * when the slot does not hold the segment's file bytes already. */
static bool worth_loading(const tci_slot_header *h, int64_t segment, bool *mine)
{
    *mine = h->segment == segment;
    if (*mine)
        return !(h->flags & TCI_SLOT_LOADED);
    return !(h->flags & TCI_SLOT_DIRTY);
}

int tci_level2_prefetch(tcio_file *fh, int64_t segment, bool *loaded)
{
    tci_level2 *l2 = &fh->l2;
    *loaded = false;
    if (!l2->loadbuf && !(l2->loadbuf = malloc((size_t)l2->segment_size)))
        return TCIO_ERR_NO_MEMORY;
    tci_location loc = tci_segmap_locate(&fh->map, segment);
    tci_slot_header h;
    int rc = tci_error_from_mpi(tci_level2_lock(l2, loc, &h));
    if (rc != TCIO_SUCCESS)
        return rc;
    bool mine, modified = false;
    if (worth_loading(&h, segment, &mine)) {
        /* After a failed load the slot holds SEGMENT, not loaded: a valid
         * state, which the first read loads again. */
        rc = mine ? TCIO_SUCCESS : claim_slot(fh, loc, segment, &h, &modified);
        if (rc == TCIO_SUCCESS) {
            modified = true;
            rc = load_into_slot(fh, loc, &h, l2->loadbuf, false);
        }
        *loaded = rc == TCIO_SUCCESS;
    }
    int unlock_rc = tci_error_from_mpi(tci_level2_unlock(l2, loc, &h, modified));
    return rc != TCIO_SUCCESS ? rc : unlock_rc;
}
