/* comm_cache.c - the private communicator of the files opened on one user
 * communicator, kept between opens.
 *
 * Every open file needs a communicator of its own, so that the library's
 * collectives never match the application's.  Duplicating is collective
 * (a context-id agreement, one synchronising collective), and codes open
 * many files on one communicator: the duplicate is kept as an attribute of
 * the user's communicator and reused by the next file opened on it once
 * the previous one is closed.  Files open at the same time on one
 * communicator get duplicates of their own.  The entry is freed with the
 * user's communicator; a duplicate still in use then is freed at its
 * file's close, or (retired after a failed close) at MPI_Finalize.
 *
 * The entry also keeps the level-2 window of the last file closed on the
 * duplicate (MPI_Win_allocate and MPI_Win_free are the dearest collectives
 * of open and close): the next file of the same geometry takes it over,
 * its slots emptied by the close.  MPI_Finalize frees what is left (MPI_COMM_WORLD's
 * attributes are never deleted): every rank holds the same entries in the
 * same order, so the frees match.  Entries are kept on at most
 * TCI_MAX_KEPT_COMMS communicators (comm_cache.h): each holds context ids
 * of the MPI library, which runs out of them at a few thousand. */
#include <stdbool.h>
#include <stdlib.h>
#include "comm_cache.h"
#include "collective.h"
#include "finalize.h"

struct tci_comm_entry {
    MPI_Comm user;       /* whose attribute it is, while attached */
    MPI_Comm dup;
    bool     in_use;     /* by an open file */
    bool     orphaned;   /* detached from USER */
    bool     holds;      /* a level-2 transport T, kept for the next file */
    tci_transport t;
    tci_window_key key;
    /* On several nodes, the node's combining tier of the same file: its
     * transport and the communicator of the node's ranks it was made on
     * (lib/combiner.c), kept beside the window. */
    bool     holds_tier;
    tci_transport tier;
    MPI_Comm node_comm;
    tci_forward_kept forwards;   /* its forwards' window and staging (forward.h) */
    tci_comm_entry *next, *prev;   /* the attached entries, oldest first */
};

static int comm_keyval = MPI_KEYVAL_INVALID;   /* freed at MPI_Finalize */
static tci_comm_entry *attached, *attached_last;
static int attached_count;

static void detach(tci_comm_entry *e)
{
    *(e->prev ? &e->prev->next : &attached) = e->next;
    *(e->next ? &e->next->prev : &attached_last) = e->prev;
    e->next = e->prev = NULL;
    attached_count--;
}

/* Local: the tier's shared memory is unmapped, its communicator freed
 * (every rank of the node holds one alike, and frees it alike). */
static void free_tier(tci_comm_entry *e)
{
    if (!e->holds_tier)
        return;
    tci_transport_close(&e->tier);
    tci_forward_kept_free(&e->forwards);
    MPI_Comm_free(&e->node_comm);
    e->holds_tier = false;
}

static void free_window(tci_comm_entry *e)
{
    free_tier(e);
    if (!e->holds)
        return;
    tci_transport_close(&e->t);
    e->holds = false;
}

static int delete_entry(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    tci_comm_entry *e = value;
    detach(e);
    free_window(e);
    if (e->in_use) {
        e->orphaned = true;         /* its file frees it at close */
        return MPI_SUCCESS;
    }
    MPI_Comm_free(&e->dup);
    free(e);
    return MPI_SUCCESS;
}

/* At MPI_Finalize: every entry still attached (to MPI_COMM_WORLD, or to a
 * communicator the user never freed), then the keyval. */
static void free_all(void)
{
    while (attached) {
        tci_comm_entry *e = attached;
        if (MPI_Comm_delete_attr(e->user, comm_keyval) != MPI_SUCCESS && attached == e)
            detach(e);              /* left to MPI_Finalize */
    }
    MPI_Comm_free_keyval(&comm_keyval);
}

