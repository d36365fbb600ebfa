/* forward.c - a node's forwards that wait for no other rank (forward.h;
 * doc/design.md, "Forwards that wait for no other rank").
 *
 * Every forward from node N to aggregator A has a sequence number, counted
 * in N's staging per aggregator; A's forward words hold, per node, the
 * last number merged ("applied"), and a lock.  Whoever merges forwards
 * into A's slots (A itself, receiving, or a forwarder of N whose staging
 * is full, or whose aggregator is itself) holds A's forward lock, reads
 * N's applied number, merges in order and raises the number under each
 * merged segment's slot lock, before the slot is released.  So:
 *   - a later forward of a segment never lands before an earlier one: A
 *     merges a message only when the one before it from the same node is
 *     merged (it holds the others, which a forward that is not staged may
 *     overtake only by merging them first, from the node's staging, where
 *     every forward stays until A acknowledged it);
 *   - a fetch of a segment under its slot lock sees the applied number
 *     that matches the slot's bytes, and lays over them exactly the staged
 *     forwards not merged yet.
 * A merges the messages it receives with its own moves' duties, whenever
 * it enters the library; nothing here waits for another rank to call the
 * library: a locked forward waits for A's MPI progress only, as every
 * one-sided operation does, and a rank waiting for its own forward lock
 * keeps its MPI progress turning for the holder.  Locks are taken in one
 * order: a tier slot, A's forward lock, a slot of A. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "forward.h"
#include "collective.h"
#include "error.h"
#include "file.h"
#include "maskcopy.h"
#include "owner.h"


/* A received forward, held until its turn, and then (its buffer given
 * back) its acknowledgement until the send completes: the acknowledgement
 * needs no memory of its own, which could run out between the merge and
 * the send. */
struct tci_held_message {
    tci_held_message *next;
    tci_forward_message *msg;    /* a receive buffer, or HEADER */
    int source;
    bool lost;                   /* only the header is held: no memory for the
                                    rest, or merged and its ack refused */
    bool merged;                 /* (or dropped) and its acknowledgement refused */
    tci_forward_message header;
    MPI_Request ack_req;
    int64_t ack_entry;           /* the payload, alive until the send completes */
};

/* The forward words of an aggregator: the lock, then per node the last
 * forward merged (byte displacements). */
static MPI_Aint lock_disp(void) { return 0; }
static MPI_Aint applied_disp(int node) { return (MPI_Aint)(1 + node) * 8; }
static size_t words_bytes(int nnodes)
{
    /* a multiple of 16: MPICH 4.0.2 misplaces puts into windows whose size
     * is not (doc/design.md) */
    return ((size_t)(1 + nnodes) * 8 + 15) / 16 * 16;
}

/* ---- the forward words ---------------------------------------------------- */

/* Complete REQ, an operation on OWNER's forward words, giving the
 * processor away between polls; the time is a wait for another rank's
 * one-sided progress (none when OWNER is this rank). */
static int wait_request(tcio_file *fh, int owner, MPI_Request *req)
{
    double start = 0;
    for (int polls = 0;; polls++) {
        int done = 0;
        int err = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS || done) {
            if (polls > 0 && owner != fh->rank)
                fh->l2.t.op_wait_seconds += MPI_Wtime() - start;
            return err;
        }
        if (polls == 0)
            start = MPI_Wtime();
        else
            tci_collective_check_wait(start, fh->comm, owner);
        tci_back_off(polls);
    }
}

/* One atomic operation on a forward word of aggregator OWNER, complete at
 * the owner on return (its old value came back): MPI_REPLACE or
 * MPI_NO_OP, the only two ever used on these words. */
static int word_op(tcio_file *fh, int owner, MPI_Aint disp, int64_t value, MPI_Op op,
                   int64_t *old)
{
    int64_t result = 0;
    MPI_Request req;
    int err = MPI_Rget_accumulate(&value, 1, MPI_INT64_T, &result, 1, MPI_INT64_T, owner, disp,
                                  1, MPI_INT64_T, op, fh->fwd.win, &req);
    if (err == MPI_SUCCESS)
        err = wait_request(fh, owner, &req);
    if (err != MPI_SUCCESS)
        return tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Rget_accumulate on an aggregator's "
                                 "forward words", err);
    if (old)
        *old = result;
    return TCIO_SUCCESS;
}

/* OWNER's forward lock: a swap of 1 until it returns 0.  Between tries
 * the whole progress engine turns: the holder's operations on this rank's
 * windows may need it (an operation on one's own window completes without
 * it, so the swap's wait alone would not). */
static int lock_owner(tcio_file *fh, int owner)
{
    double since = MPI_Wtime();
    for (int tries = 0;; tries++) {
        int64_t old = 1;
        int rc = word_op(fh, owner, lock_disp(), 1, MPI_REPLACE, &old);
        if (rc != TCIO_SUCCESS || old == 0) {
            /* Another forwarder held it: waiting for another rank
             * (staging_waits; the swaps count in one_sided_waits too).
             * Not an aggregator's wait for its own lock, which its
             * settle counts whole. */
            if (tries > 0 && owner != fh->rank)
                fh->stats.time[TCI_T_STAGING_WAITS] += MPI_Wtime() - since;
            return rc;
        }
        tci_collective_check_wait(since, fh->comm, -1);
        tci_mpi_progress(fh->comm);
        tci_back_off(tries);
    }
}

