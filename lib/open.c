/* open.c - tcio_open and tcio_open_comm: the collective open of a file.
 * Local checks first, then a few agreements (one reduction each) between
 * the collective steps (the private communicator, the node map and the
 * transport, MPI_File_open, the aggregators and the level-2 window), so
 * that every rank leaves on the same path and bad settings touch no file
 * (doc/design.md, Open and close). */
#define _GNU_SOURCE   /* RTLD_DEFAULT, for one_mpi.h */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "file.h"
#include "collective.h"
#include "errhandler.h"
#include "comm_cache.h"
#include "error.h"
#include "handle.h"
#include "background.h"
#include "one_mpi.h"
#include "romio_prefix.h"

/* ---- the mode ----------------------------------------------------------- */

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

/* ---- the file: a handle of every rank's own ------------------------------- */

/* The MPI-IO mode of a rank's own handle for the user's MODE: the flags
 * that concern the file as a whole are libtcio's to carry out once
 * (truncation and DELETE_ON_CLOSE by rank 0, APPEND through the position),
 * UNIQUE_OPEN would not be true of the ranks' handles, and only the
 * CREATOR (rank 0) creates the file. */
static int own_mode(int mode, bool creator)
{
    int own = mode & ~(TCIO_MODE_TRUNC | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN |
                       MPI_MODE_APPEND);
    return creator ? own : own & ~(MPI_MODE_CREATE | MPI_MODE_EXCL);
}

/* ---- names the MPI library cannot take ----------------------------------- */

/* Open MPI's MPI-IO (ompio) before 5.0.10 asks its sharedfp/lockedfile
 * component at every MPI_File_open to try a lock on FNAME".locktest."RANK,
 * a name it prints into a 256-byte buffer on the stack (Open MPI issue
 * 13565): from 245 characters on (the rank is 0 on MPI_COMM_SELF) the
 * process aborts ("buffer overflow detected"), or, built without
 * fortification, writes past the buffer.  Such a name is refused unless
 * the environment keeps ompio or that component out: mpiexec's --mca io
 * and --mca sharedfp reach the processes as OMPI_MCA_io and
 * OMPI_MCA_sharedfp (MCA parameter files are not read here; with ompio
 * kept out there, the refusal is needless but harmless to the file).  The
 * version is the library's at run time (MPI_Get_library_version), which
 * may differ from the headers libtcio was built with. */
enum { LOCKEDFILE_NAME_LIMIT = 245 };

#if defined(OPEN_MPI) && OPEN_MPI
/* Whether the MCA selection LIST (NULL: the default) can pick COMPONENT. */
static bool mca_selects(const char *list, const char *component)
{
    if (list == NULL || *list == '\0')
        return true;
    bool named = strstr(list, component) != NULL;
    return list[0] == '^' ? !named : named;
}

/* Whether the Open MPI running has the defect: before 5.0.10 (the
 * headers' version where the library's string does not say). */
static bool lockedfile_overflows(void)
{
    static int known = -1;
    if (known < 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0, major = 0, minor = 0, release = 0;
        if (MPI_Get_library_version(version, &len) != MPI_SUCCESS ||
            sscanf(version, "Open MPI v%d.%d.%d", &major, &minor, &release) != 3) {
            major = OMPI_MAJOR_VERSION;
            minor = OMPI_MINOR_VERSION;
            release = OMPI_RELEASE_VERSION;
        }
        known = major < 5 || (major == 5 && minor == 0 && release < 10);
    }
    return known;
}

static int check_name_for_mpi(const char *fname)
{
    if (strlen(fname) < LOCKEDFILE_NAME_LIMIT || !mca_selects(getenv("OMPI_MCA_io"), "ompio") ||
        !mca_selects(getenv("OMPI_MCA_sharedfp"), "lockedfile") || !lockedfile_overflows())
        return TCIO_SUCCESS;
    return tci_error_set(TCIO_ERR_OPEN, "a file name of %zu characters: Open MPI's MPI-IO (ompio, "
                         "before 5.0.10) aborts the process on names of %d characters or more "
                         "(a buffer overflow in its sharedfp/lockedfile component); give a "
                         "shorter name, or run with --mca sharedfp ^lockedfile or --mca io "
                         "^ompio", strlen(fname), (int)LOCKEDFILE_NAME_LIMIT);
}
#else
static int check_name_for_mpi(const char *fname)
{
    (void)fname;
    return TCIO_SUCCESS;
}
#endif

/* This rank's own handle of FNAME, on MPI_COMM_SELF: every access libtcio
 * makes to the file is independent, so a collective MPI_File_open would
 * only add its own synchronisation (doc/design.md, Open and close). */