static tci_comm_entry *cached_entry(MPI_Comm comm)
{
    void *value = NULL;
    int found = 0;
    if (comm_keyval == MPI_KEYVAL_INVALID ||
        MPI_Comm_get_attr(comm, comm_keyval, &value, &found) != MPI_SUCCESS || !found)
        return NULL;
    return value;
}

/* Keeps DUP as COMM's cached duplicate; NULL if it cannot. */
static tci_comm_entry *cache(MPI_Comm comm, MPI_Comm dup)
{
    if (comm_keyval == MPI_KEYVAL_INVALID) {
        if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_entry, &comm_keyval, NULL) !=
            MPI_SUCCESS) {
            comm_keyval = MPI_KEYVAL_INVALID;
            return NULL;
        }
        if (tci_at_finalize(free_all) != 0) {
            MPI_Comm_free_keyval(&comm_keyval);
            return NULL;
        }
    }
    tci_comm_entry *e = malloc(sizeof *e);
    if (!e)
        return NULL;
    *e = (tci_comm_entry){ .user = comm, .dup = dup, .in_use = true, .prev = attached_last };
    *(attached_last ? &attached_last->next : &attached) = e;
    attached_last = e;
    attached_count++;
    if (MPI_Comm_set_attr(comm, comm_keyval, e) != MPI_SUCCESS) {
        detach(e);
        free(e);
        return NULL;
    }
    return e;
}

int tci_comm_acquire(MPI_Comm comm, MPI_Comm *dup, tci_comm_entry **entry, int *cache_failed)
{
    *cache_failed = 0;
    tci_comm_entry *e = cached_entry(comm);
    if (e && !e->in_use) {
        e->in_use = true;
        *dup = e->dup;
        *entry = e;
        return MPI_SUCCESS;
    }
    *entry = NULL;
    /* Nonblocking, waited for yielding (collective.c): MPICH's blocking
     * duplicate spins where ranks share cores. */
    MPI_Request req;
    int err = MPI_Comm_idup(comm, dup, &req);
    if (err == MPI_SUCCESS)
        err = tci_collective_wait(&req);
    if (err != MPI_SUCCESS) {
        /* Counted as a failure to cache: where the duplicate failed on some
         * ranks only, the others' new entries must go too, or the next
         * open would duplicate on some ranks and take the cached one on
         * the others. */
        *dup = MPI_COMM_NULL;
        *cache_failed = 1;
        return err;
    }
    MPI_Comm_set_errhandler(*dup, MPI_ERRORS_RETURN);
    if (!e) {
        *entry = cache(comm, *dup);
        *cache_failed = *entry == NULL;
    }
    return MPI_SUCCESS;
}

bool tci_comm_has_entry(MPI_Comm comm)
{
    return cached_entry(comm) != NULL;
}

bool tci_comm_over_limit(const tci_comm_entry *entry)
{
    return entry && !entry->orphaned && attached_count > TCI_MAX_KEPT_COMMS;
}

void tci_comm_let_go(tci_comm_entry *entry)
{
    if (entry && !entry->orphaned)
        tci_comm_uncache(entry->user, entry);
}

void tci_comm_uncache(MPI_Comm comm, tci_comm_entry *entry)
{
    /* The attribute's deletion marks the entry orphaned (it is in use):
     * the file's close frees it. */
    if (entry && cached_entry(comm) == entry)
        MPI_Comm_delete_attr(comm, comm_keyval);
}

/* The retired duplicates (tci_comm_retire), freed at MPI_Finalize. */
typedef struct retired_comm {
    MPI_Comm comm;
    struct retired_comm *next;
} retired_comm;

static retired_comm *retired;
static bool retired_hooked;      /* free_retired is registered to run */

/* A close that MPI_Finalize ends (a tcio_close_begin never ended) may
 * retire a duplicate after this ran: it registers the hook again, which
 * finalize.c allows while its hooks run. */