static int unlock_owner(tcio_file *fh, int owner)
{
    return word_op(fh, owner, lock_disp(), 0, MPI_REPLACE, NULL);
}

static int read_applied(tcio_file *fh, int owner, int node, int64_t *seq)
{
    return word_op(fh, owner, applied_disp(node), 0, MPI_NO_OP, seq);
}

/* ---- merging into the file's level 2 -------------------------------------- */

/* A merge's number, raised under the slot lock (tci_under_lock). */
typedef struct applied_mark {
    int owner, node;
    int64_t seq;
} applied_mark;

static int raise_applied(tcio_file *fh, void *arg)
{
    const applied_mark *m = arg;
    return word_op(fh, m->owner, applied_disp(m->node), m->seq, MPI_REPLACE, NULL);
}

/* Merge the view's bytes into their slot in the file's level 2 (with MARK,
 * the number raised under the slot lock), and have the slot written if
 * that completed it. */
static int merge_view(tcio_file *fh, tci_level1 *v, const applied_mark *mark)
{
    tci_under_lock after = { .run = raise_applied, .arg = (void *)mark };
    int rc = tci_level2_merge(fh, v, mark ? &after : NULL);
    v->buf = NULL;
    tci_level1_reset(v);
    if (rc == TCIO_SUCCESS)
        return tci_owner_filled(fh);
    /* A failed merge (its bytes are lost, and the failure sticks to the
     * handle) still counts as merged: the forwards after it must not wait
     * for it. */
    tci_note_failure(fh, rc);
    if (mark)
        raise_applied(fh, (void *)mark);
    return rc;
}

/* Aim the view at SEGMENT with BITMAP's bits as marks and DATA as its
 * bytes.  Returns whether any bit is set. */
static bool view_bitmap(tcio_file *fh, int64_t segment, const char *data,
                        const unsigned char *bitmap)
{
    tci_level1 *v = &fh->fwd.view;
    int size = (int)fh->map.segment_size;
    tci_level1_aim(v, TCI_L1_WRITING, segment, size);
    int words = (size + 63) / 64, lo = INT_MAX, hi = 0;
    for (int w = 0; w < words; w++) {
        uint64_t bits = tci_bitmap_word(bitmap, w);
        if (!bits)
            continue;
        v->marked[w] = bits;
        if (w < lo)
            lo = w;
        hi = w + 1;
    }
    v->marked_lo = lo;
    v->marked_hi = hi;
    v->buf = (char *)data;       /* read only: the merge copies out of it */
    return lo < hi;
}

/* Aim the message view at message M's bytes. */
static tci_level1 *view_message(tcio_file *fh, const tci_forward_message *m)
{
    tci_forwards *f = &fh->fwd;
    tci_level1 *v = &f->message_view;
    int64_t size = fh->map.segment_size;
    tci_level1_aim(v, TCI_L1_WRITING, m->segment, (int)size);
    int n = (int)m->nranges;
    for (int r = 0; r < n; r++) {
        const uint64_t *bits = tci_forward_message_bits(m, r);
        for (int64_t w = m->lo[r]; w < m->hi[r]; w++)
            v->marked[w] = bits[w - m->lo[r]];
    }
    v->marked_lo = (int)m->lo[0];
    v->marked_hi = (int)m->hi[n - 1];
    /* The merge reads only the bytes whose bits are set: one range's are
     * read where the message holds them ([lo * 64, ...)); several ranges'
     * are laid out at their places in the segment first. */
    if (n == 1) {
        /* The view's base lies before the message (the merge reads only
         * from [lo * 64, ...) on): formed as an integer, since pointer
         * arithmetic past the start of an object is undefined; every
         * access through it lands inside the message (GCC documents such
         * integer-made pointers as valid for the object they came from). */
        uintptr_t data = (uintptr_t)tci_forward_message_data(m, 0, size);
        v->buf = (char *)(data - (uintptr_t)(m->lo[0] * 64));
        return v;
    }
    for (int r = 0; r < n; r++)
        memcpy(f->scatter + m->lo[r] * 64, tci_forward_message_data(m, r, size),
               (size_t)(tci_forward_message_end(m, r, size) - m->lo[r] * 64));
    v->buf = f->scatter;
    return v;
}

/* Merge message M into OWNER's slot; *BYTES (if not NULL) its bytes. */
static int merge_message(tcio_file *fh, const tci_forward_message *m, int owner, int64_t *bytes)
{
    applied_mark mark = { .owner = owner, .node = (int)m->node, .seq = m->seq };
    tci_level1 *v = view_message(fh, m);
    if (bytes)
        *bytes = tci_level1_marked_bytes(v);
    return merge_view(fh, v, &mark);
}

