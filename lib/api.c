/* api.c - the public entry points: argument checks, the file position,
 * splitting requests at segment boundaries, and the collective open, flush
 * and close.  The data movement itself lives in level1.c and level2.c
 * (over the transport chosen here), the owner's drains in owner.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "file.h"
#include "collective.h"
#include "owner.h"
#include "error.h"
#include "prefetch.h"
#include "progress.h"

/* ---- open handles: lets every call reject a closed or bogus handle ---- */

static tcio_file *open_files;
/* The handle most recently found open: the per-access fast path checks a
 * handle with one comparison (cleared when that handle closes). */
static const tcio_file *last_found_open;

static bool is_open(const tcio_file *fh)
{
    for (const tcio_file *f = open_files; f; f = f->next_open)
        if (f == fh) {
            last_found_open = fh;
            return true;
        }
    return false;
}

static void remember_open(tcio_file *fh)
{
    fh->next_open = open_files;
    open_files = fh;
}

static void forget_open(tcio_file *fh)
{
    if (last_found_open == fh)
        last_found_open = NULL;
    for (tcio_file **p = &open_files; *p; p = &(*p)->next_open)
        if (*p == fh) {
            *p = fh->next_open;
            return;
        }
}

/* ---- collective agreement --------------------------------------------- */

/* Every rank learns the largest error code of all ranks (0 if none). */
static int agree(MPI_Comm comm, int rc)
{
    int all = rc;
    if (tci_allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return rc != TCIO_SUCCESS ? rc : TCIO_ERR_MPI;
    return all;
}

/* Result of a collective call: this rank's own error, else TCIO_ERR_REMOTE
 * if another rank failed. */
static int collective_result(MPI_Comm comm, int local)
{
    int global = agree(comm, local);
    if (local != TCIO_SUCCESS)
        return local;
    return global != TCIO_SUCCESS ? TCIO_ERR_REMOTE : TCIO_SUCCESS;
}

/* ---- open ------------------------------------------------------------- */

#define ACCESS_MODES (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR)
#define MPI_MODES (ACCESS_MODES | MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE | \
                   MPI_MODE_UNIQUE_OPEN | MPI_MODE_APPEND | MPI_MODE_SEQUENTIAL)

static int bad_mode(int mode, const char *why)
{
    return tci_error_set(TCIO_ERR_BAD_MODE, "mode 0x%x: %s", (unsigned)mode, why);
}

static int check_mode(int mode)
{
    if (TCIO_MODE_TRUNC & MPI_MODES)
        return bad_mode(mode, "this MPI library uses the bit of TCIO_MODE_TRUNC");
    int access = mode & ACCESS_MODES;
    if (access != MPI_MODE_RDONLY && access != MPI_MODE_WRONLY && access != MPI_MODE_RDWR)
        return bad_mode(mode, "exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY and "
                              "MPI_MODE_RDWR is needed");
    if (mode & ~(MPI_MODES | TCIO_MODE_TRUNC))
        return bad_mode(mode, "unknown flag bits");
    if (mode & MPI_MODE_SEQUENTIAL)
        return bad_mode(mode, "MPI_MODE_SEQUENTIAL is not supported");   /* tcio_write_at needs random access */
    if (access == MPI_MODE_RDONLY && (mode & (MPI_MODE_CREATE | MPI_MODE_EXCL | TCIO_MODE_TRUNC)))
        return bad_mode(mode, "MPI_MODE_RDONLY with MPI_MODE_CREATE, MPI_MODE_EXCL or "
                              "TCIO_MODE_TRUNC");
    return TCIO_SUCCESS;
}

static void return_window(tcio_file *fh);

static void destroy(tcio_file *fh)
{
    free(fh->name);
    tci_staged_discard(&fh->staged);
    tci_level1_free(&fh->l1);
    return_window(fh);
    tci_level2_free(&fh->l2);
    tci_aggregators_free(&fh->aggr);
    tci_config_free(&fh->config);
    tci_segio_close(&fh->io);
    if (fh->file != MPI_FILE_NULL)
        MPI_File_close(&fh->file);
    tci_comm_release(&fh->comm, fh->comm_entry);
    free(fh);
}

static tcio_file *new_handle(int mode)
{
    tcio_file *fh = calloc(1, sizeof *fh);
    if (!fh)
        return NULL;
    fh->comm = MPI_COMM_NULL;
    fh->file = MPI_FILE_NULL;
    fh->can_read = (mode & ACCESS_MODES) != MPI_MODE_WRONLY;
    fh->can_write = (mode & ACCESS_MODES) != MPI_MODE_RDONLY;
    fh->staged_tail = &fh->staged;
    fh->poll_countdown = TCI_POLL_INTERVAL;
    return fh;
}

static int open_file(tcio_file *fh, const char *fname, int mode, MPI_Info info)
{
    MPI_Info pass;
    int err = tci_config_passthrough_info(info, &pass);
    if (err != MPI_SUCCESS)
        return tci_error_from_mpi(err);
    err = MPI_File_open(fh->comm, fname, mode & ~TCIO_MODE_TRUNC, pass, &fh->file);
    if (pass != MPI_INFO_NULL)
        MPI_Info_free(&pass);
    if (err != MPI_SUCCESS) {
        fh->file = MPI_FILE_NULL;
        return tci_error_open_failed(fname, err);
    }
    MPI_File_set_errhandler(fh->file, MPI_ERRORS_RETURN);
    return TCIO_SUCCESS;
}

/* ---- the agreements of the open ------------------------------------------
 * Each step of the open that can fail on some ranks only ends in one
 * reduction (MPI_MAX over int64) that carries everything the ranks must
 * agree on at that point:
 *   - the error code: the largest wins;
 *   - settings that must be equal on every rank, or their segment maps
 *     would disagree: each reduced next to its negation;
 *   - facts: each rank contributes a value and all learn the largest (a
 *     value only rank 0 knows, the others giving 0; a flag any rank raises).
 * doc/design.md lists the collectives of open and close. */
enum { MAX_AGREED_SETTINGS = 8, MAX_AGREED_FACTS = 3 };

typedef struct agreement {
    int                rc;
    int                nsettings;
    int64_t            settings[MAX_AGREED_SETTINGS];
    const char *const *names;        /* of the settings, for the message */
    int                nfacts;
    int64_t            facts[MAX_AGREED_FACTS];   /* in: mine; out: the largest */
} agreement;

