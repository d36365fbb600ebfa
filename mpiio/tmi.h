/* tmi.h - internals of libtcio_mpiio, the MPI-IO interposer (doc/design.md,
 * "The MPI-IO interposer").  tmi_ names are the interposer's own; the
 * shared object exports only the MPI_ and PMPI_ names it wraps. */
#ifndef TMI_H
#define TMI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mpi.h>
#include "tcio.h"
#include "calls.h"

/* ---- guard and real entry points (real.c) ----
 * tmi_depth is raised around every call into libtcio and every forwarding
 * to the MPI library: a wrapper entered while it is raised (libtcio's own
 * MPI-IO calls, ROMIO calling MPI_File_* names inside the real call)
 * forwards straight to the real function.  Per thread, so that a
 * program's other threads are not caught by one thread's raised guard. */
extern __attribute__((tls_model("initial-exec"))) _Thread_local int tmi_depth;
#define TMI_LIB(expr) \
    (tmi_depth++, tmi_in_lib++, tmi_lib_rc = (expr), tmi_in_lib--, tmi_depth--, tmi_lib_rc)
extern __attribute__((tls_model("initial-exec"))) _Thread_local int tmi_lib_rc;
/* Raised inside libtcio's calls only (TMI_LIB), not inside forwarded ones:
 * a program's barrier made from a file error handler, inside a forwarded
 * call, is still the program's (tmi_Barrier, served.c). */
extern __attribute__((tls_model("initial-exec"))) _Thread_local int tmi_in_lib;

/* The MPI library's entry point NAME past the interposer (dlsym
 * RTLD_NEXT); NULL, said on stderr, if it has none.  Not in the --wrap
 * form. */
void *tmi_real_symbol(const char *name);
/* The real PMPI_NAME into REAL (a function pointer the caller keeps),
 * resolved at its first use; the caller returns MPI_ERR_INTERN if the
 * MPI library has none.  A function pointer from dlsym's object pointer:
 * POSIX guarantees the conversion works, a union keeps ISO C quiet. */