static void free_retired(void)
{
    while (retired) {
        retired_comm *r = retired;
        retired = r->next;
        MPI_Comm_free(&r->comm);
        free(r);
    }
    retired_hooked = false;
}

void tci_comm_retire(MPI_Comm *dup, tci_comm_entry *entry)
{
    if (*dup == MPI_COMM_NULL)
        return;
    if (entry && !entry->orphaned)
        tci_comm_uncache(entry->user, entry);
    if (entry && !entry->orphaned) {
        /* Still cached: MPI refused the deletion of a valid attribute,
         * which the standard gives no reason for.  Nothing consistent is
         * left (the other ranks may have deleted theirs): the duplicate
         * goes back to the cache as after a close that succeeded. */
        tci_comm_release(dup, entry);
        return;
    }
    free(entry);
    retired_comm *r = malloc(sizeof *r);
    if (r && !retired_hooked)
        retired_hooked = tci_at_finalize(free_retired) == 0;
    if (r && retired_hooked) {
        *r = (retired_comm){ .comm = *dup, .next = retired };
        retired = r;
    } else {
        free(r);          /* never freed: MPI_Finalize takes it with the rest */
    }
    *dup = MPI_COMM_NULL;
}

void tci_comm_release(MPI_Comm *dup, tci_comm_entry *entry)
{
    if (*dup == MPI_COMM_NULL)
        return;
    if (entry && !entry->orphaned) {
        entry->in_use = false;
        *dup = MPI_COMM_NULL;
        return;
    }
    MPI_Comm_free(dup);
    free(entry);
}

static bool same_key(const tci_window_key *a, const tci_window_key *b)
{
    return a->transport == b->transport && a->nslots == b->nslots &&
           a->node_segments == b->node_segments &&
           a->segment_size == b->segment_size &&
           a->aggregators_digest == b->aggregators_digest && a->nnodes == b->nnodes &&
           a->owner == b->owner;
}

bool tci_comm_take_window(tci_comm_entry *entry, const tci_window_key *key,
                          tci_transport *kept)
{
    if (!entry || !entry->holds || !same_key(&entry->key, key))
        return false;
    *kept = entry->t;
    entry->holds = false;
    return true;
}

int64_t tci_comm_kept_window_bytes(const tci_comm_entry *entry)
{
    return entry && entry->holds ? entry->key.mapped_bytes : 0;
}

bool tci_comm_can_keep_window(const tci_comm_entry *entry)
{
    return entry && !entry->orphaned && !entry->holds;
}

void tci_comm_keep_window(tci_comm_entry *entry, const tci_window_key *key,
                          const tci_transport *kept)
{
    entry->t = *kept;
    entry->key = *key;
    entry->holds = true;
}

void tci_comm_drop_window(tci_comm_entry *entry)
{
    if (entry)
        free_window(entry);
}

bool tci_comm_holds_tier(const tci_comm_entry *entry)
{
    return entry && entry->holds_tier;
}

bool tci_comm_take_tier(tci_comm_entry *entry, tci_transport *tier, MPI_Comm *node_comm,
                       tci_forward_kept *forwards)
{
    if (!tci_comm_holds_tier(entry))
        return false;
    *tier = entry->tier;
    *node_comm = entry->node_comm;
    *forwards = entry->forwards;
    entry->holds_tier = false;
    return true;
}

void tci_comm_drop_tier(tci_comm_entry *entry)
{
    if (entry)
        free_tier(entry);
}

bool tci_comm_keep_tier(tci_comm_entry *entry, const tci_transport *tier, MPI_Comm node_comm,
                       const tci_forward_kept *forwards)
{
    if (!entry || !entry->holds || entry->holds_tier || entry->orphaned)
        return false;
    entry->tier = *tier;
    entry->node_comm = node_comm;
    entry->forwards = *forwards;
    entry->holds_tier = true;
    return true;
}