static int agree_on(MPI_Comm comm, agreement *a)
{
    int64_t mine[1 + 2 * MAX_AGREED_SETTINGS + MAX_AGREED_FACTS];
    int64_t all[1 + 2 * MAX_AGREED_SETTINGS + MAX_AGREED_FACTS];
    int n = 0;
    mine[n++] = a->rc;
    for (int i = 0; i < a->nsettings; i++) {
        mine[n++] = a->settings[i];
        mine[n++] = -a->settings[i];
    }
    for (int i = 0; i < a->nfacts; i++)
        mine[n++] = a->facts[i];
    if (tci_allreduce(mine, all, n, MPI_INT64_T, MPI_MAX, comm) != MPI_SUCCESS)
        return a->rc != TCIO_SUCCESS ? a->rc : TCIO_ERR_MPI;
    for (int i = 0; i < a->nfacts; i++)
        a->facts[i] = all[1 + 2 * a->nsettings + i];
    if (all[0] != TCIO_SUCCESS)
        return (int)all[0];
    for (int i = 0; i < a->nsettings; i++)
        if (all[1 + 2 * i] != -all[2 + 2 * i])
            return tci_error_set(TCIO_ERR_BAD_CONFIG, "the ranks disagree on %s", a->names[i]);
    return TCIO_SUCCESS;
}

/* The settings as the user gave them (before the file adds its defaults),
 * into A: compared before anything is opened, so that ranks that disagree
 * touch no file. */
static void user_settings(agreement *a, const tci_config *c)
{
    const tci_aggregators listed = { .count = c->list_len, .ranks = c->list };
    static const char *const names[] = {
        "tcio_segment_size", "tcio_segments_per_proc", "tcio_aggregators",
        "tcio_aggregator_placement", "tcio_aggregator_placement's rank list",
        "tcio_early_drain", "tcio_stats", "tcio_transport"
    };
    const int64_t settings[] = { c->segment_size, c->segments_per_proc, c->aggregators,
                                 c->placement, tci_aggregators_digest(&listed), c->early_drain,
                                 c->stats, c->transport };
    a->names = names;
    a->nsettings = (int)(sizeof settings / sizeof settings[0]);
    memcpy(a->settings, settings, sizeof settings);
}

/* The settings in effect, also the ones derived from the file and the
 * nodes, into A: a safety net, as every rank derives them from the same
 * facts. */
static void final_settings(agreement *a, const tcio_file *fh)
{
    const tci_config *c = &fh->config;
    static const char *const names[] = {
        "the segment size (from the file's striping_unit)", "tcio_segments_per_proc",
        "tcio_early_drain", "tcio_stats", "the aggregators chosen"
    };
    const int64_t settings[] = { c->segment_size, c->segments_per_proc, c->early_drain,
                                 c->stats, tci_aggregators_digest(&fh->aggr) };
    a->names = names;
    a->nsettings = (int)(sizeof settings / sizeof settings[0]);
    memcpy(a->settings, settings, sizeof settings);
}

/* Whether the level-2 window of settings C fits in this node's memory:
 * before the file is opened with the user's settings (AGGR NULL: one
 * window, default sizes for what is unset), and again once the sizes and
 * the aggregators on this node (AGGR) are known. */
static int level2_fits(const tci_config *c, const tci_aggregators *aggr, int me)
{
    int64_t size = c->segment_size > 0 ? c->segment_size : TCI_DEFAULT_SEGMENT_SIZE;
    int64_t slots = c->segments_per_proc > 0 ? c->segments_per_proc
                                             : TCI_DEFAULT_SEGMENTS_PER_PROC;
    int windows = 1;
    if (aggr && aggr->node_of && aggr->nnodes > 0) {
        windows = 0;
        for (int i = 0; i < aggr->count; i++)
            windows += aggr->node_of[aggr->ranks[i]] == aggr->node_of[me];
    }
    /* Before the nodes are known (AGGR NULL) auto counts as rma: both
     * transports lay level 2 out alike (slot.h). */
    int nnodes = aggr ? aggr->nnodes : 0;
    int64_t bytes = tci_transport_choose(c->transport, nnodes)->memory_bytes(slots, size);
    const char *limit = tci_transport_exceeds(bytes, windows);
    if (!limit)
        return TCIO_SUCCESS;
    return tci_error_set(TCIO_ERR_NO_MEMORY, "level 2 needs %d window(s) of %lld bytes on this "
                         "node (%lld segments of %lld bytes each), more than %s", windows,
                         (long long)bytes, (long long)slots, (long long)size, limit);
}

/* The largest end offset: segment numbers must fit a slot's state word,
 * and a segment's end must fit an MPI_Offset.  A segment boundary, so that
 * level 1, aimed only at segments below it, never holds a byte past it
 * (the per-access fast path relies on that). */
static MPI_Offset addressable_end(int64_t segment_size)
{
    MPI_Offset limit = (INT64_MAX - segment_size) / segment_size * segment_size;
    if (TCI_MAX_SEGMENT <= limit / segment_size)
        limit = TCI_MAX_SEGMENT * segment_size;
    return limit;
}

/* What the ranks learn in the agreement after MPI_File_open. */
typedef struct opened {
    tci_striping striping;          /* as rank 0 reads it */
} opened;

/* MPI_File_open on every rank, then one agreement on its outcome that also
 * carries the file's striping as rank 0 reads it. */
static int open_and_agree(tcio_file *fh, const char *fname, int mode, MPI_Info info,
                          opened *out)
{
    agreement a = { .rc = open_file(fh, fname, mode, info), .nfacts = 2 };
    if (a.rc == TCIO_SUCCESS && fh->rank == 0) {
        tci_striping s = tci_striping_read(fh->file, fname);
        a.facts[0] = s.unit > 0 ? s.unit : 0;
        a.facts[1] = s.factor > 0 ? s.factor : 0;
    }
    int rc = agree_on(fh->comm, &a);
    out->striping = (tci_striping){ .unit = a.facts[0], .factor = a.facts[1] };
    return rc;
}

/* The transport of FH: its setting on the nodes its communicator spans
 * (known on every rank since choose_transport). */
static const tci_transport_ops *transport_of(const tcio_file *fh)
{
    if (fh->shm_refused)
        return &tci_transport_rma;
    return tci_transport_choose(fh->config.transport, fh->aggr.nnodes);
}