#define TMI_RESOLVE(name, params, real)                                         \
    do {                                                                        \
        if (!real) {                                                            \
            union { void *obj; int(*fn) params; } u;                            \
            u.obj = tmi_real_symbol("PMPI_" #name);                             \
            if (!u.obj)                                                         \
                return MPI_ERR_INTERN;                                          \
            real = u.fn;                                                        \
        }                                                                       \
    } while (0)

/* The communicator of the real open in progress on this thread, until
 * the MPI library's first duplicate of it (collectives.c); MPI_COMM_NULL
 * otherwise.  Only served.c sets it. */
extern __attribute__((tls_model("initial-exec"))) _Thread_local MPI_Comm tmi_opening;
/* ROMIO's duplicate of it, once made and marked private (collectives.c),
 * until freed; MPI_COMM_NULL otherwise. */
extern __attribute__((tls_model("initial-exec"))) _Thread_local MPI_Comm tmi_open_dup;
/* Drop COMM's private mark, if it has one (not in the --wrap form). */
void tmi_unmark_private(MPI_Comm comm);

/* tmr_NAME: the MPI library's PMPI_NAME, called with the guard raised. */
#define TMI_DECLARE_REAL(name, params, args) int tmr_##name params;
TMI_CALLS(TMI_DECLARE_REAL)
TMI_CALLS_C(TMI_DECLARE_REAL)
#undef TMI_DECLARE_REAL

/* ---- the view (view.c) ---- */
typedef struct tmi_run {
    MPI_Aint off, len;
} tmi_run;

typedef struct tmi_view {
    MPI_Offset disp;
    MPI_Offset esize;            /* bytes of an etype: the pointer's unit */
    int        contiguous;       /* file byte = disp + stream byte         */
    MPI_Offset ft_size;          /* data bytes of one filetype instance    */
    MPI_Offset ft_extent;        /* its extent: the tiling step            */
    tmi_run   *runs;             /* one instance, typemap order            */
    MPI_Offset *cum;             /* stream bytes before each run           */
    size_t     nruns;
    MPI_Offset run_end;          /* the end of its farthest run (a run may
                                    lie past the extent)                   */
} tmi_view;

/* Flatten ETYPE and FILETYPE into V.  Returns 0, or -1 with a reason in
 * WHY (the view cannot be expressed: it is handed over). */
int tmi_view_make(tmi_view *v, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                  char *why, size_t whylen);
void tmi_view_default(tmi_view *v);
void tmi_view_free(tmi_view *v);
/* Call FN for each piece of the data stream's bytes [START, START+LEN)
 * in the file, in stream order; stops early when FN returns nonzero and
 * returns that value. */
typedef int (*tmi_piece_fn)(void *arg, MPI_Offset file_off, MPI_Offset len,
                            MPI_Offset stream_off);
int tmi_view_pieces(const tmi_view *v, MPI_Offset start, MPI_Offset len, tmi_piece_fn fn,
                    void *arg);
/* Whether the file bytes of stream bytes [START, START + LEN), or of the
 * stream byte START where LEN is 0, can be computed in an MPI_Offset
 * (false where a huge offset in etypes would wrap around to a byte before
 * the view: MPI_ERR_ARG). */
bool tmi_view_reaches(const tmi_view *v, MPI_Offset start, MPI_Offset len);
/* The stream byte of offset ETYPES (in etypes) in *START, and whether it
 * and the LEN bytes from it are reached (tmi_view_reaches; false too
 * where ETYPES in bytes exceeds an MPI_Offset). */
bool tmi_view_locate(const tmi_view *v, MPI_Offset etypes, MPI_Offset len, MPI_Offset *start);
/* The file byte of stream byte S (the next byte the view reaches). */
MPI_Offset tmi_view_byte(const tmi_view *v, MPI_Offset s);
/* Stream bytes that lie below file byte SIZE (the end of the file seen
 * through the view). */
MPI_Offset tmi_view_stream_end(const tmi_view *v, MPI_Offset size);

/* ---- statistics (stats.c) ---- */
#define TMI_COUNTERS(X)                                                     \
    X(TMI_S_WRITES, "writes served", "writes")                              \
    X(TMI_S_WRITE_BYTES, "bytes written", "write_bytes")                    \
    X(TMI_S_READS, "reads served", "reads")                                 \
    X(TMI_S_READ_BYTES, "bytes read", "read_bytes")                         \
    X(TMI_S_NONBLOCKING, "nonblocking calls", "nonblocking")                \
    X(TMI_S_SYNCS, "syncs", "syncs")                                        \
    X(TMI_S_BARRIER_FLUSHES, "flushes at barriers", "barrier_flushes")      \
    X(TMI_S_HANDOVERS, "handovers", "handovers")                            \
    X(TMI_S_REFUSALS, "refusals", "refusals")                               \
    X(TMI_S_YIELDED, "MPI collectives yielded", "yielded_collectives")      \
    X(TMI_S_READ_SESSIONS, "read sessions", "read_sessions")
#define TMI_ENUM(e, name, key) e,
enum { TMI_COUNTERS(TMI_ENUM) TMI_S_COUNT };
#undef TMI_ENUM
/* Blocking collectives the MPI library made inside MPI-IO calls that
 * waited yielding (collectives.c), on any file, this process; a file's
 * TMI_S_YIELDED is the growth since its open began. */
extern int64_t tmi_yielded_collectives;

/* ---- the handle table (table.c) ---- */
typedef struct tmi_entry {
    MPI_File   real;          /* the program's handle                     */
    tcio_file *tf;
    MPI_Comm   comm;          /* the interposer's, for its collectives
                                 (statistics, set_view, handover): a
                                 kept one (comms.c), which libtcio's file
                                 was opened on too, or the entry's own
                                 duplicate (OWN_COMM), freed with it      */
    int        own_comm;
    char      *name;          /* as the program gave it                   */
    char      *key;           /* the file's identity (tmi_file_key): a
                                 second open of it                      */
    int        amode;
    int        read_sessions; /* collective reads declare read sessions
                                 (TCIO_MPIIO_READ_SESSIONS, agreed at open) */
    tmi_view   view;
    MPI_Offset pos;           /* individual pointer, in stream bytes      */
    int        split;         /* a split collective is open               */
    MPI_Offset split_bytes;
    int        refused_said;  /* a refusal was explained on stderr        */
    int        barrier_rc;    /* the first failed flush at a program's
                                 barrier (tcio code), returned by the
                                 file's next sync or its close          */
    char      *cache;         /* the read cache (data.c): file bytes       */
    MPI_Offset cache_off, cache_len;   /* cache_len 0: nothing cached      */
    MPI_Offset cache_hit_end; /* reads inside [cache_off, this) are hits
                                 needing no size check: the block's end or
                                 the end of file when it was filled; 0
                                 when nothing is cached                 */
    MPI_Datatype last_type;   /* the datatype of the last small access  */
    int        last_psize;    /* and its size (data.c's predefined_size) */
    int64_t    count[TMI_S_COUNT];
    int64_t    yielded_base;  /* tmi_yielded_collectives before the open */
    int        stats_format;  /* libtcio's tcio_stats for the file: 0 off,
                                 1 text, 2 JSON (tmi_stats_settings)      */
    char      *stats_file;    /* and its tcio_stats_file, or NULL         */
} tmi_entry;

/* ---- the communicators libtcio files are opened on (comms.c) ---- */
/* MPI_Allreduce and MPI_Comm_dup that wait yielding the processor. */
int tmi_allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm);
int tmi_comm_dup(MPI_Comm comm, MPI_Comm *dup);
/* Where a barrier on COMM is the MPI library's own inside a forwarded
 * call (the guard raised, COMM private or the open's: collectives.c), make
 * it the nonblocking way, waited for yielding, set *ERR and return 1;
 * else return 0.  Not in the --wrap form. */