/* Under OWNER's forward lock: merge, in order, this node's staged forwards
 * to OWNER (aggregator index AGGREGATOR) numbered below SEQ that OWNER has
 * not merged yet.  Every such forward is in the staging: a forward leaves
 * it only after OWNER acknowledged it, which it does only once it is
 * merged; one that was not staged was merged by a locked forward, which
 * raised the number past it. */
static int merge_earlier(tcio_file *fh, int owner, int aggregator, int64_t seq)
{
    tci_forwards *f = &fh->fwd;
    int64_t applied = 0;
    int rc = read_applied(fh, owner, f->node, &applied);
    if (rc != TCIO_SUCCESS)
        return rc;
    for (int64_t s = applied + 1; s < seq; s++) {
        int e = tci_staging_find(&f->staging, aggregator, s,
                                 &fh->stats.time[TCI_T_STAGING_WAITS]);
        int merge_rc = e >= 0 ? merge_message(fh, tci_staging_message(&f->staging, e), owner, NULL)
                              : tci_error_set(TCIO_ERR_MPI, "forward %lld of this node to "
                                              "rank %d is neither merged nor staged",
                                              (long long)s, owner);
        if (rc == TCIO_SUCCESS)
            rc = merge_rc;
    }
    return rc;
}

/* The locked forward: under OWNER's forward lock, the node's earlier
 * forwards to it first, then the view's bytes with the next number. */
static int locked_forward(tcio_file *fh, int owner, int aggregator)
{
    tci_forwards *f = &fh->fwd;
    int rc = lock_owner(fh, owner);
    if (rc != TCIO_SUCCESS)
        return rc;
    int64_t seq = tci_staging_next_seq(&f->staging, aggregator);
    rc = merge_earlier(fh, owner, aggregator, seq);
    /* Merged even after a failure above: its number must be used up. */
    applied_mark mark = { .owner = owner, .node = f->node, .seq = seq };
    int own_rc = merge_view(fh, &f->view, &mark);
    if (rc == TCIO_SUCCESS)
        rc = own_rc;
    int unlock_rc = unlock_owner(fh, owner);
    fh->stats.count[TCI_C_LOCKED_FORWARDS]++;
    return rc != TCIO_SUCCESS ? rc : unlock_rc;
}

/* ---- this rank's staged copies --------------------------------------------- */

/* Free every staged copy of this rank's whose send completed and whose
 * acknowledgement came. */
