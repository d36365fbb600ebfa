/* staging.c - a node's staged forwards (staging.h).
 *
 * Layout of the node's mapping:
 *   [control: 64 B, the spin lock][next sequence number per aggregator]
 *   [entry words: nentries x 64 B][messages: nentries x body_bytes]
 * An entry's words: its state, sequence number, segment and aggregator.
 * The words other than the state are written under the spin lock, before
 * the state leaves FREE, and read under it. */
#include <stdatomic.h>
#include <string.h>
#include "staging.h"
#include "error.h"
#include "node_segment.h"
#include "slot.h"
#include "transport.h"

#if ATOMIC_LLONG_LOCK_FREE != 2 && ATOMIC_LONG_LOCK_FREE != 2
#error "the node's staging needs lock-free 64-bit atomics"
#endif

typedef _Atomic int64_t atomic_word;

enum { FREE = 0, FILLING = 1, READY = 2 };
enum { LINE = 64 };

typedef struct entry_words {
    atomic_word state;
    int64_t     seq, segment, owner;
    int64_t     pad[4];
} entry_words;

_Static_assert(sizeof(entry_words) == LINE, "an entry's words fill one line");
_Static_assert(sizeof(tci_forward_message) == 2 * LINE, "a message header fills two lines");

static size_t round_line(size_t n) { return (n + LINE - 1) / LINE * LINE; }

static size_t seq_bytes(int naggregators)
{
    return round_line((size_t)naggregators * sizeof(int64_t));
}

static size_t body_bytes(int64_t segment_size)
{
    return round_line(sizeof(tci_forward_message) + (size_t)tci_bitmap_bytes(segment_size) +
                      (size_t)segment_size);
}

size_t tci_staging_bytes(int nentries, int naggregators, int64_t segment_size)
{
    return LINE + seq_bytes(naggregators) +
           (size_t)nentries * (sizeof(entry_words) + body_bytes(segment_size));
}

static atomic_word *spin_word(tci_staging *st) { return (atomic_word *)st->segment; }
static int64_t *next_seq(tci_staging *st) { return (int64_t *)(st->segment + LINE); }
static entry_words *entries(tci_staging *st)
{
    return (entry_words *)(st->segment + LINE + seq_bytes(st->naggregators));
}

int tci_staging_open(tci_staging *st, MPI_Comm node_comm, int self, int nentries,
                     int naggregators, int64_t segment_size)
{
    *st = (tci_staging){ .nentries = nentries, .naggregators = naggregators,
                         .segment_size = segment_size, .body_bytes = body_bytes(segment_size),
                         .bytes = tci_staging_bytes(nentries, naggregators, segment_size) };
    return tci_node_segment_open(node_comm, self, st->bytes, "the node's staged forwards",
                                 &st->segment);
}

void tci_staging_close(tci_staging *st)
{
    tci_node_segment_close(st->segment, st->bytes);
    st->segment = NULL;
}

/* The spin lock over claims and sequence numbers: held for a few loads
 * and stores, so a waiter only yields. */