/* Before MPI_File_open: the node map (copied from the user communicator's
 * cache when every rank has it there, NODES_CACHED, else found over the
 * private one and cached) and with it the transport, so that shm asked
 * for on several nodes fails on every rank without creating the file. */
static int choose_transport(tcio_file *fh, MPI_Comm user_comm, bool nodes_cached)
{
    int rc = tci_aggregators_find_nodes(fh->comm, user_comm, nodes_cached, &fh->aggr);
    if (rc != TCIO_SUCCESS)
        return tci_error_set(rc, "tcio_open_comm: finding the nodes of the communicator "
                                 "(MPI_Comm_split_type) failed");
    return tci_transport_check_nodes(fh->config.transport, fh->aggr.nnodes);
}

static tci_window_key window_key(const tcio_file *fh)
{
    return (tci_window_key){ .transport = transport_of(fh),
                             .nslots = fh->map.nslots,
                             .segment_size = fh->map.segment_size,
                             .aggregators_digest = tci_aggregators_digest(&fh->aggr),
                             .owner = fh->aggr.index >= 0 };
}

/* Local: set level 2 up on the slots the previous file on this
 * communicator left, if they have this file's geometry and transport.
 * Returns whether it did. */
static bool reuse_window(tcio_file *fh)
{
    tci_window_key key = window_key(fh);
    tci_transport kept;
    if (!tci_comm_take_window(fh->comm_entry, &key, &kept))
        return false;
    fh->window_reused = true;
    tci_level2_adopt(&fh->l2, &kept, &fh->map);
    return true;
}

/* Local: the level 2 of FH back to its communicator's cache, if it came
 * from there (a failed open then leaves the cache as it found it) or
 * tcio_close hands it over.  Where the cache cannot take it (a file with a
 * communicator of its own, a user communicator freed meanwhile, a
 * transport that cannot be kept: alike on every rank) it stays in FH for
 * tci_level2_free. */
static void return_window(tcio_file *fh)
{
    if (!fh->window_reused)
        return;
    fh->window_reused = false;
    tci_window_key key = window_key(fh);
    tci_transport kept;
    if (!fh->comm_entry || !tci_comm_can_keep_window(fh->comm_entry) ||
        !tci_level2_keep(&fh->l2, &kept))
        return;
    tci_comm_keep_window(fh->comm_entry, &key, &kept);
}

/* Collective: a new level 2, when some rank could not reuse the previous
 * file's.  The one kept on the communicator (of another geometry) is
 * freed first. */
static int open_level2(tcio_file *fh)
{
    /* Ranks that are not aggregators hold no slots. */
    int rc = tci_level2_open(&fh->l2, transport_of(fh), fh->comm, &fh->map,
                             fh->aggr.index >= 0);
    /* This agreement also orders every window's initialisation before any
     * rank's first access to it. */
    return agree(fh->comm, rc);
}

static int new_window(tcio_file *fh)
{
    return_window(fh);
    tci_comm_drop_window(fh->comm_entry);
    int rc = open_level2(fh);
    /* auto chose shm, and MPI could not create the shared window (Open MPI
     * creates one only with its osc/sm component): rma serves any MPI, so
     * auto falls back to it rather than fail the open.  The failure is
     * agreed, so every rank falls back alike. */
    if (rc == TCIO_ERR_MPI && fh->config.transport == TCI_TRANSPORT_AUTO &&
        transport_of(fh) == &tci_transport_shm) {
        tci_level2_free(&fh->l2);
        fh->shm_refused = true;
        rc = open_level2(fh);
    }
    return rc;
}

/* Everything after MPI_File_open: settings that depend on the file,
 * aggregators, buffers, window, size and truncation.  Every failure is
 * agreed so that all ranks leave on the same path. */
static int set_up(tcio_file *fh, const opened *o, int mode)
{
    int rc = tci_config_finish(&fh->config, o->striping.unit);
    int choose_rc = tci_aggregators_choose_agreed(&fh->config, fh->comm, o->striping.factor,
                                                  &fh->aggr);
    if (rc == TCIO_SUCCESS)
        rc = choose_rc;
    /* A level 2 that this node cannot hold is refused before any window
     * exists (ranks of one node decide alike). */
    if (rc == TCIO_SUCCESS)
        rc = level2_fits(&fh->config, &fh->aggr, fh->rank);
    /* From here on the segment map owns the geometry. */
    fh->map = (tci_segmap){ .segment_size = fh->config.segment_size,
                            .naggregators = fh->aggr.count,
                            .aggregator_rank = fh->aggr.ranks,
                            .nslots = fh->config.segments_per_proc };
    if (rc == TCIO_SUCCESS && tci_level1_init(&fh->l1, (int)fh->map.segment_size) != 0)
        rc = TCIO_ERR_NO_MEMORY;
    if (rc == TCIO_SUCCESS && !(mode & TCIO_MODE_TRUNC) &&
        MPI_File_get_size(fh->file, &fh->size_at_open) != MPI_SUCCESS)
        rc = TCIO_ERR_IO;
    bool reused = rc == TCIO_SUCCESS && reuse_window(fh);
    agreement a = { .rc = rc, .nfacts = 1, .facts = { !reused } };
    final_settings(&a, fh);
    if ((rc = agree_on(fh->comm, &a)) != TCIO_SUCCESS)
        return rc;
    /* A reused window needs no agreement: its slots were emptied before
     * the agreement that ended the previous close. */
    if (a.facts[0] && (rc = new_window(fh)) != TCIO_SUCCESS)
        return rc;
    fh->max_end = addressable_end(fh->map.segment_size);
    /* Truncate last, once nothing else can fail, so that a failed open
     * leaves the file as it was.  The file is empty afterwards. */
    if (mode & TCIO_MODE_TRUNC)
        rc = agree(fh->comm, tci_error_from_io(MPI_File_set_size(fh->file, 0)));
    fh->position = (mode & MPI_MODE_APPEND) ? fh->size_at_open : 0;
    return rc;
}

