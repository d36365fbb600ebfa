/* forward_probe - measures candidate "forwards that wait for no other rank"
 * (the combining tier's next step, doc/design.md *Several nodes*), for
 * doc/records/forwards.md.
 *
 * Rank 0 is the owner of segments (an aggregator); every other rank is a
 * forwarder that sends it K segments of SIZE bytes plus a bitmap of SIZE/8
 * bytes, with GAP microseconds of computation between forwards (the time a
 * node takes to fill the next tier slot).  The owner either computes in
 * slices of X microseconds and polls between slices ("poll"), or computes
 * for T seconds without any MPI call and then polls until everything has
 * arrived ("busy"); with -b it waits in MPI_Barrier instead, in MPI but not
 * in the library, as an owner inside a user's collective would.
 * Mechanisms, run in turn inside one run (interleaved,
 * so that the machine's load hits them alike):
 *
 *   send   MPI_Isend from the tier slot + MPI_Wait; the owner pre-posts
 *          receives and completes them with MPI_Testsome at its polls.
 *   stage  the same, but the forwarder copies the segment into a staging
 *          buffer and only MPI_Tests the send later (the tier slot is free
 *          after the copy; the staging buffer when the send completes).
 *   put    single-writer mailboxes in the owner's window: contiguous
 *          MPI_Put of the segment, flush, MPI_Put of a sequence word,
 *          flush, inside one MPI_Win_lock_all(MPI_MODE_NOCHECK) epoch; the
 *          owner reads the sequence words at its polls.
 *   get    the forwarder copies into a staging buffer in its own window and
 *          sends a small notice; the owner pulls the bytes with one
 *          contiguous MPI_Rget at its poll and acknowledges when they are
 *          in, which frees the staging buffer.
 *
 * Per forward it records: the forwarder's time blocked (from the start of
 * the forward until its call returns, including waits for a free staging
 * buffer or mailbox), the time until the forwarder's buffer is free again
 * ("free": equal to blocked for send and put), and the latency until the
 * owner has the bytes.  Times come from CLOCK_MONOTONIC, which all ranks
 * of one host share, so a latency is owner's arrival minus forwarder's
 * start.  Only one host is supported for that reason ("nodes" are made by
 * MPIR_CVAR_NUM_CLIQUES or are not made at all).
 *
 * Every owner poll also calls MPI_Iprobe (for put) or another MPI call, as
 * libtcio's polls do, because under MPICH nothing completes without the
 * target's progress engine. */
#define _POSIX_C_SOURCE 200809L   /* getopt, clock_gettime under -std=c11 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <mpi.h>
#include "bench_common.h"

enum { TAG_DATA = 11, TAG_NOTICE = 12, TAG_ACK = 13, TAG_NONE = 99 };
enum { MAX_SLICES = 8, NGROUPS = 2 };
enum { MECH_SEND, MECH_STAGE, MECH_PUT, MECH_GET, NMECHS };
static const char *mech_name[NMECHS] = { "send", "stage", "put", "get" };
static const char *group_name[NGROUPS] = { "off-node", "on-node" };

/* What travels at the start of every segment (and in a get's notice). */
struct header {
    double t_start;
    int32_t src;
    int32_t seq;
};

struct opts {
    int k;                     /* forwards per forwarder and trial */
    size_t size;               /* segment bytes (a bitmap of size/8 follows) */
    int depth;                 /* staging buffers / mailboxes per forwarder */
    int gap_us;                /* forwarder's computation between forwards */
    int nslices;
    int slice_us[MAX_SLICES];  /* owner's poll-mode slices */
    double busy_s;             /* owner's busy-mode computation, 0: none */
    int barrier;               /* the owner waits in MPI_Barrier instead */
    int rounds;
    int use[NMECHS];
};