static void lock(tci_staging *st)
{
    atomic_word *w = spin_word(st);
    for (int polls = 0;; polls++) {
        int64_t expected = 0;
        if (atomic_load_explicit(w, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(w, &expected, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return;
        tci_back_off(polls);
    }
}

static void unlock(tci_staging *st)
{
    atomic_store_explicit(spin_word(st), 0, memory_order_release);
}

int tci_staging_claim(tci_staging *st, int owner, int64_t segment, int64_t *seq)
{
    entry_words *e = entries(st);
    int found = -1;
    lock(st);
    for (int i = 0; i < st->nentries && found < 0; i++)
        if (atomic_load_explicit(&e[i].state, memory_order_relaxed) == FREE)
            found = i;
    if (found >= 0) {
        *seq = ++next_seq(st)[owner];
        e[found].seq = *seq;
        e[found].segment = segment;
        e[found].owner = owner;
        atomic_store_explicit(&e[found].state, FILLING, memory_order_relaxed);
    }
    unlock(st);
    return found;
}

int64_t tci_staging_next_seq(tci_staging *st, int owner)
{
    lock(st);
    int64_t seq = ++next_seq(st)[owner];
    unlock(st);
    return seq;
}

tci_forward_message *tci_staging_message(tci_staging *st, int e)
{
    return (tci_forward_message *)(st->segment + LINE + seq_bytes(st->naggregators) +
                                   (size_t)st->nentries * sizeof(entry_words) +
                                   (size_t)e * st->body_bytes);
}

void tci_staging_publish(tci_staging *st, int e)
{
    atomic_store_explicit(&entries(st)[e].state, READY, memory_order_release);
}

void tci_staging_release(tci_staging *st, int e)
{
    lock(st);
    atomic_store_explicit(&entries(st)[e].state, FREE, memory_order_release);
    unlock(st);
}

/* The entry holding OWNER's SEQ, and its state, under the lock. */
static int lookup(tci_staging *st, int owner, int64_t seq, int64_t *state)
{
    entry_words *e = entries(st);
    int found = -1;
    lock(st);
    for (int i = 0; i < st->nentries && found < 0; i++) {
        int64_t s = atomic_load_explicit(&e[i].state, memory_order_acquire);
        if (s != FREE && e[i].owner == owner && e[i].seq == seq) {
            found = i;
            *state = s;
        }
    }
    unlock(st);
    return found;
}

int tci_staging_find(tci_staging *st, int owner, int64_t seq, double *waited)
{
    double start = 0;
    for (int polls = 0;; polls++) {
        int64_t state = FREE;
        int e = lookup(st, owner, seq, &state);
        if (e < 0 || state == READY) {
            if (polls > 0)
                *waited += MPI_Wtime() - start;
            return e;
        }
        if (polls == 0)
            start = MPI_Wtime();
        tci_back_off(polls);
    }
}

int tci_staging_of_segment(tci_staging *st, int64_t segment, int *out, int64_t *seqs)
{
    entry_words *e = entries(st);
    int n = 0;
    lock(st);
    for (int i = 0; i < st->nentries; i++)
        if (atomic_load_explicit(&e[i].state, memory_order_acquire) == READY &&
            e[i].segment == segment) {
            /* insertion in sequence order: a handful of entries */
            int j = n++;
            while (j > 0 && seqs[j - 1] > e[i].seq) {
                out[j] = out[j - 1];
                seqs[j] = seqs[j - 1];
                j--;
            }
            out[j] = i;
            seqs[j] = e[i].seq;
        }
    unlock(st);
    return n;
}

int64_t tci_forward_message_end(const tci_forward_message *m, int r, int64_t segment_size)
{
    return m->hi[r] * 64 < segment_size ? m->hi[r] * 64 : segment_size;
}

/* Bitmap words of the ranges before R, and their data bytes. */
static int64_t words_before(const tci_forward_message *m, int r)
{
    int64_t words = 0;
    for (int i = 0; i < r; i++)
        words += m->hi[i] - m->lo[i];
    return words;
}

static int64_t data_before(const tci_forward_message *m, int r, int64_t segment_size)
{
    int64_t bytes = 0;
    for (int i = 0; i < r; i++)
        bytes += tci_forward_message_end(m, i, segment_size) - m->lo[i] * 64;
    return bytes;
}

size_t tci_forward_message_bytes(const tci_forward_message *m, int64_t segment_size)
{
    int n = (int)m->nranges;
    return sizeof *m + (size_t)words_before(m, n) * sizeof(uint64_t) +
           (size_t)data_before(m, n, segment_size);
}

const uint64_t *tci_forward_message_bits(const tci_forward_message *m, int r)
{
    return (const uint64_t *)(m + 1) + words_before(m, r);
}

const char *tci_forward_message_data(const tci_forward_message *m, int r,
                                     int64_t segment_size)
{
    return (const char *)tci_forward_message_bits(m, (int)m->nranges) +
           data_before(m, r, segment_size);
}