static int open_comm_call(MPI_Comm comm, const char *fname, int mode, MPI_Info info,
                          tcio_file **fhp)
{
    if (fhp)
        *fhp = NULL;
    if (comm == MPI_COMM_NULL)
        return tci_error_set(TCIO_ERR_BAD_ARG, "tcio_open_comm: the communicator is MPI_COMM_NULL");
    tci_collective_enter("tcio_open_comm");
    double t0 = MPI_Wtime();
    int nprocs = 0, me = 0;
    MPI_Comm_size(comm, &nprocs);
    MPI_Comm_rank(comm, &me);
    static bool env_checked;        /* once per process, by rank 0 */
    if (!env_checked && me == 0)
        tci_config_report_unknown_env(stderr);
    env_checked = true;
    /* Every check that needs no file comes before anything is opened,
     * agreed over the caller's communicator in one reduction with the
     * settings and the private communicator's outcome, so that a bad
     * setting on some ranks fails the open everywhere and touches no
     * file. */
    tci_config config = { .list = NULL };
    tcio_file *fh = NULL;
    int rc = !fname ? tci_error_set(TCIO_ERR_BAD_ARG, "tcio_open_comm: the file name is NULL")
             : !fhp ? tci_error_set(TCIO_ERR_BAD_ARG, "tcio_open_comm: the handle pointer is NULL")
                    : check_mode(mode);
    if (rc == TCIO_SUCCESS && (rc = tci_config_from_user(info, &config)) == TCIO_SUCCESS)
        rc = tci_config_check_ranks(&config, nprocs);
    if (rc == TCIO_SUCCESS)
        rc = level2_fits(&config, NULL, 0);
    /* The handle too, before the agreement, and the private communicator,
     * which every rank asks for, also one whose checks failed: a first
     * open on COMM duplicates it collectively. */
    if (rc == TCIO_SUCCESS && !(fh = new_handle(mode)))
        rc = TCIO_ERR_NO_MEMORY;
    /* Whether this rank has the node map cached rides on the agreement too
     * (a rank without must not skip the collectives that find the nodes). */
    bool nodes_cached = false;
    if (fh && tci_aggregators_prepare(comm, nprocs, &fh->aggr, &nodes_cached) != TCIO_SUCCESS &&
        rc == TCIO_SUCCESS)
        rc = TCIO_ERR_NO_MEMORY;
    int cache_failed = 0;
    MPI_Comm dup = MPI_COMM_NULL;
    tci_comm_entry *entry = NULL;
    if (tci_comm_acquire(comm, &dup, &entry, &cache_failed) != MPI_SUCCESS &&
        rc == TCIO_SUCCESS)
        rc = TCIO_ERR_MPI;
    agreement a = { .rc = rc, .nfacts = 2, .facts = { cache_failed, !nodes_cached } };
    user_settings(&a, &config);
    rc = agree_on(comm, &a);
    nodes_cached = a.facts[1] == 0;
    if (a.facts[0])
        tci_comm_uncache(comm, entry);
    if (fh) {
        fh->comm = dup;
        fh->comm_entry = entry;
        fh->config = config;         /* the handle owns the rank list now */
    } else {
        tci_comm_release(&dup, entry);
        tci_config_free(&config);
    }
    if (rc != TCIO_SUCCESS) {
        if (fh)
            destroy(fh);
        return rc;
    }
    MPI_Comm_rank(fh->comm, &fh->rank);
    MPI_Comm_size(fh->comm, &fh->nprocs);
    opened o;
    /* shm on more than one node is refused before the file is created. */
    rc = choose_transport(fh, comm, nodes_cached);
    if (rc == TCIO_SUCCESS)
        rc = open_and_agree(fh, fname, mode, info, &o);
    if (rc == TCIO_SUCCESS)
        rc = set_up(fh, &o, mode);
    if (rc != TCIO_SUCCESS) {
        destroy(fh);
        return rc;
    }
    /* Kept always: the statistics name the file, and a sieved spill of a
     * write-only file opens its own read handle by name (segio.c).  Without
     * memory for it spills stay one write per run, which is only slower. */
    fh->name = strdup(fname);
    if (mode & MPI_MODE_WRONLY)
        tci_segio_identify(&fh->io, fname);
    remember_open(fh);
    fh->stats.time[TCI_T_OPEN] = MPI_Wtime() - t0;
    *fhp = fh;
    return TCIO_SUCCESS;
}


/* ---- argument checks shared by reads and writes ------------------------ */

typedef struct request {
    tci_type_info type;
    int64_t       bytes;
} request;

/* Arguments of a read or write on an open handle FH. */
static int check_request(tcio_file *fh, bool writing, MPI_Offset offset, const void *data,
                         int count, MPI_Datatype type, request *req)
{
    if (fh->failure != TCIO_SUCCESS)
        return fh->failure;                 /* sticky: data was lost already */
    if (writing && !fh->can_write)
        return TCIO_ERR_READ_ONLY;
    if (!writing && !fh->can_read)
        return TCIO_ERR_WRITE_ONLY;
    if (count < 0 || offset < 0)
        return TCIO_ERR_BAD_ARG;
    int rc = tci_type_inspect(type, &req->type);
    if (rc != TCIO_SUCCESS)
        return rc;
    /* count < 2^31: the product cannot overflow while size < 2^32, which
     * spares the common case a 64-bit division. */
    if (req->type.size >= (INT64_C(1) << 32) && count > INT64_MAX / req->type.size)
        return TCIO_ERR_BAD_ARG;
    req->bytes = (int64_t)count * req->type.size;
    if (req->bytes > 0 && !data)
        return TCIO_ERR_BAD_ARG;
    if (offset > fh->max_end - req->bytes)
        return TCIO_ERR_BAD_ARG;
    /* Non-contiguous types go through MPI_Pack, whose sizes are int: any
     * count is packed in pieces, but one element must fit. */
    if (!tci_type_fits_pack(&req->type))
        return TCIO_ERR_BAD_ARG;
    return TCIO_SUCCESS;
}

/* ---- moves: the owner's duties first ------------------------------------ */

/* An aggregator about to move does its early drains first (owner.c), so
 * that slots other ranks filled are freed while it is inside the library
 * anyway; level 2 itself never calls back into the owner's duties. */
static int move_writes(tcio_file *fh)
{
    if (tci_level1_has_writes(&fh->l1))
        tci_owner_early_drains(fh);
    int rc = tci_level2_put_writes(fh);
    int filled_rc = tci_owner_filled(fh);
    return rc != TCIO_SUCCESS ? rc : filled_rc;
}