int tmi_yielding_barrier(MPI_Comm comm, int *err);
/* Complete REQ, testing and yielding the processor between tests. */
int tmi_wait_yielding(MPI_Request *req);
/* Local: the identity of the kept communicator congruent with COMM, -2 if
 * an open file uses it, -1 if none is kept. */
long long tmi_comm_proposal(MPI_Comm comm);
/* Local: the kept communicator of identity ID congruent with COMM (one
 * every rank proposed), now in use; MPI_COMM_NULL if there is none. */
MPI_Comm  tmi_comm_take(long long id, MPI_Comm comm);
/* Local: COMM, if kept, is free for the next file. */
void      tmi_comm_give_back(MPI_Comm comm);
/* Local: on COMM's rank 0 a new identity, elsewhere -1 (the open's
 * agreement takes the maximum). */
long long tmi_comm_new_id(MPI_Comm comm);
/* Local: whether COMM's ranks, in order, are FILE_COMM's (MPI_IDENT or
 * MPI_CONGRUENT), remembered per pair of communicators. */
int       tmi_comm_orders(MPI_Comm comm, MPI_Comm file_comm);
/* Local: whether another communicator can be kept. */
int       tmi_comm_can_keep(void);
/* Keep COMM (the interposer's own, in use by the file just opened) as
 * identity ID until MPI_Finalize; only when every rank agreed to. */
void      tmi_comm_keep(MPI_Comm comm, long long id);

/* The served entry of FH, or NULL (not served, or the guard is raised).
 * Inline with the entry found last remembered (tmi_hot): a program of
 * small accesses calls it millions of times on one file. */
extern tmi_entry *tmi_hot;
tmi_entry *tmi_served_search(MPI_File fh);
static inline tmi_entry *tmi_served(MPI_File fh)
{
    if (tmi_depth > 0 || fh == MPI_FILE_NULL)
        return NULL;
    if (tmi_hot && tmi_hot->real == fh)
        return tmi_hot;
    return tmi_served_search(fh);
}
tmi_entry *tmi_table_add(MPI_File real);
void tmi_table_drop(tmi_entry *e);
/* The served entry whose file is KEY, or NULL. */
tmi_entry *tmi_table_find_key(const char *key);
/* The oldest served entry, or NULL (finalize closes them in open order,
 * which is the same on every rank). */