static int open_file(tcio_file *fh, const char *fname, int mode, MPI_Info info)
{
    int err = check_name_for_mpi(fname);
    if (err != TCIO_SUCCESS)
        return err;
    MPI_Info pass;
    err = tci_config_passthrough_info(info, &pass);
    if (err != MPI_SUCCESS)
        return tci_error_from_mpi(err);
    err = tci_file_open_own(fname, mode, pass, &fh->file);
    if (pass != MPI_INFO_NULL)
        MPI_Info_free(&pass);
    if (err != MPI_SUCCESS) {
        fh->file = MPI_FILE_NULL;
        return tci_error_open_failed(fname, err);
    }
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
enum { MAX_AGREED_SETTINGS = 12, MAX_AGREED_FACTS = 3 };

/* A setting's name in the message, and the error when ranks differ. */
typedef struct agreed_setting {
    const char *name;
    int         unequal;
} agreed_setting;

typedef struct agreement {
    int                   rc;
    int                   nsettings;
    int64_t               settings[MAX_AGREED_SETTINGS];
    const agreed_setting *about;    /* of each setting */
    int                   nfacts;
    int64_t               facts[MAX_AGREED_FACTS];   /* in: mine; out: the largest */
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
    int err = tci_allreduce(mine, all, n, MPI_INT64_T, MPI_MAX, comm);
    if (err != MPI_SUCCESS)
        return a->rc != TCIO_SUCCESS ? a->rc
               : tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Iallreduce (the ranks' agreement in the "
                                                 "open)", err);
    for (int i = 0; i < a->nfacts; i++)
        a->facts[i] = all[1 + 2 * a->nsettings + i];
    if (all[0] != TCIO_SUCCESS)
        return (int)all[0];
    for (int i = 0; i < a->nsettings; i++)
        if (all[1 + 2 * i] != -all[2 + 2 * i])
            return tci_error_set(a->about[i].unequal, "the ranks disagree on %s",
                                 a->about[i].name);
    return TCIO_SUCCESS;
}

/* The settings as the user gave them (before the file adds its defaults),
 * and the mode, into A: compared before anything is opened, so that ranks
 * that disagree touch no file.  MPI requires one mode on every rank, but
 * each rank opens its own handle on MPI_COMM_SELF, which would not
 * notice; a file every rank opened MPI_MODE_RDONLY is read past its
 * aggregators on several nodes (level2.c, fetch_read_only); and flags
 * add collective steps on the ranks that give them (TCIO_MODE_TRUNC's
 * agreement at the end of the open, MPI_MODE_DELETE_ON_CLOSE's barrier at
 * the close), which ranks without them would match with their next
 * collective step. */
static void user_settings(agreement *a, const tci_config *c, int mode)
{
    const tci_aggregators listed = { .count = c->list_len, .ranks = c->list };
    enum { CONFIG = TCIO_ERR_BAD_CONFIG };
    static const agreed_setting about[] = {
        { "tcio_segment_size", CONFIG }, { "tcio_segments_per_proc", CONFIG },
        { "tcio_aggregators", CONFIG }, { "tcio_aggregator_placement", CONFIG },
        { "tcio_aggregator_placement's rank list", CONFIG }, { "tcio_early_drain", CONFIG },
        { "tcio_stats", CONFIG }, { "tcio_transport", CONFIG },
        { "tcio_node_segments", CONFIG }, { "tcio_forward_staging", CONFIG },
        { "TCIO_TEST_NODES (testing only: it cuts the nodes, and the ranks must cut them "
          "alike)", CONFIG },
        { "the mode (MPI_MODE_RDONLY, MPI_MODE_WRONLY or MPI_MODE_RDWR and every flag)",
          TCIO_ERR_BAD_MODE }
    };
    const int64_t settings[] = { c->segment_size, c->segments_per_proc, c->aggregators,
                                 c->placement, tci_aggregators_digest(&listed), c->early_drain,
                                 c->stats, c->transport, c->node_segments, c->forward_staging,
                                 tci_aggregators_test_nodes(), mode };
    _Static_assert(sizeof about / sizeof about[0] == sizeof settings / sizeof settings[0],
                   "a name and an error for every setting");
    _Static_assert(sizeof settings <= sizeof a->settings, "MAX_AGREED_SETTINGS is too small");
    a->about = about;
    a->nsettings = (int)(sizeof settings / sizeof settings[0]);
    memcpy(a->settings, settings, sizeof settings);
}

/* The settings in effect, also the ones derived from the file and the
 * nodes, into A: a safety net, as every rank derives them from the same
 * facts. */
static void final_settings(agreement *a, const tcio_file *fh)
{
    const tci_config *c = &fh->config;
    enum { CONFIG = TCIO_ERR_BAD_CONFIG };
    static const agreed_setting about[] = {
        { "the segment size (from the file's striping_unit)", CONFIG },
        { "tcio_segments_per_proc", CONFIG }, { "tcio_node_segments", CONFIG },
        { "tcio_early_drain", CONFIG },
        { "tcio_stats", CONFIG }, { "the aggregators chosen", CONFIG },
        { "tcio_forward_staging", CONFIG },
        { "the nodes of the ranks", CONFIG }
    };
    const int64_t settings[] = { c->segment_size, c->segments_per_proc, c->node_segments,
                                 c->early_drain,
                                 c->stats, tci_aggregators_digest(&fh->aggr),
                                 c->forward_staging, tci_aggregators_nodes_digest(&fh->aggr) };
    _Static_assert(sizeof about / sizeof about[0] == sizeof settings / sizeof settings[0],
                   "a name and an error for every setting");
    _Static_assert(sizeof settings <= sizeof a->settings, "MAX_AGREED_SETTINGS is too small");
    a->about = about;
    a->nsettings = (int)(sizeof settings / sizeof settings[0]);
    memcpy(a->settings, settings, sizeof settings);
}

/* The level-2 memory of settings C on this node: WINDOWS of BYTES each,
 * one window (default sizes for what is unset: SLOTS of SIZE) before the
 * aggregators are known (AGGR NULL), else those on this node. */
typedef struct level2_memory {
    int64_t bytes, slots, size;
    int     windows;
} level2_memory;

static level2_memory level2_memory_of(const tci_config *c, const tci_aggregators *aggr, int me)
{
    level2_memory m = {
        .size = c->segment_size > 0 ? c->segment_size : TCI_DEFAULT_SEGMENT_SIZE,
        .slots = c->segments_per_proc > 0 ? c->segments_per_proc : TCI_DEFAULT_SEGMENTS_PER_PROC,
        .windows = 1
    };
    if (aggr && aggr->node_of && aggr->nnodes > 0) {
        m.windows = 0;
        for (int i = 0; i < aggr->count; i++)
            m.windows += aggr->node_of[aggr->ranks[i]] == aggr->node_of[me];
    }
    /* Before the nodes are known (AGGR NULL) auto counts as rma: both
     * transports lay level 2 out alike (slot.h). */
    int nnodes = aggr ? aggr->nnodes : 0;
    m.bytes = tci_transport_plan_for(c->transport, nnodes, false)
                  .level2->memory_bytes(m.slots, m.size);
    return m;
}

/* Whether the level-2 window of settings C fits in this node's memory:
 * before the file is opened with the user's settings (AGGR NULL), and
 * again once the sizes and the aggregators on this node (AGGR) are
 * known. */
static int level2_fits(const tci_config *c, const tci_aggregators *aggr, int me)
{
    level2_memory m = level2_memory_of(c, aggr, me);
    const char *limit = tci_transport_exceeds(m.bytes, m.windows);
    if (!limit)
        return TCIO_SUCCESS;
    return tci_error_set(TCIO_ERR_NO_MEMORY, "level 2 needs %d window(s) of %lld bytes on this "
                         "node (%lld segments of %lld bytes each, with their bitmaps), more than %s", m.windows,
                         (long long)m.bytes, (long long)m.slots, (long long)m.size, limit);
}

/* The node's level-2 memory that FH's window maps into this process:
 * shm, MPICH and Open MPI's osc/sm and osc/rdma map every window of the
 * node into every process of it (measured). */
static int64_t level2_mapped(const tcio_file *fh)
{
    level2_memory m = level2_memory_of(&fh->config, &fh->aggr, fh->rank);
    return m.windows > 0 && m.bytes > INT64_MAX / m.windows ? INT64_MAX : m.bytes * m.windows;
}

/* Whether a new level-2 window, and the scratch segment level 2 takes at
 * its first merge or load, fit in this process's address space beside
 * what it maps already (level 1 among it), under an address-space limit.
 * A window the communicator keeps (of another geometry) is freed before
 * the new one is made: its bytes count as free. */
static int new_window_fits(const tcio_file *fh)
{
    int64_t kept = tci_comm_kept_window_bytes(fh->comm_entry);
    int64_t need = fh->level2_mapped <= INT64_MAX - fh->map.segment_size
                       ? fh->level2_mapped + fh->map.segment_size - kept
                       : INT64_MAX;
    if (tci_address_space_fits(need))
        return TCIO_SUCCESS;
    return tci_error_set(TCIO_ERR_NO_MEMORY, "level 2 needs %lld bytes of this node's windows "
                         "mapped into this process beside what it maps already, more than its "
                         "address-space limit (RLIMIT_AS, ulimit -v) leaves",
                         (long long)fh->level2_mapped);
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

/* The file rank 0's MPI_File_open created: its local name (NULL: none
 * created, or not a local file) and identity. */
typedef struct created_file {
    const char *path;
    dev_t       dev;
    ino_t       ino;
} created_file;

/* What the ranks learn in the agreement after MPI_File_open. */
typedef struct opened {
    tci_striping striping;          /* as rank 0 reads it */
    int          open_rc;           /* this rank's own open (ranks but 0),
                                       agreed by set_up */
    created_file created;           /* rank 0's */
} opened;

/* Whether FNAME names no file, before an open that may create it: its
 * literal name and, past a ROMIO prefix of a POSIX driver, the rest both
 * missing.  False where that cannot be told (another driver's prefix,
 * a stat that fails otherwise). */
static bool name_absent(const char *fname)
{
    struct stat st;
    if (tci_past_romio_prefix(fname, false) && !tci_past_romio_prefix(fname, true))
        return false;
    if (stat(fname, &st) == 0 || errno != ENOENT)
        return false;
    const char *rest = tci_past_romio_prefix(fname, true);
    return !rest || (stat(rest, &st) != 0 && errno == ENOENT);
}

/* A failed open leaves no new file behind: the file rank 0 created for
 * an open that failed later (another rank's own open, a memory refusal
 * once the aggregators are known, the window) is removed again, if its
 * name still gives the same empty file (a file another program put there
 * meanwhile, or wrote into, stays; one that another program opened
 * meanwhile and has not written yet does not).  Best effort: the open has
 * failed already, and says why. */
static void remove_created(const created_file *c)
{
    struct stat st;
    if (c->path && stat(c->path, &st) == 0 && st.st_dev == c->dev && st.st_ino == c->ino &&
        st.st_size == 0)
        unlink(c->path);
}

/* ROMIO and ompio open a directory for reading (the failure came later,
 * at MPI_File_get_size, as TCIO_ERR_IO with "Invalid argument", and Open
 * MPI printed lseek's complaint on every rank): refused here, on rank 0,
 * as tcio.h says, with the reason.  Opens for writing fail in MPI already
 * (EISDIR), so only a read-only open pays the stat.  A name that reaches
 * no single local file (another driver's prefix, or an ambiguous one) is
 * left to MPI. */
static int refuse_directory(tcio_file *fh, const char *fname, int mode)
{
    struct stat st;
    if (!(mode & MPI_MODE_RDONLY) || !tci_file_system_name(fname, &st, true) ||
        !S_ISDIR(st.st_mode))
        return TCIO_SUCCESS;
    MPI_File_close(&fh->file);
    fh->file = MPI_FILE_NULL;
    return tci_error_set(TCIO_ERR_OPEN, "%s is a directory", fname);
}

/* Rank 0 opens the file first (creating it, with the striping hints, if
 * asked to), then one agreement on its outcome that also carries the
 * file's striping as rank 0 reads it; then the others open it, their
 * outcome agreed in set_up's agreement. */
static int open_and_agree(tcio_file *fh, const char *fname, int mode, MPI_Info info,
                          opened *out)
{
    agreement a = { .rc = TCIO_SUCCESS, .nfacts = 2 };
    if (fh->rank == 0) {
        /* A name that looks absent is opened with MPI_MODE_EXCL first, so
         * that this open proves it created the file (a file another
         * program made since the stat, or a dangling symbolic link, which
         * O_EXCL refuses, is then opened as asked and not recorded). */
        bool absent = (mode & MPI_MODE_CREATE) && name_absent(fname);
        int own = own_mode(mode, true);
        a.rc = open_file(fh, fname, absent ? own | MPI_MODE_EXCL : own, info);
        if (absent && !(mode & MPI_MODE_EXCL) && a.rc == TCIO_ERR_FILE_EXISTS) {
            absent = false;
            a.rc = open_file(fh, fname, own, info);
        }
        struct stat st;
        const char *path = absent && a.rc == TCIO_SUCCESS
                               ? tci_file_system_name(fname, &st, true) : NULL;
        if (path && S_ISREG(st.st_mode))
            out->created = (created_file){ .path = path, .dev = st.st_dev, .ino = st.st_ino };
        if (a.rc == TCIO_SUCCESS)
            a.rc = refuse_directory(fh, fname, mode);
        if (a.rc == TCIO_SUCCESS) {
            tci_striping s = tci_striping_read(fh->file, fname);
            a.facts[0] = s.unit > 0 ? s.unit : 0;
            a.facts[1] = s.factor > 0 ? s.factor : 0;
        }
    }
    int rc = agree_on(fh->comm, &a);
    out->striping = (tci_striping){ .unit = a.facts[0], .factor = a.facts[1] };
    out->open_rc = rc == TCIO_SUCCESS && fh->rank != 0
                       ? open_file(fh, fname, own_mode(mode, false), info) : TCIO_SUCCESS;
    return rc;
}

/* Before MPI_File_open: the node map (copied from the user communicator's
 * cache when every rank has it there, NODES_CACHED, else found over the
 * private one and cached) and with it the transport, so that shm asked
 * for on several nodes fails on every rank without creating the file. */
static int choose_transport(tcio_file *fh, MPI_Comm user_comm, bool nodes_cached)
{
    int rc = tci_aggregators_find_nodes(fh->comm, user_comm, nodes_cached, &fh->aggr);
    if (rc != TCIO_SUCCESS)
        return tci_error_explain(rc, "finding the nodes of the communicator "
                                     "(MPI_Comm_split_type) failed");
    return tci_transport_check_nodes(fh->config.transport, fh->aggr.nnodes);
}

/* The pairs that probe whether moves into an aggregator's slots wait for
 * its MPI progress (tci_level2_probe_progress), as moves come from other
 * nodes and from the aggregator's own: pair 0, the first aggregator and
 * the lowest rank on another node; pair 1, the first aggregator that
 * shares its node and the lowest other rank there.  PROBER[I] -1 where
 * there is no such rank. */
static void progress_pairs(const tcio_file *fh, int target[2], int prober[2])
{
    const int *node = fh->aggr.node_of;
    target[0] = target[1] = fh->aggr.ranks[0];
    prober[0] = prober[1] = -1;
    for (int r = 0; r < fh->nprocs && prober[0] < 0; r++)
        if (node[r] != node[target[0]])
            prober[0] = r;
    for (int a = 0; a < fh->aggr.count && prober[1] < 0; a++)
        for (int r = 0; r < fh->nprocs && prober[1] < 0; r++)
            if (r != fh->aggr.ranks[a] && node[r] == node[fh->aggr.ranks[a]]) {
                target[1] = fh->aggr.ranks[a];
                prober[1] = r;
            }
}

/* Collective: a new level 2, when some rank could not reuse the previous
 * file's.  The one kept on the communicator (of another geometry) is
 * freed first. */
static int open_level2(tcio_file *fh)
{
    /* Ranks that are not aggregators hold no slots. */
    const tci_transport_ops *transport = tci_handle_transport(fh);
    int rc = tci_level2_open(&fh->l2, transport, fh->comm, &fh->map, fh->aggr.index >= 0,
                             &tci_downstream_file);
    tci_error_explain(rc, "creating level 2 (the %s transport's window, %lld slots of %lld "
                      "bytes per aggregator)", transport->name, (long long)fh->map.nslots,
                      (long long)fh->map.segment_size);
    /* This agreement also orders every window's initialisation before any
     * rank's first access to it. */
    rc = tci_agree(fh->comm, rc);
    if (rc == TCIO_SUCCESS) {
        int target[2], prober[2];
        progress_pairs(fh, target, prober);
        /* Agreed inside: every rank gets the same result. */
        rc = tci_error_explain(tci_level2_probe_progress(&fh->l2, target, prober),
                               "probing whether the level-2 window's one-sided operations "
                               "wait for their target's progress");
    }
    return rc;
}

static int new_window(tcio_file *fh)
{
    tci_handle_return_window(fh);
    tci_comm_drop_window(fh->comm_entry);
    int rc = open_level2(fh);
    /* auto chose shm, and its shared segment could not be made (no
     * /dev/shm, or not room enough there): rma needs none, so auto falls
     * back to it rather than fail the open.  The failure is agreed, so
     * every rank falls back alike. */
    if (rc != TCIO_SUCCESS && fh->config.transport == TCI_TRANSPORT_AUTO &&
        tci_handle_transport(fh) == &tci_transport_shm) {
        tci_level2_free(&fh->l2);
        fh->shm_refused = true;
        rc = open_level2(fh);
    }
    return rc;
}

/* Everything after MPI_File_open: settings that depend on the file,
 * aggregators, buffers, window, size and truncation.  Every failure is
 * agreed so that all ranks leave on the same path. */
static int set_up(tcio_file *fh, const char *fname, const opened *o, int mode)
{
    int rc = o->open_rc;
    /* The name is kept: the statistics name the file, a sieved spill of a
     * write-only file opens its own read handle by name (segio.c), and
     * rank 0 deletes a DELETE_ON_CLOSE file by name. */
    if (rc == TCIO_SUCCESS && !(fh->name = strdup(fname)))
        rc = tci_error_set(TCIO_ERR_NO_MEMORY, "no memory to keep the file's name");
    int config_rc = tci_error_explain(tci_config_finish(&fh->config, o->striping.unit),
                                      "completing the settings from the file's striping");
    if (rc == TCIO_SUCCESS)
        rc = config_rc;
    int choose_rc = tci_error_explain(tci_aggregators_choose_agreed(&fh->config, fh->comm,
                                                                    o->striping.factor,
                                                                    &fh->aggr),
                                      "choosing the aggregators");
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
        rc = tci_error_set(TCIO_ERR_NO_MEMORY, "no memory for level 1's %lld-byte segment "
                           "buffer (tcio_segment_size)", (long long)fh->map.segment_size);
    if (rc == TCIO_SUCCESS && !(mode & TCIO_MODE_TRUNC)) {
        int err = MPI_File_get_size(fh->file, &fh->size_at_open);
        if (err != MPI_SUCCESS)
            rc = tci_error_set_mpi(TCIO_ERR_IO, "MPI_File_get_size", err);
    }
    if (rc == TCIO_SUCCESS)
        fh->level2_mapped = level2_mapped(fh);
    bool reused = rc == TCIO_SUCCESS && tci_handle_reuse_window(fh);
    /* Agreed below, before any rank enters MPI_Win_allocate. */
    if (rc == TCIO_SUCCESS && !reused)
        rc = new_window_fits(fh);
    /* The size too: every rank's own MPI_File_get_size may see a file that
     * another program changes meanwhile; the largest is every rank's.  And
     * whether every rank took over the combining tier kept beside the
     * reused window (lib/combiner.c): then no rank makes a new one, and
     * the tier needs no agreement of its own. */
    bool tier_adopted = reused && tci_handle_plan(fh).tier && tci_combiner_adopt_kept(fh);
    agreement a = { .rc = rc, .nfacts = 3,
                    .facts = { !reused, fh->size_at_open, !tier_adopted } };
    final_settings(&a, fh);
    if ((rc = agree_on(fh->comm, &a)) != TCIO_SUCCESS)
        return rc;
    fh->size_at_open = a.facts[1];
    fh->stats.count[TCI_C_REUSED_WINDOWS] = a.facts[0] == 0;
    /* A reused window needs no agreement: its slots were emptied before
     * the agreement that ended the previous close. */
    if (a.facts[0]) {
        double made = MPI_Wtime();
        rc = new_window(fh);
        fh->stats.time[TCI_T_OPEN_LEVEL2] = MPI_Wtime() - made;
        if (rc != TCIO_SUCCESS)
            return rc;
    }
    /* On several nodes, the node's combining tier in front of it (every
     * rank has the same node map, so every rank decides alike).  If its
     * shared memory cannot be made (agreed), auto goes on with rma alone,
     * as it falls back from shm on one node; mixed asked for fails. */
    /* A file of the same geometry without the tier (rma asked for) frees
     * a kept one rather than leave its memory mapped beside the window
     * (the plan and the cache are alike on every rank). */
    if (!tci_handle_plan(fh).tier)
        tci_comm_drop_tier(fh->comm_entry);
    bool tier_reused = a.facts[0] == 0 && a.facts[2] == 0;
    double tier_started = MPI_Wtime();
    if (tci_handle_plan(fh).tier && (rc = tci_combiner_open(fh, tier_reused)) != TCIO_SUCCESS) {
        tci_combiner_free(fh);
        if (fh->config.transport != TCI_TRANSPORT_AUTO)
            return rc;
        rc = TCIO_SUCCESS;
    }
    if (tci_handle_plan(fh).tier && !tier_reused)
        fh->stats.time[TCI_T_OPEN_TIER] = MPI_Wtime() - tier_started;
    fh->max_end = addressable_end(fh->map.segment_size);
    /* Truncate last, once nothing else can fail, so that a failed open
     * leaves the file as it was: rank 0, the others learn the outcome.
     * The file is empty afterwards. */
    if (mode & TCIO_MODE_TRUNC)
        rc = tci_agree(fh->comm, fh->rank == 0
                                     ? tci_error_from_io(MPI_File_set_size(fh->file, 0))
                                     : TCIO_SUCCESS);
    fh->delete_on_close = (mode & MPI_MODE_DELETE_ON_CLOSE) != 0;
    fh->position = (mode & MPI_MODE_APPEND) ? fh->size_at_open : 0;
    return rc;
}

static int open_comm_call(const char *call, MPI_Comm comm, const char *fname, int mode,
                          MPI_Info info, tcio_file **fhp)
{
    if (fhp)
        *fhp = NULL;
    if (comm == MPI_COMM_NULL)
        return tci_error_set(TCIO_ERR_BAD_ARG, "the communicator is MPI_COMM_NULL");
    /* Every rank of both groups says the same: refused everywhere, no
     * rank left waiting. */
    int inter = 0;
    if (MPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter)
        return tci_error_set(TCIO_ERR_BAD_ARG, "the communicator is an "
                             "inter-communicator (MPI-IO opens files on intra-communicators)");
    tci_collective_enter(call);
    double t0 = MPI_Wtime(), waited0 = tci_collective_waited();
    int nprocs = 0, me = 0;
    MPI_Comm_size(comm, &nprocs);
    MPI_Comm_rank(comm, &me);
    /* The environment once per process, by rank 0 of its first file's
     * communicator, except where that is MPI_COMM_SELF-sized on a rank
     * other than the world's 0 (every rank opening a file of its own
     * would say it once each); unknown info keys at every open, by its
     * rank 0. */
    static bool env_checked;
    int world_rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    if (!env_checked && (nprocs > 1 || world_rank == 0)) {
        if (me == 0)
            tci_config_report_environment(stderr);
        env_checked = true;
    }
    if (me == 0)
        tci_config_report_unknown_keys(info, stderr);
    /* Every check that needs no file comes before anything is opened,
     * agreed over the caller's communicator in one reduction with the
     * settings and the private communicator's outcome, so that a bad
     * setting on some ranks fails the open everywhere and touches no
     * file. */
    tci_config config = { .list = NULL };
    tcio_file *fh = NULL;
    int rc = !fname ? tci_error_set(TCIO_ERR_BAD_ARG, "the file name is NULL")
             : !fhp ? tci_error_set(TCIO_ERR_BAD_ARG, "the handle pointer is NULL")
                    : check_mode(mode);
    if (rc == TCIO_SUCCESS && (rc = tci_config_from_user(info, &config)) == TCIO_SUCCESS)
        rc = tci_config_check_ranks(&config, nprocs);
    if (rc == TCIO_SUCCESS)
        rc = level2_fits(&config, NULL, 0);
    /* A file this rank closed with tcio_close_begin may still wait for the
     * drain thread: the new handle must see every byte of it (and a
     * truncation must come after them).  The agreement below makes every
     * rank wait for the ranks that wait here. */
    if (fname)
        tci_background_wait_for_file(fname);
    /* The handle too, before the agreement, and the private communicator,
     * which every rank asks for, also one whose checks failed: a first
     * open on COMM duplicates it collectively. */
    if (rc == TCIO_SUCCESS && !(fh = tci_handle_new(mode)))
        rc = tci_error_set(TCIO_ERR_NO_MEMORY, "no memory for the file handle");
    /* Whether this rank has the node map cached rides on the agreement too
     * (a rank without must not skip the collectives that find the nodes). */
    bool nodes_cached = false;
    if (fh && tci_aggregators_prepare(comm, nprocs, &fh->aggr, &nodes_cached) != TCIO_SUCCESS &&
        rc == TCIO_SUCCESS)
        rc = tci_error_set(TCIO_ERR_NO_MEMORY, "no memory for the aggregator tables of %d "
                           "ranks", nprocs);
    int cache_failed = 0;
    MPI_Comm dup = MPI_COMM_NULL;
    tci_comm_entry *entry = NULL;
    /* An entry this open makes goes again if the open fails: it holds a
     * context id, and counts against TCI_MAX_KEPT_COMMS (comm_cache.h)
     * where no file was ever opened.  Every rank has one, or none, alike
     * (the cache changes alike everywhere), and every failure from the
     * agreement below on is agreed. */
    bool had_entry = tci_comm_has_entry(comm);
    int err = tci_comm_acquire(comm, &dup, &entry, &cache_failed);
    bool made_entry = entry && !had_entry;
    if (err != MPI_SUCCESS && rc == TCIO_SUCCESS)
        rc = tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Comm_idup (the file's private communicator)",
                               err);
    agreement a = { .rc = rc, .nfacts = 2, .facts = { cache_failed, !nodes_cached } };
    user_settings(&a, &config, mode);
    rc = agree_on(comm, &a);
    nodes_cached = a.facts[1] == 0;
    if (a.facts[0] || (rc != TCIO_SUCCESS && made_entry))
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
            tci_handle_destroy(fh);
        return rc;
    }
    MPI_Comm_rank(fh->comm, &fh->rank);
    MPI_Comm_size(fh->comm, &fh->nprocs);
    opened o = { .open_rc = TCIO_SUCCESS };
    /* shm on more than one node is refused before the file is created. */
    rc = choose_transport(fh, comm, nodes_cached);
    if (rc == TCIO_SUCCESS)
        rc = open_and_agree(fh, fname, mode, info, &o);
    if (rc == TCIO_SUCCESS)
        rc = set_up(fh, fname, &o, mode);
    if (rc != TCIO_SUCCESS) {
        if (made_entry)
            tci_comm_uncache(comm, entry);
        tci_handle_destroy(fh);      /* rank 0's handle of the file closed */
        remove_created(&o.created);
        return rc;
    }
    /* Which file the name gives now: for a write-only file's sieve reader
     * and, on an aggregator of a writable file, the background drain's
     * descriptor (both opened by name later). */
    if ((mode & MPI_MODE_WRONLY) || (fh->can_write && fh->aggr.index >= 0))
        tci_segio_identify(&fh->io, fname);
    /* The user's promise; the ranks' own handles do not carry it. */
    fh->io.unique_open = (mode & MPI_MODE_UNIQUE_OPEN) != 0;
    tci_handle_remember(fh);
    tci_level2_update_serving(fh);
    fh->stats.time[TCI_T_OPEN] = MPI_Wtime() - t0;
    fh->stats.time[TCI_T_COLLECTIVE_WAITS] = tci_collective_waited() - waited0;
    *fhp = fh;
    return TCIO_SUCCESS;
}


/* ---- the public calls: the result passes tci_error_note, which keeps the
 * last failure for tcio_last_error ---------------------------------------- */

/* MPI can be called: between MPI_Init and MPI_Finalize (before or after,
 * MPI aborts the process at the first call on a communicator). */
static int check_mpi_running(void)
{
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized)
        return tci_error_set(TCIO_ERR_MPI, "MPI is not initialised yet "
                             "(MPI_Init or MPI_Init_thread comes first)");
    if (finalized)
        return tci_error_set(TCIO_ERR_MPI, "MPI was finalised");
    return TCIO_SUCCESS;
}