static int move_reads(tcio_file *fh)
{
    if (tci_level1_has_reads(&fh->l1))
        tci_owner_early_drains(fh);
    return tci_level2_get_reads(fh);
}

/* ---- reads --------------------------------------------------------------- */

/* Deliver every pending read, the current segment's and the staged ones. */
static int complete_reads(tcio_file *fh)
{
    int rc = move_reads(fh);
    if (rc != TCIO_SUCCESS)
        return rc;
    rc = tci_staged_complete(&fh->staged);
    fh->staged_tail = &fh->staged;
    return rc;
}

/* Point the level-1 buffer at SEGMENT for reading, fetching what it held. */
static int level1_for_reading(tcio_file *fh, int64_t segment)
{
    tci_level1 *l1 = &fh->l1;
    if (l1->mode == TCI_L1_READING && l1->segment == segment)
        return TCIO_SUCCESS;
    int rc = l1->mode == TCI_L1_WRITING ? move_writes(fh)   /* read-your-writes */
                                        : move_reads(fh);
    if (rc != TCIO_SUCCESS)
        return rc;
    tci_level1_aim(l1, TCI_L1_READING, segment, fh->map.segment_size);
    return TCIO_SUCCESS;
}

/* A read of BYTES at OFFSET that lies inside the segment level 1 holds
 * for reading: no division and no move (the fast path's and read_bytes'
 * common case). */
static inline int read_in_level1(tcio_file *fh, MPI_Offset offset, void *dst, int64_t bytes)
{
    tci_progress_tick(fh);
    return tci_level1_add_read(&fh->l1, (int)(offset - fh->l1.start), dst, (int)bytes) == 0
               ? TCIO_SUCCESS : TCIO_ERR_NO_MEMORY;
}

static int read_bytes(tcio_file *fh, MPI_Offset offset, char *dst, int64_t bytes)
{
    if (tci_level1_holds(&fh->l1, TCI_L1_READING, offset, bytes))
        return read_in_level1(fh, offset, dst, bytes);
    while (bytes > 0) {
        int64_t segment;
        int disp, chunk = tci_segment_piece(&fh->map, offset, bytes, &segment, &disp);
        int rc = level1_for_reading(fh, segment);
        if (rc != TCIO_SUCCESS)
            return rc;
        if (tci_level1_add_read(&fh->l1, disp, dst, chunk) != 0)
            return TCIO_ERR_NO_MEMORY;
        offset += chunk;
        dst += chunk;
        bytes -= chunk;
    }
    return TCIO_SUCCESS;
}

static int read_typed(tcio_file *fh, MPI_Offset offset, void *data, int count,
                      MPI_Datatype type, const request *req)
{
    if (req->bytes == 0)
        return TCIO_SUCCESS;
    fh->stats.count[TCI_C_BYTES_READ] += req->bytes;
    if (req->type.contiguous)
        return read_bytes(fh, offset, data, req->bytes);
    tci_staged_read *staged = tci_staged_new(data, count, type, &req->type);
    if (!staged)
        return TCIO_ERR_NO_MEMORY;
    int rc = read_bytes(fh, offset, staged->staging, req->bytes);
    /* Queued even on failure: pieces already recorded point into it. */
    *fh->staged_tail = staged;
    fh->staged_tail = &staged->next;
    return rc;
}

static int read_at_call(tcio_file *fh, MPI_Offset offset, void *data, int count,
                        MPI_Datatype type)
{
    if (!fh || !is_open(fh))
        return TCIO_ERR_BAD_HANDLE;
    request req;
    int rc = check_request(fh, false, offset, data, count, type, &req);
    if (rc != TCIO_SUCCESS)
        return rc;
    return read_typed(fh, offset, data, count, type, &req);
}

static int read_call(tcio_file *fh, void *data, int count, MPI_Datatype type)
{
    if (!fh || !is_open(fh))
        return TCIO_ERR_BAD_HANDLE;
    request req;
    int rc = check_request(fh, false, fh->position, data, count, type, &req);
    if (rc != TCIO_SUCCESS)
        return rc;
    rc = read_typed(fh, fh->position, data, count, type, &req);
    if (rc == TCIO_SUCCESS)
        fh->position += req.bytes;
    return rc;
}

/* ---- writes -------------------------------------------------------------- */

/* Point the level-1 buffer at SEGMENT for writing, moving what it held. */
static int level1_for_writing(tcio_file *fh, int64_t segment)
{
    tci_level1 *l1 = &fh->l1;
    if (l1->mode == TCI_L1_WRITING && l1->segment == segment)
        return TCIO_SUCCESS;
    /* Reads recorded earlier must not see this write: complete them. */
    int rc = l1->mode == TCI_L1_READING ? complete_reads(fh) : move_writes(fh);
    if (rc != TCIO_SUCCESS)
        return rc;
    tci_level1_aim(l1, TCI_L1_WRITING, segment, fh->map.segment_size);
    return TCIO_SUCCESS;
}

static void note_written(tcio_file *fh, MPI_Offset end)
{
    if (end > fh->written_end)
        fh->written_end = end;
}

/* A write of BYTES at OFFSET that lies inside the segment level 1 holds
 * for writing: no division and no move (the fast path's and write_bytes'
 * common case). */
static inline int write_in_level1(tcio_file *fh, MPI_Offset offset, const void *src,
                                  int64_t bytes)
{
    tci_progress_tick(fh);
    if (tci_level1_write(&fh->l1, (int)(offset - fh->l1.start), src, (int)bytes) != 0)
        return TCIO_ERR_NO_MEMORY;
    note_written(fh, offset + bytes);
    return TCIO_SUCCESS;
}

static int write_bytes(tcio_file *fh, MPI_Offset offset, const char *src, int64_t bytes)
{
    if (tci_level1_holds(&fh->l1, TCI_L1_WRITING, offset, bytes))
        return write_in_level1(fh, offset, src, bytes);
    MPI_Offset end = offset + bytes;
    while (bytes > 0) {
        int64_t segment;
        int disp, chunk = tci_segment_piece(&fh->map, offset, bytes, &segment, &disp);
        int rc = level1_for_writing(fh, segment);
        if (rc != TCIO_SUCCESS)
            return rc;
        if (tci_level1_write(&fh->l1, disp, src, chunk) != 0)
            return TCIO_ERR_NO_MEMORY;
        offset += chunk;
        src += chunk;
        bytes -= chunk;
    }
    note_written(fh, end);
    return TCIO_SUCCESS;
}