static int release_done(tcio_file *fh)
{
    tci_forwards *f = &fh->fwd;
    int rc = TCIO_SUCCESS;
    for (int e = 0; e < f->staging.nentries; e++) {
        if (f->sends[e] == MPI_REQUEST_NULL && !f->acked[e])
            continue;
        int done = 1;
        if (f->sends[e] != MPI_REQUEST_NULL) {
            int err = MPI_Test(&f->sends[e], &done, MPI_STATUS_IGNORE);
            if (err != MPI_SUCCESS) {
                done = 0;        /* the buffer may still be in use */
                if (rc == TCIO_SUCCESS)
                    rc = tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Test (a forward's send)", err);
            }
        }
        if (done && f->acked[e]) {
            f->acked[e] = false;
            f->pending--;
            tci_staging_release(&f->staging, e);
        }
    }
    return rc;
}

/* Take every acknowledgement that reached this rank. */
static int take_acks(tcio_file *fh)
{
    tci_forwards *f = &fh->fwd;
    for (;;) {
        int found = 0;
        MPI_Status status;
        int err = MPI_Iprobe(MPI_ANY_SOURCE, TCI_TAG_ACK, fh->comm, &found, &status);
        if (err == MPI_SUCCESS && !found)
            return TCIO_SUCCESS;
        int64_t entry = -1;
        if (err == MPI_SUCCESS)
            err = MPI_Recv(&entry, 1, MPI_INT64_T, status.MPI_SOURCE, TCI_TAG_ACK, fh->comm,
                           MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS)
            return tci_error_set_mpi(TCIO_ERR_MPI, "receiving a forward's acknowledgement", err);
        if (entry >= 0 && entry < f->staging.nentries)
            f->acked[entry] = true;
    }
}

/* ---- the aggregator's side ------------------------------------------------- */

/* Acknowledge H (merged or dropped; its buffer given back) and move it
 * to the acknowledgements on their way.  A send MPI refuses leaves H
 * where it is: the next serve tries again. */
static int send_ack(tcio_file *fh, tci_held_message *h)
{
    tci_forwards *f = &fh->fwd;
    h->ack_entry = h->msg->entry;
    int err = MPI_Isend(&h->ack_entry, 1, MPI_INT64_T, h->source, TCI_TAG_ACK, fh->comm,
                        &h->ack_req);
    if (err != MPI_SUCCESS)
        return tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Isend (a forward's acknowledgement)", err);
    h->next = f->acks;
    f->acks = h;
    return TCIO_SUCCESS;
}

/* Drop the acknowledgements whose sends completed (each its own
 * allocation: a pending one's payload never moves). */
static int finish_acks(tcio_file *fh)
{
    tci_forwards *f = &fh->fwd;
    int rc = TCIO_SUCCESS;
    for (tci_held_message **p = &f->acks; *p;) {
        tci_held_message *a = *p;
        int done = 0;
        int err = MPI_Test(&a->ack_req, &done, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS && rc == TCIO_SUCCESS)
            rc = tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Test (a forward's acknowledgement)", err);
        if (done) {
            *p = a->next;
            free(a);
        } else if (err != MPI_SUCCESS) {
            /* MPI may still read the payload: the record stays allocated. */
            *p = a->next;
            MPI_Request_free(&a->ack_req);
        } else {
            p = &a->next;
        }
    }
    return rc;
}

/* Receive buffers, kept for the next message: a fresh one would be
 * mapped and its pages first touched for every message (a segment each),
 * which costs more than the merge on some machines.  Every message fits
 * one (at most a staging entry's body). */
enum { KEPT_BUFFERS = 8 };

static char *take_buffer(tci_forwards *f)
{
    if (f->nfree > 0)
        return f->free_buffers[--f->nfree];
    return malloc(f->staging.body_bytes + 64);
}

static void give_buffer(tci_forwards *f, char *buf)
{
    if (f->nfree < KEPT_BUFFERS)
        f->free_buffers[f->nfree++] = buf;
    else
        free(buf);
}

/* Receive every forward message waiting for this aggregator into the held
 * list. */
static int receive_messages(tcio_file *fh)
{
    tci_forwards *f = &fh->fwd;
    for (;;) {
        /* The record of the next message first: a message taken from MPI
         * without one would be lost for good (never merged, never
         * acknowledged: its forwarder and this rank's settle would wait
         * for ever); without memory it stays in MPI for a later turn.
         * Nothing is lost, so nothing fails (as an owner's snapshot that
         * finds no memory, owner.c). */
        if (!f->next_held && !(f->next_held = malloc(sizeof *f->next_held)))
            return TCIO_SUCCESS;
        int found = 0, bytes = 0;
        MPI_Message handle;
        MPI_Status status;
        int err = MPI_Improbe(MPI_ANY_SOURCE, TCI_TAG_FORWARD, fh->comm, &found, &handle, &status);
        if (err == MPI_SUCCESS && !found)
            return TCIO_SUCCESS;
        if (err == MPI_SUCCESS)
            err = MPI_Get_count(&status, MPI_BYTE, &bytes);
        if (err != MPI_SUCCESS)
            return tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Improbe (a forward)", err);
        char *buf = (size_t)bytes <= f->staging.body_bytes ? take_buffer(f) : NULL;
        /* Without memory for it, the message goes into the spare buffer
         * and only its header is kept, to keep the order: its bytes are
         * lost (and the failure sticks). */
        bool lost = !buf;
        err = MPI_Mrecv(lost ? f->spare : buf, bytes, MPI_BYTE, &handle, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS) {
            if (!lost)
                give_buffer(f, buf);
            return tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Mrecv (a forward)", err);
        }
        tci_held_message *h = f->next_held;
        f->next_held = NULL;
        if (lost)
            tci_note_failure(fh, tci_error_set(TCIO_ERR_NO_MEMORY, "no memory to receive a "
                                               "forward of %d bytes: its bytes are lost",
                                               bytes));
        f->received++;
        fh->stats.count[TCI_C_FORWARDS_RECEIVED]++;
        *h = (tci_held_message){ .next = f->held, .msg = (tci_forward_message *)buf,
                                 .source = status.MPI_SOURCE, .lost = lost };
        if (lost) {
            h->header = *(tci_forward_message *)f->spare;
            h->msg = &h->header;
        }
        f->held = h;
    }
}

/* Under the own forward lock: merge or drop every held message whose
 * predecessor is merged, until none is left that can go.  Each is
 * acknowledged. */
static int merge_held(tcio_file *fh)
{
    tci_forwards *f = &fh->fwd;
    int rc = TCIO_SUCCESS;
    for (bool progress = true; progress;) {
        progress = false;
        for (tci_held_message **p = &f->held; *p;) {
            tci_held_message *h = *p;
            int64_t applied = 0;
            int step_rc = read_applied(fh, fh->rank, (int)h->msg->node, &applied);
            if (step_rc != TCIO_SUCCESS)
                return step_rc;
            if (h->msg->seq > applied + 1) {
                p = &h->next;                    /* an earlier one is on its way */
                continue;
            }
            /* A failed merge is this rank's sticky failure; the others go on.
             * A forward from another node counts as a move between nodes
             * where it is merged (here, or by a locked forward of its node,
             * whose merge counts it), once. */
            if (h->msg->seq == applied + 1 && h->lost) {
                applied_mark mark = { .owner = fh->rank, .node = (int)h->msg->node,
                                      .seq = h->msg->seq };
                step_rc = raise_applied(fh, &mark);       /* its failure is noted */
            } else if (h->msg->seq == applied + 1) {
                int64_t bytes = 0;
                step_rc = merge_message(fh, h->msg, fh->rank, &bytes);
                if (h->msg->node != fh->fwd.node) {
                    fh->stats.count[TCI_C_OFF_NODE_MOVES]++;
                    fh->stats.count[TCI_C_OFF_NODE_BYTES] += bytes;
                }
            } else if (!h->merged) {
                fh->stats.count[TCI_C_FORWARDS_OVERTAKEN]++;
            }
            /* Out of the held list first: send_ack links H into the
             * acknowledgements (or, refused, back here for the next
             * serve, as the overtaken one it then is). */
            *p = h->next;
            if (h->msg != &h->header) {
                h->header = *h->msg;
                give_buffer(f, (char *)h->msg);
                h->msg = &h->header;
            }
            int ack_rc = send_ack(fh, h);
            if (rc == TCIO_SUCCESS)
                rc = step_rc != TCIO_SUCCESS ? step_rc : ack_rc;
            if (ack_rc != TCIO_SUCCESS) {
                /* Only the header is left: should its number not be
                 * used up (the raise failed), the next turn raises it
                 * instead of merging bytes it no longer has. */
                h->merged = true;
                h->lost = true;
                h->next = f->held;
                f->held = h;
                return rc;
            }
            progress = true;
        }
    }
    return rc;
}

static int serve(tcio_file *fh)
{
    tci_forwards *f = &fh->fwd;
    int rc = TCIO_SUCCESS, step_rc;
    if (f->pending > 0) {                    /* copies of ours still staged */
        rc = take_acks(fh);
        step_rc = release_done(fh);
        if (rc == TCIO_SUCCESS)
            rc = step_rc;
    }
    if (fh->l2.t.local_slots > 0) {
        step_rc = receive_messages(fh);
        if (rc == TCIO_SUCCESS)
            rc = step_rc;
        if (f->held) {
            double t0 = MPI_Wtime();
            step_rc = lock_owner(fh, fh->rank);
            if (step_rc == TCIO_SUCCESS) {
                step_rc = merge_held(fh);
                int unlock_rc = unlock_owner(fh, fh->rank);
                if (step_rc == TCIO_SUCCESS)
                    step_rc = unlock_rc;
            }
            fh->stats.time[TCI_T_FORWARD_MERGES] += MPI_Wtime() - t0;
            if (rc == TCIO_SUCCESS)
                rc = step_rc;
        }
    }
    step_rc = finish_acks(fh);
    return rc != TCIO_SUCCESS ? rc : step_rc;
}

void tci_forward_serve(tcio_file *fh)
{
    /* No rank forwards into a read-only file (the open agrees on the
     * mode), so there is nothing to serve; the probe would only cost a
     * turn of MPI's progress engine. */
    if (fh->fwd.on && fh->can_write)
        tci_note_failure(fh, serve(fh));
}

/* ---- the forward ----------------------------------------------------------- */

/* Copy the view's bytes into staging entry E as message SEQ. */
static void fill_message(tcio_file *fh, int e, int64_t seq)
{
    tci_forwards *f = &fh->fwd;
    tci_level1 *v = &f->view;
    tci_forward_message *m = tci_staging_message(&f->staging, e);
    int64_t size = fh->map.segment_size;
    tci_range range[TCI_MAX_RANGES];
    int n = tci_level1_ranges(v, (int)size, range);   /* a forward marks something */
    *m = (tci_forward_message){ .segment = v->segment, .seq = seq, .node = f->node,
                                .entry = e, .nranges = n };
    for (int r = 0; r < n; r++) {
        m->lo[r] = range[r].lo / 64;
        m->hi[r] = (range[r].hi + 63) / 64;
    }
    for (int r = 0; r < n; r++) {
        uint64_t *bits = (uint64_t *)tci_forward_message_bits(m, r);
        memcpy(bits, v->marked + m->lo[r], (size_t)(m->hi[r] - m->lo[r]) * sizeof *bits);
    }
    for (int r = 0; r < n; r++)
        memcpy((char *)tci_forward_message_data(m, r, size), v->buf + m->lo[r] * 64,
               (size_t)(tci_forward_message_end(m, r, size) - m->lo[r] * 64));
}

/* Stage the view's bytes and send them to OWNER; *STAGED false if the
 * staging is full. */
static int staged_forward(tcio_file *fh, int owner, int aggregator, bool *staged)
{
    tci_forwards *f = &fh->fwd;
    int64_t seq = 0;
    int e = tci_staging_claim(&f->staging, aggregator, f->view.segment, &seq);
    if (e < 0) {
        /* This rank's acknowledged copies go (only the sender's side of
         * serve: merges would need the view, which holds this forward). */
        int rc = take_acks(fh);
        int release_rc = release_done(fh);
        if (rc == TCIO_SUCCESS)
            rc = release_rc;
        if (rc != TCIO_SUCCESS)
            return rc;
        e = tci_staging_claim(&f->staging, aggregator, f->view.segment, &seq);
    }
    *staged = e >= 0;
    if (e < 0)
        return TCIO_SUCCESS;
    fill_message(fh, e, seq);
    tci_staging_publish(&f->staging, e);
    tci_forward_message *m = tci_staging_message(&f->staging, e);
    int err = MPI_Isend(m, (int)tci_forward_message_bytes(m, fh->map.segment_size), MPI_BYTE,
                        owner, TCI_TAG_FORWARD, fh->comm, &f->sends[e]);
    if (err != MPI_SUCCESS) {
        /* Never sent: merge it (and what came before) under the lock, and
         * free it. */
        f->sends[e] = MPI_REQUEST_NULL;
        int rc = lock_owner(fh, owner);
        if (rc == TCIO_SUCCESS) {
            rc = merge_earlier(fh, owner, aggregator, seq + 1);
            int unlock_rc = unlock_owner(fh, owner);
            if (rc == TCIO_SUCCESS)
                rc = unlock_rc;
        }
        tci_level1_reset(&f->view);
        f->view.buf = NULL;
        tci_staging_release(&f->staging, e);
        return rc != TCIO_SUCCESS ? rc
                                  : tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Isend (a forward)", err);
    }
    f->acked[e] = false;
    f->pending++;
    f->sent_to[owner]++;
    fh->stats.count[TCI_C_STAGED_FORWARDS]++;
    fh->stats.count[TCI_C_STAGED_BYTES] +=
        (int64_t)(tci_forward_message_bytes(m, fh->map.segment_size) - sizeof *m);
    tci_level1_reset(&f->view);
    f->view.buf = NULL;
    return TCIO_SUCCESS;
}

int tci_forward_send(tcio_file *fh, int64_t segment, const char *data,
                     const unsigned char *bitmap)
{
    tci_forwards *f = &fh->fwd;
    if (!view_bitmap(fh, segment, data, bitmap)) {
        f->view.buf = NULL;
        tci_level1_reset(&f->view);
        return TCIO_SUCCESS;
    }
    int64_t bytes = tci_level1_marked_bytes(&f->view);
    int rc;
    if (!f->on) {
        rc = merge_view(fh, &f->view, NULL);
    } else {
        int owner = tci_segmap_locate(&fh->map, segment).rank;
        int aggregator = tci_segmap_aggregator(&fh->map, segment);
        bool staged = false;
        rc = owner != fh->rank ? staged_forward(fh, owner, aggregator, &staged) : TCIO_SUCCESS;
        if (rc == TCIO_SUCCESS && !staged)
            rc = locked_forward(fh, owner, aggregator);
    }
    /* The view borrowed the tier slot's bytes, also where a failure
     * (MPI's, in the acknowledgements or the forward lock) returned before
     * the merge or the staging reset it: tci_forward_free frees a view's
     * buffer. */
    f->view.buf = NULL;
    tci_level1_reset(&f->view);
    if (rc == TCIO_SUCCESS) {
        fh->stats.count[TCI_C_FORWARDS]++;
        fh->stats.count[TCI_C_FORWARD_BYTES] += bytes;
    }
    return rc;
}

/* ---- fetches ---------------------------------------------------------------- */

bool tci_forward_staged(tcio_file *fh, int64_t segment)
{
    tci_forwards *f = &fh->fwd;
    return f->on && tci_staging_of_segment(&f->staging, segment, f->found, f->found_seq) > 0;
}

int tci_forward_overlay(tcio_file *fh, int64_t segment, char *buf)
{
    tci_forwards *f = &fh->fwd;
    if (!f->on)
        return TCIO_SUCCESS;
    int n = tci_staging_of_segment(&f->staging, segment, f->found, f->found_seq);
    if (n == 0)
        return TCIO_SUCCESS;
    int owner = tci_segmap_locate(&fh->map, segment).rank;
    int64_t applied = 0;
    int rc = read_applied(fh, owner, f->node, &applied);
    for (int i = 0; rc == TCIO_SUCCESS && i < n; i++) {
        /* The numbers as the staging listed them: an entry merged since
         * may have been freed and refilled.  One numbered above APPLIED
         * is not merged, and cannot be while this rank holds the slot's
         * lock (its merge needs it): its body stays as it is. */
        if (f->found_seq[i] <= applied)
            continue;
        const tci_forward_message *m = tci_staging_message(&f->staging, f->found[i]);
        for (int r = 0; r < m->nranges; r++)
            tci_copy_masked(buf + m->lo[r] * 64,
                            tci_forward_message_data(m, r, fh->map.segment_size),
                            tci_forward_message_bits(m, r), 0, (int)(m->hi[r] - m->lo[r]));
        fh->stats.count[TCI_C_STAGED_OVERLAYS]++;
    }
    return rc;
}

/* ---- flush and close ------------------------------------------------------- */

/* Whether this rank has nothing left to do for the forwards of the epoch:
 * EXPECTED messages received and merged, its own acknowledged and sent,
 * its acknowledgements sent. */
static bool settled(const tci_forwards *f, int64_t expected)
{
    return f->received >= expected && !f->held && f->pending == 0 && !f->acks;
}

int tci_forward_settle(tcio_file *fh)
{
    tci_forwards *f = &fh->fwd;
    /* Nobody forwards into a read-only file (the open agrees on the mode
     * on every rank, so every rank skips the reduction alike). */
    if (!f->on || !fh->can_write)
        return TCIO_SUCCESS;
    int64_t expected = 0;
    MPI_Request req;
    int err = MPI_Ireduce_scatter_block(f->sent_to, &expected, 1, MPI_INT64_T, MPI_SUM,
                                        fh->comm, &req);
    int rc = TCIO_SUCCESS;
    /* A rank that never comes (a late node, or one that skipped the call)
     * must end in TCIO_COLLECTIVE_TIMEOUT's abort here as in every other
     * collective step: the node barrier before this one only waits for
     * the node's ranks. */
    double reduce_start = MPI_Wtime();
    int reduce_polls = 0;
    for (int done = 0; err == MPI_SUCCESS && !done; reduce_polls++) {
        err = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (!done) {
            int serve_rc = serve(fh);
            if (rc == TCIO_SUCCESS)
                rc = serve_rc;
            tci_back_off(reduce_polls);
            tci_collective_check_timeout(reduce_start);
        }
    }
    /* Waiting there was waiting for late ranks, as in any collective step
     * (collective_waits), though this loop serves forwards meanwhile. */
    if (reduce_polls > 1)
        tci_collective_note_waited(MPI_Wtime() - reduce_start);
    if (err != MPI_SUCCESS)
        return tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Ireduce_scatter_block (the forwards "
                                 "to each aggregator)", err);
    /* A failed merge is counted as merged (merge_view): the loop ends
     * after file-system failures too, each sticking to its rank. */
    double start = MPI_Wtime();
    for (int polls = 0; !settled(f, expected); polls++) {
        int serve_rc = serve(fh);
        if (rc == TCIO_SUCCESS)
            rc = serve_rc;
        if (!settled(f, expected)) {
            tci_back_off(polls);
            tci_collective_check_timeout(start);
        }
    }
    /* Waiting for the copies still on their way to this aggregator and
     * for the aggregators' acknowledgements (and merging what came). */
    fh->stats.time[TCI_T_STAGING_WAITS] += MPI_Wtime() - start;
    memset(f->sent_to, 0, (size_t)fh->nprocs * sizeof *f->sent_to);
    f->received = 0;
    return rc;
}

/* ---- open, keep, free ------------------------------------------------------ */

/* The per-file state beside a window and staging: local. */
static int per_file(tcio_file *fh)
{
    tci_forwards *f = &fh->fwd;
    int n = f->staging.nentries;
    f->sends = malloc((size_t)n * sizeof *f->sends);
    f->acked = calloc((size_t)n, sizeof *f->acked);
    f->found = malloc((size_t)n * sizeof *f->found);
    f->found_seq = malloc((size_t)n * sizeof *f->found_seq);
    f->spare = malloc(f->staging.body_bytes + 64);
    f->scatter = malloc((size_t)fh->map.segment_size);
    f->sent_to = calloc((size_t)fh->nprocs, sizeof *f->sent_to);
    /* Null before anything can fail: tci_forward_free looks at them. */
    for (int e = 0; f->sends && e < n; e++)
        f->sends[e] = MPI_REQUEST_NULL;
    if (!f->sends || !f->acked || !f->found || !f->found_seq || !f->spare || !f->scatter ||
        !f->sent_to)
        return tci_error_set(TCIO_ERR_NO_MEMORY, "no memory for the forwards' bookkeeping");
    return TCIO_SUCCESS;
}

/* The node and node count, and the view every forward uses: local. */
static int geometry(tcio_file *fh)
{
    tci_forwards *f = &fh->fwd;
    f->node = fh->aggr.node_of[fh->rank];
    f->nnodes = fh->aggr.nnodes;
    f->per_rank = (int)fh->config.forward_staging;
    if (tci_level1_init_view(&f->view, (int)fh->map.segment_size) != 0 ||
        tci_level1_init_view(&f->message_view, (int)fh->map.segment_size) != 0)
        return tci_error_set(TCIO_ERR_NO_MEMORY, "no memory for the forwards' views");
    return TCIO_SUCCESS;
}

/* Collective over FH->comm: the forward words' window, in one shared
 * epoch for the file's life. */
static int open_window(tcio_file *fh)
{
    tci_forwards *f = &fh->fwd;
    MPI_Aint bytes = fh->aggr.index >= 0 ? (MPI_Aint)words_bytes(f->nnodes) : 0;
    int err = MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, fh->comm, &f->words, &f->win);
    if (err != MPI_SUCCESS) {
        f->win = MPI_WIN_NULL;
        return tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Win_allocate (the forward words)", err);
    }
    /* Its operations' failures are returned and stick to the file, as the
     * level-2 window's (a window takes MPI_ERRORS_ARE_FATAL otherwise). */
    MPI_Win_set_errhandler(f->win, MPI_ERRORS_RETURN);
    if (bytes > 0)
        memset(f->words, 0, (size_t)bytes);
    err = MPI_Win_lock_all(MPI_MODE_NOCHECK, f->win);
    if (err != MPI_SUCCESS)
        return tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Win_lock_all (the forward words)", err);
    return TCIO_SUCCESS;
}

int tci_forward_prepare(tcio_file *fh)
{
    fh->fwd.win = MPI_WIN_NULL;
    return geometry(fh);
}

int tci_forward_open(tcio_file *fh)
{
    tci_forwards *f = &fh->fwd;
    /* Made now, whatever a failed adoption left here: a file without
     * staging keeps its tier as made without it (tci_forward_keep), so
     * that a later staged file makes its staging and window anew. */
    f->on = false;
    f->made_per_rank = 0;
    if (fh->config.forward_staging == 0)
        return TCIO_SUCCESS;
    int node_rank = 0;
    MPI_Comm_rank(fh->comb.comm, &node_rank);
    int rc = tci_staging_open(&f->staging, fh->comb.comm, node_rank,
                          (int)fh->config.forward_staging * fh->comb.node_size,
                          fh->map.naggregators, fh->map.segment_size);
    int window_rc = open_window(fh);          /* collective: entered by all */
    if (rc == TCIO_SUCCESS)
        rc = window_rc;
    if (rc == TCIO_SUCCESS)
        rc = per_file(fh);
    /* The agreement also orders the zeroed words before any access. */
    rc = tci_agree(fh->comm, rc);
    f->on = rc == TCIO_SUCCESS;
    f->made_per_rank = f->on ? f->per_rank : 0;
    return rc;
}

bool tci_forward_adopt(tcio_file *fh, tci_forward_kept *kept)
{
    tci_forwards *f = &fh->fwd;
    /* Taken whatever follows: freed with the handle, or kept again. */
    f->win = kept->win;
    f->words = kept->words;
    f->staging = kept->staging;
    f->made_per_rank = kept->per_rank;
    /* A tier kept with staged copies has their window and segment. */
    bool whole = kept->per_rank == 0 || (kept->win != MPI_WIN_NULL && kept->staging.segment);
    kept->win = MPI_WIN_NULL;
    kept->staging.segment = NULL;
    bool fits = whole && geometry(fh) == TCIO_SUCCESS && f->made_per_rank == f->per_rank;
    if (fits && f->per_rank > 0)
        fits = per_file(fh) == TCIO_SUCCESS;
    f->on = fits && f->per_rank > 0;
    return fits;
}

void tci_forward_keep(tcio_file *fh, tci_forward_kept *kept)
{
    tci_forwards *f = &fh->fwd;
    *kept = (tci_forward_kept){ .win = f->win, .words = f->words, .staging = f->staging,
                                .per_rank = f->made_per_rank };
    f->win = MPI_WIN_NULL;
    f->staging.segment = NULL;
    f->on = false;
}

void tci_forward_kept_free(tci_forward_kept *kept)
{
    if (kept->win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(kept->win);
        MPI_Win_free(&kept->win);
    }
    tci_staging_close(&kept->staging);
    kept->win = MPI_WIN_NULL;
}

/* Whether REQ (a send) is complete or null; if not, it is freed to finish
 * on its own, and its buffer must stay. */
static bool done_or_let_go(MPI_Request *req)
{
    int done = 1;
    if (*req != MPI_REQUEST_NULL && MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        done = 0;
    if (!done)
        MPI_Request_free(req);
    return done;
}

void tci_forward_free(tcio_file *fh)
{
    tci_forwards *f = &fh->fwd;
    for (tci_held_message *h = f->held, *next; h; h = next) {
        next = h->next;
        if (h->msg != &h->header)
            free(h->msg);
        free(h);
    }
    f->held = NULL;
    free(f->next_held);
    f->next_held = NULL;
    while (f->nfree > 0)
        free(f->free_buffers[--f->nfree]);
    /* Only after a failure can a send be in flight here (its receiver may
     * never match it).  MPI may read its buffer after the free of its
     * request, so then the staging's mapping stays until the process
     * ends instead of being unmapped under it, and an acknowledgement's
     * record stays allocated. */
    bool in_flight = false;
    for (int e = 0; f->sends && e < f->staging.nentries; e++)
        if (!done_or_let_go(&f->sends[e]))
            in_flight = true;
    if (in_flight)
        f->staging.segment = NULL;
    for (tci_held_message *a = f->acks, *next; a; a = next) {
        next = a->next;
        if (done_or_let_go(&a->ack_req))
            free(a);
    }
    f->acks = NULL;
    free(f->sends);
    free(f->acked);
    free(f->found);
    free(f->found_seq);
    free(f->spare);
    free(f->scatter);
    free(f->sent_to);
    f->sends = NULL;
    f->acked = NULL;
    f->found = NULL;
    f->found_seq = NULL;
    f->spare = NULL;
    f->scatter = NULL;
    f->pending = 0;
    f->sent_to = NULL;
    tci_forward_kept left;
    tci_forward_keep(fh, &left);
    tci_forward_kept_free(&left);
    tci_level1_free(&f->view);
    tci_level1_free(&f->message_view);
}