struct probe {
    struct opts o;
    int rank, nranks, nfwd;
    int offnode;               /* this rank is on another node than rank 0 */
    size_t slot;               /* bytes per forward: segment + bitmap */
    size_t mbox;               /* mailbox stride: slot + its sequence word */
    MPI_Win win;
    unsigned char *base;       /* window memory: mailboxes or staging */
    unsigned char *tier;       /* the forwarder's tier slot */
    /* forwarder */
    double *t_start, *blocked, *freed;
    int nfreed;
    int *slot_seq;             /* per staging buffer: its seq, -1 free */
    MPI_Request *sreq;         /* per staging buffer */
    /* owner */
    double *lat;               /* [nfwd][k] */
    int *next;                 /* per forwarder: next expected seq / notices */
    int arrived, total, bad;
    MPI_Request *rreq;         /* [nfwd][depth] receives or gets */
    MPI_Request *nreq;         /* [nfwd] notice receives */
    struct header *notice;     /* [nfwd] */
    int *idx;
    MPI_Status *st;            /* real array: GCC flags MPICH's MPI_STATUSES_IGNORE */
    double poll_s;
    long polls;
};

/* ---- small helpers ------------------------------------------------------ */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Computation that makes no MPI call: the clock is read, nothing else. */
static void spin(double seconds)
{
    double end = now() + seconds;
    while (now() < end)
        ;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "forward_probe: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* The byte the forwarder writes at the end of data and bitmap, checked by
 * the owner: a mailbox whose sequence word arrived before its data would
 * show a stale one. */
static unsigned char pattern(int src, int seq)
{
    return (unsigned char)((src * 31 + seq) | 1);
}

static unsigned char *mailbox(struct probe *p, int f, int s)
{
    return p->base + ((size_t)f * (size_t)p->o.depth + (size_t)s) * p->mbox;
}

/* The owner's count of drained mailboxes of forwarder f, after the
 * mailboxes, one cache line each (read by the forwarder before it reuses a
 * mailbox). */
static MPI_Aint consumed_disp(struct probe *p, int f)
{
    return (MPI_Aint)((size_t)p->nfwd * (size_t)p->o.depth * p->mbox + (size_t)f * 64);
}

/* ---- forwarder side ----------------------------------------------------- */

static void mark_freed(struct probe *p, int seq)
{
    p->freed[seq] = now() - p->t_start[seq];
    p->nfreed++;
}

static void fill_tier(struct probe *p, int seq)
{
    struct header h = { now(), p->rank, seq };
    memcpy(p->tier, &h, sizeof h);
    p->tier[p->o.size - 1] = pattern(p->rank, seq);
    p->tier[p->slot - 1] = pattern(p->rank, seq);
    p->t_start[seq] = h.t_start;
}

static void fwd_poll(struct probe *p, int mech)
{
    if (mech == MECH_STAGE) {
        for (int s = 0; s < p->o.depth; s++) {
            int done = 0;
            if (p->slot_seq[s] < 0)
                continue;
            MPI_Test(&p->sreq[s], &done, MPI_STATUS_IGNORE);
            if (done) {
                mark_freed(p, p->slot_seq[s]);
                p->slot_seq[s] = -1;
            }
        }
    } else if (mech == MECH_GET) {
        int flag = 1;
        while (flag) {
            MPI_Iprobe(0, TAG_ACK, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            if (flag) {
                int seq;
                MPI_Recv(&seq, 1, MPI_INT, 0, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                mark_freed(p, seq);
                p->slot_seq[seq % p->o.depth] = -1;
            }
        }
    }
}

static void fwd_send(struct probe *p, int seq)
{
    MPI_Request r;
    MPI_Isend(p->tier, (int)p->slot, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    mark_freed(p, seq);
}

static void fwd_stage(struct probe *p, int seq)
{
    int s = seq % p->o.depth;
    unsigned char *buf = p->base + (size_t)s * p->slot;
    if (p->slot_seq[s] >= 0) { /* staging exhausted: the library would wait here */
        MPI_Wait(&p->sreq[s], MPI_STATUS_IGNORE);
        mark_freed(p, p->slot_seq[s]);
    }
    memcpy(buf, p->tier, p->slot);
    MPI_Isend(buf, (int)p->slot, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, &p->sreq[s]);
    p->slot_seq[s] = seq;
}

/* Reusing a mailbox needs the owner to have drained it: read its counter
 * (only when the forwarder has more forwards in flight than mailboxes). */
static void wait_mailbox(struct probe *p, int seq)
{
    int f = p->rank - 1;
    uint64_t consumed = 0;
    while (seq - p->o.depth >= (int)consumed) {
        MPI_Get(&consumed, 8, MPI_BYTE, 0, consumed_disp(p, f), 8, MPI_BYTE, p->win);
        MPI_Win_flush(0, p->win);
    }
}

static void fwd_put(struct probe *p, int seq)
{
    int f = p->rank - 1, s = seq % p->o.depth;
    MPI_Aint disp = (MPI_Aint)((size_t)f * (size_t)p->o.depth + (size_t)s) * (MPI_Aint)p->mbox;
    uint64_t word = (uint64_t)seq + 1;
    if (seq >= p->o.depth)
        wait_mailbox(p, seq);
    MPI_Put(p->tier, (int)p->slot, MPI_BYTE, 0, disp, (int)p->slot, MPI_BYTE, p->win);
    /* MPI orders no two puts: the data must be complete at the target
     * before the sequence word that publishes it. */
    MPI_Win_flush(0, p->win);
    MPI_Put(&word, 8, MPI_BYTE, 0, disp + (MPI_Aint)p->slot, 8, MPI_BYTE, p->win);
    MPI_Win_flush(0, p->win);
    mark_freed(p, seq);
}

static void fwd_get(struct probe *p, int seq)
{
    int s = seq % p->o.depth;
    struct header h = { p->t_start[seq], p->rank, seq };
    while (p->slot_seq[s] >= 0) /* staging exhausted: wait for the owner's pull */
        fwd_poll(p, MECH_GET);
    memcpy(p->base + (size_t)s * p->slot, p->tier, p->slot);
    MPI_Win_sync(p->win); /* the copy is visible to the owner's get */
    /* A notice of 16 bytes is sent eagerly by every MPI: it returns at once. */
    MPI_Send(&h, (int)sizeof h, MPI_BYTE, 0, TAG_NOTICE, MPI_COMM_WORLD);
    p->slot_seq[s] = seq;
}

static void forward(struct probe *p, int mech, int seq)
{
    switch (mech) {
    case MECH_SEND: fwd_send(p, seq); break;
    case MECH_STAGE: fwd_stage(p, seq); break;
    case MECH_PUT: fwd_put(p, seq); break;
    default: fwd_get(p, seq); break;
    }
}

/* The gap between forwards, in 100-us slices with a poll between them, as
 * a forwarder that keeps writing enters libtcio now and then. */
static void fwd_gap(struct probe *p, int mech)
{
    for (int done = 0; done < p->o.gap_us; done += 100) {
        spin(1e-6 * (p->o.gap_us - done < 100 ? p->o.gap_us - done : 100));
        fwd_poll(p, mech);
    }
}

static void forwarder_trial(struct probe *p, int mech)
{
    p->nfreed = 0;
    for (int s = 0; s < p->o.depth; s++)
        p->slot_seq[s] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int seq = 0; seq < p->o.k; seq++) {
        double t0;
        fwd_gap(p, mech);
        fill_tier(p, seq);
        t0 = now();
        forward(p, mech, seq);
        p->blocked[seq] = now() - t0;
    }
    while (p->nfreed < p->o.k) /* staging still in flight: not counted as blocked */
        fwd_poll(p, mech);
    if (p->o.barrier) /* the owner's "user barrier" ends when every forward is out */
        MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- owner side --------------------------------------------------------- */

static void arrive(struct probe *p, int f, const unsigned char *buf)
{
    struct header h;
    memcpy(&h, buf, sizeof h);
    if (h.src != f + 1 || h.seq < 0 || h.seq >= p->o.k
        || buf[p->o.size - 1] != pattern(h.src, h.seq)
        || buf[p->slot - 1] != pattern(h.src, h.seq)) {
        p->bad++;
        return;
    }
    p->lat[(size_t)f * (size_t)p->o.k + (size_t)h.seq] = now() - h.t_start;
    p->arrived++;
}

static void owner_prepare(struct probe *p, int mech)
{
    int d = p->o.depth < p->o.k ? p->o.depth : p->o.k;
    p->arrived = 0;
    p->polls = 0;
    p->poll_s = 0;
    for (int i = 0; i < p->nfwd * p->o.depth; i++)
        p->rreq[i] = MPI_REQUEST_NULL;
    for (int f = 0; f < p->nfwd; f++) {
        p->next[f] = 0;
        p->nreq[f] = MPI_REQUEST_NULL;
        for (int s = 0; s < p->o.depth; s++)
            memset(mailbox(p, f, s) + p->slot, 0, 8);
        memset(p->base + consumed_disp(p, f), 0, 8);
        /* Receives are posted before the trial, as a library would keep
         * them posted: MPI may then complete a send without the owner. */
        for (int s = 0; mech == MECH_SEND || mech == MECH_STAGE ? s < d : 0; s++)
            MPI_Irecv(mailbox(p, f, s), (int)p->slot, MPI_BYTE, f + 1, TAG_DATA,
                      MPI_COMM_WORLD, &p->rreq[f * p->o.depth + s]);
        if (mech == MECH_GET)
            MPI_Irecv(&p->notice[f], (int)sizeof p->notice[f], MPI_BYTE, f + 1, TAG_NOTICE,
                      MPI_COMM_WORLD, &p->nreq[f]);
    }
    MPI_Win_sync(p->win);
}

static void owner_poll_recv(struct probe *p)
{
    int n = 0;
    MPI_Testsome(p->nfwd * p->o.depth, p->rreq, &n, p->idx, p->st);
    for (int i = 0; n != MPI_UNDEFINED && i < n; i++) {
        int f = p->idx[i] / p->o.depth, s = p->idx[i] % p->o.depth;
        arrive(p, f, mailbox(p, f, s));
        /* Matching follows posting order, so the next receive of f takes
         * the next message of f whatever mailbox it names. */
        if (++p->next[f] + p->o.depth <= p->o.k)
            MPI_Irecv(mailbox(p, f, s), (int)p->slot, MPI_BYTE, f + 1, TAG_DATA,
                      MPI_COMM_WORLD, &p->rreq[p->idx[i]]);
    }
}

static void owner_poll_mailboxes(struct probe *p)
{
    int flag;
    /* Nothing is received: the probe only lets MPICH's progress engine run. */
    MPI_Iprobe(MPI_ANY_SOURCE, TAG_NONE, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    MPI_Win_sync(p->win);
    for (int f = 0; f < p->nfwd; f++) {
        while (p->next[f] < p->o.k) {
            unsigned char *m = mailbox(p, f, p->next[f] % p->o.depth);
            volatile uint64_t *word = (volatile uint64_t *)(void *)(m + p->slot);
            if (*word != (uint64_t)p->next[f] + 1)
                break;
            MPI_Win_sync(p->win); /* the data is read after the word */
            arrive(p, f, m);
            *word = 0;
            p->next[f]++;
            *(volatile uint64_t *)(void *)(p->base + consumed_disp(p, f)) = (uint64_t)p->next[f];
        }
    }
    MPI_Win_sync(p->win);
}

static void owner_poll_pull(struct probe *p)
{
    int n = 0;
    MPI_Testsome(p->nfwd, p->nreq, &n, p->idx, p->st);
    for (int i = 0; n != MPI_UNDEFINED && i < n; i++) {
        int f = p->idx[i], s = p->notice[f].seq % p->o.depth;
        MPI_Rget(mailbox(p, f, s), (int)p->slot, MPI_BYTE, f + 1, (MPI_Aint)((size_t)s * p->slot),
                 (int)p->slot, MPI_BYTE, p->win, &p->rreq[f * p->o.depth + s]);
        if (++p->next[f] < p->o.k)
            MPI_Irecv(&p->notice[f], (int)sizeof p->notice[f], MPI_BYTE, f + 1, TAG_NOTICE,
                      MPI_COMM_WORLD, &p->nreq[f]);
    }
    MPI_Testsome(p->nfwd * p->o.depth, p->rreq, &n, p->idx, p->st);
    for (int i = 0; n != MPI_UNDEFINED && i < n; i++) {
        int f = p->idx[i] / p->o.depth, s = p->idx[i] % p->o.depth;
        struct header h;
        memcpy(&h, mailbox(p, f, s), sizeof h);
        arrive(p, f, mailbox(p, f, s));
        /* 4 bytes go eagerly: the owner does not wait for the forwarder. */
        MPI_Send(&h.seq, 1, MPI_INT, f + 1, TAG_ACK, MPI_COMM_WORLD);
    }
}

static void owner_poll(struct probe *p, int mech)
{
    double t0 = now();
    if (mech == MECH_SEND || mech == MECH_STAGE)
        owner_poll_recv(p);
    else if (mech == MECH_PUT)
        owner_poll_mailboxes(p);
    else
        owner_poll_pull(p);
    p->poll_s += now() - t0;
    p->polls++;
}

/* Returns the seconds from the trial's start until the owner had every byte. */
static double owner_trial(struct probe *p, int mech, int slice_us)
{
    double t0, busy_until;
    owner_prepare(p, mech);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = now();
    busy_until = slice_us > 0 ? t0 : t0 + p->o.busy_s;
    spin(busy_until - now()); /* busy mode: no MPI call at all */
    /* Barrier mode: the owner sits in a user's collective, in MPI but not in
     * the library; only MPI's progress can complete the forwards meanwhile. */
    if (p->o.barrier)
        MPI_Barrier(MPI_COMM_WORLD);
    while (p->arrived < p->total && p->bad == 0) {
        if (slice_us > 0)
            spin(1e-6 * slice_us);
        owner_poll(p, mech);
    }
    t0 = now() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
    return t0;
}

/* ---- results ------------------------------------------------------------ */

struct result {
    double blocked_med, blocked_mean, blocked_max, freed_med, freed_max, lat_med, lat_max;
    int n;
};

struct trial_out {
    struct result g[NGROUPS];
    double mbps, poll_us;
};

/* Pools the forwards of one group of forwarders (off or on rank 0's node). */
static struct result pool(struct probe *p, const double *all, const int *offnode, int group)
{
    struct result r = { 0 };
    int k = p->o.k, n = 0;
    double *b = xcalloc((size_t)p->nfwd * (size_t)k, sizeof *b);
    double *fr = xcalloc((size_t)p->nfwd * (size_t)k, sizeof *fr);
    double *l = xcalloc((size_t)p->nfwd * (size_t)k, sizeof *l);
    for (int f = 0; f < p->nfwd; f++) {
        if (offnode[f + 1] != (group == 0))
            continue;
        for (int i = 0; i < k; i++, n++) {
            b[n] = all[(size_t)(f + 1) * 2 * (size_t)k + (size_t)i];
            fr[n] = all[(size_t)(f + 1) * 2 * (size_t)k + (size_t)k + (size_t)i];
            l[n] = p->lat[(size_t)f * (size_t)k + (size_t)i];
            r.blocked_mean += b[n];
            if (b[n] > r.blocked_max)
                r.blocked_max = b[n];
            if (fr[n] > r.freed_max)
                r.freed_max = fr[n];
            if (l[n] > r.lat_max)
                r.lat_max = l[n];
        }
    }
    r.n = n;
    if (n) {
        r.blocked_mean /= n;
        r.blocked_med = bench_median(b, n);
        r.freed_med = bench_median(fr, n);
        r.lat_med = bench_median(l, n);
    }
    free(b);
    free(fr);
    free(l);
    return r;
}

static int nmodes(const struct opts *o)
{
    return o->barrier ? 1 : o->nslices + (o->busy_s > 0);
}

static const char *mode_name(const struct probe *p, int mode, char *buf, size_t len)
{
    if (p->o.barrier)
        snprintf(buf, len, "barrier");
    else if (mode < p->o.nslices)
        snprintf(buf, len, "poll%dus", p->o.slice_us[mode]);
    else
        snprintf(buf, len, "busy%gs", p->o.busy_s);
    return buf;
}

static void print_result(const char *tag, const char *mech, const char *mode, int g,
                         const struct result *r, double mbps, double poll_us)
{
    printf("%s %-5s %-10s %-8s fwds %3d  blocked_ms med %8.3f mean %8.3f max %8.3f"
           "  free_ms med %8.3f max %8.3f  owner_has_ms med %8.3f max %8.3f  MBps %8.1f"
           "  poll_us %7.2f\n",
           tag, mech, mode, group_name[g], r->n, 1e3 * r->blocked_med, 1e3 * r->blocked_mean,
           1e3 * r->blocked_max,
           1e3 * r->freed_med, 1e3 * r->freed_max, 1e3 * r->lat_med, 1e3 * r->lat_max, mbps,
           poll_us);
}

/* One mechanism under one owner mode; rank 0 returns what it printed. */
static struct trial_out trial(struct probe *p, int mech, int mode, int round, const int *offnode)
{
    struct trial_out out = { 0 };
    int k = p->o.k, slice = p->o.barrier ? 1 : mode < p->o.nslices ? p->o.slice_us[mode] : 0;
    double secs = 0, *mine = xcalloc(2 * (size_t)k, sizeof *mine), *all = NULL;
    if (p->rank == 0) {
        secs = owner_trial(p, mech, slice);
        all = xcalloc(2 * (size_t)k * (size_t)p->nranks, sizeof *all);
    } else {
        forwarder_trial(p, mech);
        memcpy(mine, p->blocked, (size_t)k * sizeof *mine);
        memcpy(mine + k, p->freed, (size_t)k * sizeof *mine);
    }
    MPI_Gather(mine, 2 * k, MPI_DOUBLE, all, 2 * k, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (p->rank == 0) {
        char tag[32], mname[32];
        if (round < 0)
            snprintf(tag, sizeof tag, "warmup  ");
        else
            snprintf(tag, sizeof tag, "trial r%d", round + 1);
        out.mbps = (double)p->total * (double)p->slot / secs / 1e6;
        out.poll_us = p->polls ? 1e6 * p->poll_s / (double)p->polls : 0;
        if (p->bad)
            printf("ERROR: %d forwards arrived with wrong bytes (%s)\n", p->bad, mech_name[mech]);
        for (int g = 0; g < NGROUPS; g++) {
            out.g[g] = pool(p, all, offnode, g);
            if (out.g[g].n)
                print_result(tag, mech_name[mech], mode_name(p, mode, mname, sizeof mname), g,
                             &out.g[g], out.mbps, out.poll_us);
        }
        fflush(stdout);
    }
    free(mine);
    free(all);
    return out;
}

/* The median over the rounds of one figure of one (mode, mechanism, group). */
static double round_median(const struct probe *p, const struct trial_out *res, double *v,
                           int nm, int mode, int mech, int g, int which)
{
    for (int i = 0; i < p->o.rounds; i++) {
        const struct trial_out *t = &res[((size_t)i * (size_t)nm + (size_t)mode) * NMECHS + (size_t)mech];
        const struct result *r = &t->g[g];
        double f[] = { r->blocked_mean, r->blocked_max, r->freed_med, r->freed_max,
                       r->lat_med, r->lat_max, t->mbps, t->poll_us, r->blocked_med };
        v[i] = f[which];
    }
    return bench_median(v, p->o.rounds);
}

static void summary(const struct probe *p, const struct trial_out *res)
{
    int nm = nmodes(&p->o);
    double *v = xcalloc((size_t)p->o.rounds, sizeof *v);
    printf("# medians over %d rounds of each trial's figures (each trial's median, mean"
           " and largest over its forwards)\n", p->o.rounds);
    for (int mode = 0; mode < nm; mode++)
        for (int m = 0; m < NMECHS; m++)
            for (int g = 0; p->o.use[m] && g < NGROUPS; g++) {
                struct result r = { 0 };
                char mname[32];
                r.n = res[(size_t)mode * NMECHS + (size_t)m].g[g].n;
                if (!r.n)
                    continue;
                r.blocked_med = round_median(p, res, v, nm, mode, m, g, 8);
                r.blocked_mean = round_median(p, res, v, nm, mode, m, g, 0);
                r.blocked_max = round_median(p, res, v, nm, mode, m, g, 1);
                r.freed_med = round_median(p, res, v, nm, mode, m, g, 2);
                r.freed_max = round_median(p, res, v, nm, mode, m, g, 3);
                r.lat_med = round_median(p, res, v, nm, mode, m, g, 4);
                r.lat_max = round_median(p, res, v, nm, mode, m, g, 5);
                print_result("median  ", mech_name[m], mode_name(p, mode, mname, sizeof mname), g,
                             &r, round_median(p, res, v, nm, mode, m, g, 6),
                             round_median(p, res, v, nm, mode, m, g, 7));
            }
    free(v);
}

/* ---- setup -------------------------------------------------------------- */

static void usage(FILE *to)
{
    fprintf(to,
            "usage: mpiexec -n P forward_probe [options]   (P >= 2; rank 0 owns, the others forward)\n"
            "  -m LIST   mechanisms, comma-separated: send,stage,put,get (default all)\n"
            "  -k K      forwards per forwarder and trial (default 16)\n"
            "  -s SIZE   segment bytes, a bitmap of SIZE/8 bytes travels with it (default 1048576)\n"
            "  -d DEPTH  staging buffers / mailboxes per forwarder (default K: never exhausted)\n"
            "  -g US     forwarder's computation between forwards, microseconds (default 500)\n"
            "  -x LIST   owner's poll-mode slices, microseconds, comma-separated (default 100,1000)\n"
            "  -t SEC    owner's busy-mode computation without MPI calls (default 1; 0: no busy mode)\n"
            "  -r N      rounds; every round runs every mode and mechanism in turn (default 3)\n"
            "  -b        instead of -x and -t: the owner waits in MPI_Barrier, which the forwarders\n"
            "            join when their forwards are out, then polls (get is left out: a pull\n"
            "            needs the owner's own call, so it would never finish)\n"
            "  -h        this text\n"
            "Prints one line per trial and group of forwarders (off or on rank 0's node, from\n"
            "MPI_Comm_split_type), then the medians over the rounds.  Times in ms: blocked = the\n"
            "forward's call; free = until the forwarder's buffer is reusable; owner_has = until the\n"
            "owner has the bytes.  MBps = all forwarded bytes / the owner's trial time.\n");
}

static int parse_list(char *arg, int *out, int max)
{
    int n = 0;
    for (char *t = strtok(arg, ","); t && n < max; t = strtok(NULL, ","))
        out[n++] = atoi(t);
    return n;
}

static int parse_mechs(char *arg, int *use)
{
    memset(use, 0, NMECHS * sizeof *use);
    for (char *t = strtok(arg, ","); t; t = strtok(NULL, ",")) {
        int m = 0;
        while (m < NMECHS && strcmp(t, mech_name[m]) != 0)
            m++;
        if (m == NMECHS)
            return -1;
        use[m] = 1;
    }
    return 0;
}

/* Returns 0, 1 for --help, -1 for an error. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
    int c;
    *o = (struct opts){ .k = 16, .size = 1048576, .depth = 0, .gap_us = 500, .nslices = 2,
                        .slice_us = { 100, 1000 }, .busy_s = 1.0, .rounds = 3,
                        .use = { 1, 1, 1, 1 } };
    while ((c = getopt(argc, argv, "m:k:s:d:g:x:t:r:bh")) != -1) {
        switch (c) {
        case 'm': if (parse_mechs(optarg, o->use)) return -1; break;
        case 'k': o->k = atoi(optarg); break;
        case 's': o->size = (size_t)strtoull(optarg, NULL, 0); break;
        case 'd': o->depth = atoi(optarg); break;
        case 'g': o->gap_us = atoi(optarg); break;
        case 'x': o->nslices = parse_list(optarg, o->slice_us, MAX_SLICES); break;
        case 't': o->busy_s = atof(optarg); break;
        case 'r': o->rounds = atoi(optarg); break;
        case 'b': o->barrier = 1; break;
        case 'h': return 1;
        default: return -1;
        }
    }
    if (o->depth <= 0)
        o->depth = o->k;
    if (o->barrier)
        o->use[MECH_GET] = 0;
    if (o->k < 1 || o->size < 64 || o->size % 8 || o->rounds < 1 || o->gap_us < 0
        || o->size + o->size / 8 > (size_t)1 << 30)
        return -1;
    return 0;
}

static int is_offnode(void)
{
    MPI_Comm node;
    int node_rank_of_0 = 0, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* Under MPICH, MPIR_CVAR_NUM_CLIQUES cuts the host into cliques here. */
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    node_rank_of_0 = rank == 0;
    MPI_Allreduce(MPI_IN_PLACE, &node_rank_of_0, 1, MPI_INT, MPI_MAX, node);
    MPI_Comm_free(&node);
    return !node_rank_of_0;
}

static void setup(struct probe *p)
{
    size_t k = (size_t)p->o.k, d = (size_t)p->o.depth;
    MPI_Aint winsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &p->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p->nranks);
    p->nfwd = p->nranks - 1;
    p->total = p->nfwd * p->o.k;
    p->slot = p->o.size + p->o.size / 8;
    p->mbox = (p->slot + 8 + 63) / 64 * 64;
    p->offnode = is_offnode();
    /* The owner's window holds the mailboxes (also the receive buffers and
     * the gets' destinations); a forwarder's holds its staging buffers. */
    winsize = p->rank == 0 ? (MPI_Aint)((size_t)p->nfwd * d * p->mbox + (size_t)p->nfwd * 64)
                           : (MPI_Aint)(d * p->slot);
    MPI_Win_allocate(winsize, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p->base, &p->win);
    memset(p->base, 0, (size_t)winsize);
    /* One epoch for the whole run, as a library would keep it open. */
    MPI_Win_lock_all(MPI_MODE_NOCHECK, p->win);
    p->tier = xcalloc(p->slot, 1);
    p->t_start = xcalloc(k, sizeof *p->t_start);
    p->blocked = xcalloc(k, sizeof *p->blocked);
    p->freed = xcalloc(k, sizeof *p->freed);
    p->slot_seq = xcalloc(d, sizeof *p->slot_seq);
    p->sreq = xcalloc(d, sizeof *p->sreq);
    p->lat = xcalloc((size_t)p->nfwd * k, sizeof *p->lat);
    p->next = xcalloc((size_t)p->nfwd, sizeof *p->next);
    p->rreq = xcalloc((size_t)p->nfwd * d, sizeof *p->rreq);
    p->nreq = xcalloc((size_t)p->nfwd, sizeof *p->nreq);
    p->notice = xcalloc((size_t)p->nfwd, sizeof *p->notice);
    p->idx = xcalloc((size_t)p->nfwd * d, sizeof *p->idx);
    p->st = xcalloc((size_t)p->nfwd * d, sizeof *p->st);
}

static void teardown(struct probe *p)
{
    MPI_Win_unlock_all(p->win);
    MPI_Win_free(&p->win);
    free(p->tier);
    free(p->t_start);
    free(p->blocked);
    free(p->freed);
    free(p->slot_seq);
    free(p->sreq);
    free(p->lat);
    free(p->next);
    free(p->rreq);
    free(p->nreq);
    free(p->notice);
    free(p->idx);
    free(p->st);
}

static void print_setup(const struct probe *p, const int *offnode)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, off = 0;
    MPI_Get_library_version(version, &len);
    version[strcspn(version, "\n")] = '\0';
    for (int r = 1; r < p->nranks; r++)
        off += offnode[r];
    printf("# forward_probe: %s\n# ranks %d (forwarders %d, %d on another node than rank 0)"
           "  segment %zu + bitmap %zu bytes  K %d  depth %d (staging %.1f MiB per forwarder)"
           "  gap %d us  rounds %d\n",
           version, p->nranks, p->nfwd, off, p->o.size, p->o.size / 8, p->o.k, p->o.depth,
           (double)p->o.depth * (double)p->slot / 1048576.0, p->o.gap_us, p->o.rounds);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    struct probe p = { 0 };
    struct trial_out *res = NULL;
    int *offnode, rc, nm;
    MPI_Init(&argc, &argv);
    rc = parse_opts(argc, argv, &p.o);
    MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
    if (rc != 0 || p.nranks < 2) {
        MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
        if (p.rank == 0)
            usage(rc == 1 ? stdout : stderr);
        MPI_Finalize();
        return rc == 1 ? 0 : 2;
    }
    setup(&p);
    offnode = xcalloc((size_t)p.nranks, sizeof *offnode);
    MPI_Gather(&p.offnode, 1, MPI_INT, offnode, 1, MPI_INT, 0, MPI_COMM_WORLD);
    nm = nmodes(&p.o);
    res = xcalloc((size_t)p.o.rounds * (size_t)nm * NMECHS, sizeof *res);
    if (p.rank == 0)
        print_setup(&p, offnode);
    /* An uncounted pass first: the first transfers into fresh window memory
     * pay its mapping (in one run a first put took 100 ms, later ones 0.2). */
    for (int m = 0; m < NMECHS; m++)
        if (p.o.use[m])
            trial(&p, m, 0, -1, offnode);
    /* Interleaved: every round runs every mode and mechanism once, so a
     * change in the machine's load falls on all of them. */
    for (int round = 0; round < p.o.rounds; round++)
        for (int mode = 0; mode < nm; mode++)
            for (int m = 0; m < NMECHS; m++)
                if (p.o.use[m])
                    res[((size_t)round * (size_t)nm + (size_t)mode) * NMECHS + (size_t)m] =
                        trial(&p, m, mode, round, offnode);
    if (p.rank == 0)
        summary(&p, res);
    free(res);
    free(offnode);
    teardown(&p);
    MPI_Finalize();
    return 0;
}