/* A non-contiguous type is packed straight into the level-1 buffer when it
 * fits in one segment, else through a temporary buffer of at most
 * tci_pack_piece_bytes (or one element), a piece of whole elements at a
 * time. */
static int write_packed(tcio_file *fh, MPI_Offset offset, const void *data, int count,
                        MPI_Datatype type, const tci_type_info *info)
{
    int64_t bytes = (int64_t)count * info->size;
    int disp = (int)tci_disp_of(&fh->map, offset);
    if (disp + bytes <= fh->map.segment_size) {
        int rc = level1_for_writing(fh, tci_segment_of(&fh->map, offset));
        /* Room for the extent first (no buffered byte changes if there is
         * none), the extent recorded only once the bytes are packed (a
         * failed pack must not send stale buffer bytes to the file). */
        if (rc == TCIO_SUCCESS && tci_extents_reserve(&fh->l1.extents) != 0)
            rc = TCIO_ERR_NO_MEMORY;
        if (rc == TCIO_SUCCESS)
            rc = tci_type_pack(data, count, type, info, fh->l1.buf + disp);
        if (rc == TCIO_SUCCESS && tci_extents_add(&fh->l1.extents, disp, (int)bytes) != 0)
            rc = TCIO_ERR_NO_MEMORY;     /* cannot happen after the reserve */
        if (rc == TCIO_SUCCESS)
            note_written(fh, offset + bytes);
        return rc;
    }
    int64_t per_piece = info->size > 0 ? tci_pack_piece_bytes / info->size : count;
    if (per_piece < 1)
        per_piece = 1;
    if (per_piece > count)
        per_piece = count;
    char *packed = malloc((size_t)(per_piece * info->size));
    if (!packed)
        return TCIO_ERR_NO_MEMORY;
    int rc = TCIO_SUCCESS;
    const char *in = data;
    for (int done = 0; done < count && rc == TCIO_SUCCESS;) {
        int n = count - done < per_piece ? count - done : (int)per_piece;
        rc = tci_type_pack(in, n, type, info, packed);
        if (rc == TCIO_SUCCESS)
            rc = write_bytes(fh, offset, packed, (int64_t)n * info->size);
        offset += (int64_t)n * info->size;
        in += (int64_t)n * info->extent;
        done += n;
    }
    free(packed);
    return rc;
}

static int write_typed(tcio_file *fh, MPI_Offset offset, const void *data, int count,
                       MPI_Datatype type, const request *req)
{
    if (req->bytes == 0)
        return TCIO_SUCCESS;
    fh->stats.count[TCI_C_BYTES_WRITTEN] += req->bytes;
    if (req->type.contiguous)
        return write_bytes(fh, offset, data, req->bytes);
    return write_packed(fh, offset, data, count, type, &req->type);
}

static int write_at_call(tcio_file *fh, MPI_Offset offset, const void *data, int count,
                         MPI_Datatype type)
{
    if (!fh || !is_open(fh))
        return TCIO_ERR_BAD_HANDLE;
    request req;
    int rc = check_request(fh, true, offset, data, count, type, &req);
    if (rc != TCIO_SUCCESS)
        return rc;
    return write_typed(fh, offset, data, count, type, &req);
}

static int write_call(tcio_file *fh, const void *data, int count, MPI_Datatype type)
{
    if (!fh || !is_open(fh))
        return TCIO_ERR_BAD_HANDLE;
    request req;
    int rc = check_request(fh, true, fh->position, data, count, type, &req);
    if (rc != TCIO_SUCCESS)
        return rc;
    rc = write_typed(fh, fh->position, data, count, type, &req);
    if (rc == TCIO_SUCCESS)
        fh->position += req.bytes;
    return rc;
}

/* ---- position, flush, fetch, close --------------------------------------- */

static int seek_call(tcio_file *fh, MPI_Offset offset, int whence)
{
    if (!fh || !is_open(fh))
        return TCIO_ERR_BAD_HANDLE;
    MPI_Offset base;
    switch (whence) {
    case MPI_SEEK_SET: base = 0; break;
    case MPI_SEEK_CUR: base = fh->position; break;
    case MPI_SEEK_END:
        base = fh->size_at_open > fh->written_end ? fh->size_at_open : fh->written_end;
        break;
    default: return TCIO_ERR_BAD_ARG;
    }
    if ((offset > 0 && base > INT64_MAX - offset) || base + offset < 0)
        return TCIO_ERR_BAD_ARG;
    if (base + offset > fh->max_end)
        return TCIO_ERR_BAD_ARG;            /* no byte there is addressable */
    fh->position = base + offset;
    return TCIO_SUCCESS;
}

static int fetch_call(tcio_file *fh)
{
    if (!fh || !is_open(fh))
        return TCIO_ERR_BAD_HANDLE;
    int rc = complete_reads(fh);
    return rc != TCIO_SUCCESS ? rc : fh->failure;
}

/* Complete reads, move buffered writes and complete every one-sided
 * operation at its target: the local half of flush/close. */
static int settle_local(tcio_file *fh)
{
    int rc = complete_reads(fh);
    int put_rc = move_writes(fh);
    int done_rc = tci_level2_complete_all(&fh->l2);
    if (rc == TCIO_SUCCESS)
        rc = put_rc;
    return rc != TCIO_SUCCESS ? rc : done_rc;
}

static int progress_call(tcio_file *fh)
{
    if (!fh || !is_open(fh))
        return TCIO_ERR_BAD_HANDLE;
    tci_progress(fh);
    return fh->failure;
}

/* Arguments of a prefetch on an open handle. */
static int check_prefetch(const tcio_file *fh, MPI_Offset offset, MPI_Offset length)
{
    if (!fh->can_read)
        return TCIO_ERR_WRITE_ONLY;
    if (offset < 0 || length < 0 || offset > fh->max_end - length)
        return TCIO_ERR_BAD_ARG;
    return TCIO_SUCCESS;
}

static int prefetch_call(tcio_file *fh, MPI_Offset offset, MPI_Offset length)
{
    if (!fh || !is_open(fh))
        return TCIO_ERR_BAD_HANDLE;
    int rc = fh->failure != TCIO_SUCCESS ? fh->failure : check_prefetch(fh, offset, length);
    return rc != TCIO_SUCCESS ? rc : tci_prefetch_range(fh, offset, length);
}