/* A process that holds the other MPI implementation's library too
 * (one_mpi.h): refused before any MPI call, which would reach the wrong
 * library.  The reason has no "rank R: " (tci_error_set leaves it out
 * there: finding the rank is an MPI call). */
static int refuse_other_mpi(void)
{
#ifdef TCI_OTHER_MPI
    const char *symbol = tci_other_mpi_symbol();
    if (symbol)
        return tci_error_set(
            TCIO_ERR_MPI, "libtcio was built with " TCI_OWN_MPI ", but " TCI_OTHER_MPI "'s "
            "library is loaded too (%s): build the program with " TCI_OWN_MPI "'s mpicc or "
            "mpifort, or use a libtcio built with " TCI_OTHER_MPI, symbol);
#endif
    return TCIO_SUCCESS;
}

/* Both public opens: CALL names the one the program made, in the
 * failure's message and the collective timeout's. */
static int open_named(const char *call, MPI_Comm comm, const char *fname, int mode,
                      MPI_Info info, tcio_file **fh)
{
    /* Before any MPI call: with two MPI libraries in the process, the
     * first would reach the wrong one. */
    int rc = refuse_other_mpi();
    if (rc == TCIO_SUCCESS)
        rc = check_mpi_running();
    if (rc != TCIO_SUCCESS) {
        if (fh)
            *fh = NULL;
        return tci_error_note(call, rc);
    }
    rc = open_comm_call(call, comm, fname, mode, info, fh);
    tci_collective_leave();
    /* Every failure after the first check is agreed by all ranks: let
     * each rank explain it, also those where it did not happen. */
    if (rc != TCIO_SUCCESS && comm != MPI_COMM_NULL)
        tci_error_share(comm, rc);
    return tci_error_note(call, rc);
}

int tcio_open_comm(MPI_Comm comm, const char *fname, int mode, MPI_Info info, tcio_file **fh)
{
    return open_named("tcio_open_comm", comm, fname, mode, info, fh);
}

tcio_file *tcio_open(const char *fname, int mode)
{
    tcio_file *fh = NULL;
    return open_named("tcio_open", MPI_COMM_WORLD, fname, mode, MPI_INFO_NULL, &fh) ==
                   TCIO_SUCCESS
               ? fh : NULL;
}