tmi_entry *tmi_table_first(void);
/* Local: the writable handles of files this process has open through
 * the MPI library and does not serve (on MPI_COMM_SELF, left out, handed
 * over; opened with AMODE), by their file's identity KEY
 * (tmi_file_key), so that a later open of the same file is not served
 * behind them.  Not under MPI_THREAD_MULTIPLE (nothing is served), nor
 * where memory runs out (the later open may then be served). */
void tmi_unserved_add(MPI_File real, const char *key, int amode);
void tmi_unserved_drop(MPI_File real);
int  tmi_unserved_open(const char *key);
/* A malloc'ed identity of the file FILENAME names: its device and inode
 * where stat(2) reaches it (as given, else past one of ROMIO's prefixes
 * such as "ufs:"), the same then for every name of the file; else its
 * real path, else the name itself; NULL without memory. */
char *tmi_file_key(const char *filename);
/* The served entries in open order: COUNT of them, the I-th. */
size_t     tmi_table_count(void);
tmi_entry *tmi_table_at(size_t i);

/* ---- decisions, handover, refusal, errors (handover.c) ---- */
int  tmi_verbose(void);
/* Say on rank 0 of COMM (once) what happened to the file NAME: tmi_say
 * with TCIO_MPIIO_VERBOSE only, tmi_warn always (a setting the program
 * must hear of). */
void tmi_say(MPI_Comm comm, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void tmi_warn(MPI_Comm comm, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Collective over E's communicator: libtcio writes and closes its part,
 * the real handle gets the individual file pointer, the entry is dropped.
 * Returns MPI_SUCCESS or an MPI error class (already reported). */
int  tmi_handover(tmi_entry *e, const char *call, const char *why);
/* An independent call that cannot be served: an error through the
 * file's error handler, nothing done. */
int  tmi_refuse(tmi_entry *e, const char *call, const char *why);
/* A libtcio error code as an MPI error class, raised on E's real handle. */
int  tmi_error(tmi_entry *e, const char *call, int tcio_rc);
/* CALL failed for WHY, which is not libtcio's (said on stderr): error
 * class CLS through the file's error handler; returns CLS. */
int  tmi_fail(tmi_entry *e, const char *call, int cls, const char *why);
int  tmi_class_of(int tcio_rc);
/* E's access mode: MPI_MODE_RDONLY, MPI_MODE_WRONLY or MPI_MODE_RDWR. */
static inline int tmi_access_mode(const tmi_entry *e)
{
    return e->amode & (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR);
}
/* Close E's libtcio file (collective) and drop it; returns tcio's code. */
int  tmi_close_served(tmi_entry *e);

/* Collective over E's ranks, once E's file is open: E's summary follows
 * libtcio's settings for E's file (TCIO_STATS and TCIO_STATS_FILE or the
 * info keys, as tcio_get_info reports them), off unless every rank
 * read the same. */
void tmi_stats_settings(tmi_entry *e);
/* Collective over E's ranks: the summary of E's counters (stats.c). */
void tmi_stats_report(tmi_entry *e);

/* ---- data (data.c) ---- */
enum { TMI_READ = 0, TMI_WRITE = 1 };
/* Serve one access: at etype offset OFF (EXPLICIT) or at the individual
 * pointer.  Returns MPI_SUCCESS with *DONE set to the bytes moved, an MPI
 * error class, or -1 when the arguments are for the real MPI-IO to judge
 * (the caller forwards the call). */
int tmi_access(tmi_entry *e, int dir, int explicit_offset, MPI_Offset off, void *buf,
               MPI_Count count, MPI_Datatype type, MPI_Offset *done, const char *call);
/* Forget the read cache where it holds file bytes [OFF, OFF+LEN) (a
 * write of this rank), or all of it (LEN < 0: a sync, a size change). */
void tmi_cache_drop(tmi_entry *e, MPI_Offset off, MPI_Offset len);
void tmi_status_bytes(MPI_Status *status, MPI_Offset bytes);
int  tmi_request_done(MPI_Offset bytes, MPI_Request *request);

#endif