static int read_session_call(tcio_file *fh, MPI_Offset offset, MPI_Offset length)
{
    if (!fh || !is_open(fh))
        return TCIO_ERR_BAD_HANDLE;
    tci_collective_enter("tcio_read_session");
    /* A rank with bad arguments (or a failed handle) still takes part,
     * declaring nothing. */
    int rc = fh->failure != TCIO_SUCCESS ? fh->failure : check_prefetch(fh, offset, length);
    if (rc != TCIO_SUCCESS)
        offset = length = 0;
    int session_rc = tci_prefetch_session(fh, offset, length);
    return collective_result(fh->comm, rc != TCIO_SUCCESS ? rc : session_rc);
}

static int flush_call(tcio_file *fh)
{
    if (!fh || !is_open(fh))
        return TCIO_ERR_BAD_HANDLE;
    tci_collective_enter("tcio_flush");
    int rc = settle_local(fh);
    /* A failure that an earlier call met (an early drain, a spill) is
     * this rank's failure too. */
    return collective_result(fh->comm, rc != TCIO_SUCCESS ? rc : fh->failure);
}

static int close_call(tcio_file *fh)
{
    if (!fh || !is_open(fh))
        return TCIO_ERR_BAD_HANDLE;
    forget_open(fh);
    tci_collective_enter("tcio_close");
    double t0 = MPI_Wtime();
    int rc = settle_local(fh);
    /* No rank drains before every rank's last put has completed. */
    tci_barrier(fh->comm);
    int drain_rc = tci_owner_drain_all(fh);
    if (rc == TCIO_SUCCESS)
        rc = drain_rc;
    if (rc == TCIO_SUCCESS)
        rc = fh->failure;
    const char *transport_name = fh->l2.t.ops->name;   /* static: outlives the close */
    tci_segio_close(&fh->io);
    int close_rc = tci_error_from_io(MPI_File_close(&fh->file));
    fh->file = MPI_FILE_NULL;
    if (rc == TCIO_SUCCESS)
        rc = close_rc;
    rc = collective_result(fh->comm, rc);
    /* After a close that succeeded everywhere the window waits, emptied,
     * for the next file on the communicator (every rank finished its
     * accesses before the drain; the next open's first agreement orders
     * the emptying before that file's accesses).  Otherwise destroy frees
     * it, collectively: the outcome is agreed. */
    if (rc == TCIO_SUCCESS) {
        fh->window_reused = true;
        return_window(fh);
    }
    fh->stats.time[TCI_T_CLOSE] = MPI_Wtime() - t0;
    if (fh->config.stats)
        tci_stats_report(&fh->stats, fh->comm, fh->name, fh->aggr.count, transport_name,
                         fh->config.stats, fh->config.stats_file);
    destroy(fh);
    return rc;
}

/* ---- settings in effect -------------------------------------------------- */

static int info_set_int(MPI_Info info, const char *key, long long value)
{
    char text[32];
    snprintf(text, sizeof text, "%lld", value);
    return MPI_Info_set(info, key, text);
}

/* "r0,r1,...", or "" when it would not fit an info value. */
static void rank_list_text(const tci_aggregators *a, char *text, size_t size)
{
    size_t used = 0;
    text[0] = '\0';
    for (int i = 0; i < a->count; i++) {
        int n = snprintf(text + used, size - used, "%s%d", i ? "," : "", a->ranks[i]);
        if (n < 0 || (size_t)n >= size - used) {
            text[0] = '\0';
            return;
        }
        used += (size_t)n;
    }
}

/* The tcio_* keys of FH's settings in effect, added to INFO. */
static int add_tcio_settings(const tcio_file *fh, MPI_Info info)
{
    const tci_config *c = &fh->config;
    static const char *const placements[] = { "spread", "node", "list" };
    static const char *const stats[] = { "off", "on", "json" };
    char ranks[MPI_MAX_INFO_VAL + 1];
    rank_list_text(&fh->aggr, ranks, sizeof ranks);
    const tci_segmap *m = &fh->map;   /* the geometry in effect */
    int err = info_set_int(info, "tcio_segment_size", m->segment_size);
    if (err == MPI_SUCCESS)
        err = info_set_int(info, "tcio_segments_per_proc", m->nslots);
    if (err == MPI_SUCCESS)
        err = info_set_int(info, "tcio_level2_bytes",
                           m->segment_size * m->nslots * m->naggregators);
    if (err == MPI_SUCCESS)
        err = info_set_int(info, "tcio_aggregators", fh->aggr.count);
    if (err == MPI_SUCCESS)
        err = MPI_Info_set(info, "tcio_aggregator_placement", placements[c->placement]);
    if (err == MPI_SUCCESS && ranks[0])
        err = MPI_Info_set(info, "tcio_aggregator_ranks", ranks);
    if (err == MPI_SUCCESS)
        err = MPI_Info_set(info, "tcio_early_drain",
                           c->early_drain == TCI_DRAIN_MOVER ? "mover"
                           : c->early_drain ? "on" : "off");
    if (err == MPI_SUCCESS)
        err = MPI_Info_set(info, "tcio_stats", stats[c->stats]);
    if (err == MPI_SUCCESS && c->stats_file)
        err = MPI_Info_set(info, "tcio_stats_file", c->stats_file);
    if (err == MPI_SUCCESS)
        err = MPI_Info_set(info, "tcio_transport", fh->l2.t.ops->name);
    return err;
}

static int get_info_call(tcio_file *fh, MPI_Info *info)
{
    if (!fh || !is_open(fh))
        return TCIO_ERR_BAD_HANDLE;
    if (!info)
        return tci_error_set(TCIO_ERR_BAD_ARG, "tcio_get_info: the info pointer is NULL");
    *info = MPI_INFO_NULL;
    /* The MPI-IO hints of the underlying file first (striping_unit,
     * cb_nodes, ...), as MPI_File_get_info gives them. */
    MPI_Info all;
    int rc = tci_error_from_mpi(MPI_File_get_info(fh->file, &all));
    if (rc != TCIO_SUCCESS)
        return rc;
    rc = tci_error_from_mpi(add_tcio_settings(fh, all));
    if (rc != TCIO_SUCCESS) {
        MPI_Info_free(&all);
        return rc;
    }
    *info = all;
    return TCIO_SUCCESS;
}

const char *tcio_version(void)
{
    return TCIO_VERSION;
}

/* ---- the public calls: each result passes tci_error_note, which keeps
 * the last failure for tcio_last_error ---------------------------------- */

int tcio_open_comm(MPI_Comm comm, const char *fname, int mode, MPI_Info info, tcio_file **fh)
{
    int rc = open_comm_call(comm, fname, mode, info, fh);
    /* Every failure after the first check is agreed by all ranks: let
     * each rank explain it, also those where it did not happen. */
    if (rc != TCIO_SUCCESS && comm != MPI_COMM_NULL)
        tci_error_share(comm, rc);
    return tci_error_note("tcio_open_comm", rc);
}

tcio_file *tcio_open(const char *fname, int mode)
{
    tcio_file *fh = NULL;
    return tcio_open_comm(MPI_COMM_WORLD, fname, mode, MPI_INFO_NULL, &fh) == TCIO_SUCCESS
               ? fh : NULL;
}

/* ---- the per-access fast path -------------------------------------------- */

/* Most calls of an fwrite-style code move a few bytes of a predefined type
 * inside the segment that level 1 holds already.  Such a call needs none of
 * check_request's questions beyond these: the handle is the one last found
 * open, it has no sticky failure, the type is one of the two recent
 * predefined types (tci_type_recent) and contiguous, and the bytes lie
 * inside level 1's segment in MODE (which implies the access mode: level 1
 * is aimed only at segments that passed it, and max_end is a segment
 * boundary, so the bytes are addressable too).  Returns the byte count,
 * or -1 to take the full path, which checks and reports everything.
 * Callgrind, 1 rank, Table II at LEN 64K: 222 instructions per
 * tcio_write_at before. */
static inline int64_t fast_access_bytes(const tcio_file *fh, tci_l1_mode mode,
                                        MPI_Offset offset, const void *data, int count,
                                        MPI_Datatype type)
{
    if (!fh || fh != last_found_open || fh->failure != TCIO_SUCCESS || count <= 0 || !data)
        return -1;
    const tci_type_info *info = tci_type_recent(type);
    if (!info || !info->contiguous)
        return -1;
    int64_t bytes = (int64_t)count * info->size;
    return tci_level1_holds(&fh->l1, mode, offset, bytes) ? bytes : -1;
}

/* The bytes written on the fast path, or 0 if the call must take the full
 * path (it moves at least one byte when it qualifies). */
static inline int64_t fast_write(tcio_file *fh, MPI_Offset offset, const void *data, int count,
                                 MPI_Datatype type)
{
    int64_t bytes = fast_access_bytes(fh, TCI_L1_WRITING, offset, data, count, type);
    /* Out of memory for the extent: the full path tries again and reports it. */
    if (bytes <= 0 || write_in_level1(fh, offset, data, bytes) != TCIO_SUCCESS)
        return 0;
    fh->stats.count[TCI_C_BYTES_WRITTEN] += bytes;
    return bytes;
}

static inline int64_t fast_read(tcio_file *fh, MPI_Offset offset, void *data, int count,
                                MPI_Datatype type)
{
    int64_t bytes = fast_access_bytes(fh, TCI_L1_READING, offset, data, count, type);
    if (bytes <= 0 || read_in_level1(fh, offset, data, bytes) != TCIO_SUCCESS)
        return 0;
    fh->stats.count[TCI_C_BYTES_READ] += bytes;
    return bytes;
}

int tcio_write(tcio_file *fh, const void *data, int count, MPI_Datatype type)
{
    int64_t moved = fh && fh == last_found_open   /* before reading fh->position */
                        ? fast_write(fh, fh->position, data, count, type) : 0;
    if (moved > 0) {
        fh->position += moved;
        return tci_error_note("tcio_write", TCIO_SUCCESS);
    }
    return tci_error_note("tcio_write", write_call(fh, data, count, type));
}

int tcio_write_at(tcio_file *fh, MPI_Offset offset, const void *data, int count,
                  MPI_Datatype type)
{
    if (fast_write(fh, offset, data, count, type) > 0)
        return tci_error_note("tcio_write_at", TCIO_SUCCESS);
    return tci_error_note("tcio_write_at", write_at_call(fh, offset, data, count, type));
}

int tcio_read(tcio_file *fh, void *data, int count, MPI_Datatype type)
{
    int64_t moved = fh && fh == last_found_open
                        ? fast_read(fh, fh->position, data, count, type) : 0;
    if (moved > 0) {
        fh->position += moved;
        return tci_error_note("tcio_read", TCIO_SUCCESS);
    }
    return tci_error_note("tcio_read", read_call(fh, data, count, type));
}

int tcio_read_at(tcio_file *fh, MPI_Offset offset, void *data, int count, MPI_Datatype type)
{
    if (fast_read(fh, offset, data, count, type) > 0)
        return tci_error_note("tcio_read_at", TCIO_SUCCESS);
    return tci_error_note("tcio_read_at", read_at_call(fh, offset, data, count, type));
}

int tcio_seek(tcio_file *fh, MPI_Offset offset, int whence)
{
    return tci_error_note("tcio_seek", seek_call(fh, offset, whence));
}

int tcio_fetch(tcio_file *fh)
{
    return tci_error_note("tcio_fetch", fetch_call(fh));
}

int tcio_flush(tcio_file *fh)
{
    return tci_error_note("tcio_flush", flush_call(fh));
}

int tcio_close(tcio_file *fh)
{
    return tci_error_note("tcio_close", close_call(fh));
}

int tcio_progress(tcio_file *fh)
{
    return tci_error_note("tcio_progress", progress_call(fh));
}

int tcio_prefetch(tcio_file *fh, MPI_Offset offset, MPI_Offset length)
{
    return tci_error_note("tcio_prefetch", prefetch_call(fh, offset, length));
}

int tcio_read_session(tcio_file *fh, MPI_Offset offset, MPI_Offset length)
{
    return tci_error_note("tcio_read_session", read_session_call(fh, offset, length));
}

int tcio_get_info(tcio_file *fh, MPI_Info *info)
{
    return tci_error_note("tcio_get_info", get_info_call(fh, info));
}
