/*
 * tcio.h - libtcio: transparent collective I/O for MPI applications.
 *
 * Replace the fwrite/fread calls of a code that writes one shared file as a
 * stream of small, interleaved pieces by tcio_write/tcio_read.  The library
 * combines each rank's pieces in a private level-1 buffer (one file segment
 * long), moves them with one-sided MPI into stripe-sized level-2 segments
 * spread round-robin over a set of aggregator ranks, and writes whole
 * segments to the file with MPI-IO: as soon as every byte of a segment has
 * been written (early drain), the rest at tcio_close.  See doc/design.md
 * for the protocol, doc/semantics.md for the guarantees summarised here and
 * doc/configuration.md for the settings and a tuning guide.
 *
 * ---------------------------------------------------------------------------
 *  READS ARE LAZY.  tcio_read and tcio_read_at only record where the data
 *  must go.  THE DESTINATION BUFFER HOLDS ITS DATA ONLY AFTER tcio_fetch,
 *  tcio_flush OR tcio_close RETURNS.  Do not read it, free it or reuse it
 *  before then.
 * ---------------------------------------------------------------------------
 *
 * Collective and local calls
 *   tcio_open, tcio_open_comm, tcio_read_session, tcio_flush, tcio_sync,
 *   tcio_set_size, tcio_close, tcio_close_begin and tcio_close_end are
 *   collective over the file's communicator: every rank must call them, in
 *   the same order for all files.  tcio_write, tcio_write_at,
 *   tcio_read, tcio_read_at, tcio_seek, tcio_get_size, tcio_fetch,
 *   tcio_prefetch and tcio_progress are local: a rank may call them any
 *   number of times, and no other rank needs to enter the library for them
 *   to finish.  Where the MPI library needs a target's own MPI calls to
 *   complete one-sided operations (tcio_get_info's tcio_target_progress
 *   "needed", as under MPICH with the rma transport or on several
 *   nodes), a local call may wait until an aggregator next calls MPI, in
 *   the library or outside it (tcio_progress says how a rank that
 *   computes long can help).
 *
 * Visibility of data
 *   - Read-your-writes: a rank's read returns its own earlier writes,
 *     flushed or not.
 *   - After tcio_flush has returned on every rank, a read by any rank
 *     returns every write made before the flush by any rank.
 *   - A rank's later write to the same bytes wins over its earlier one.  Two
 *     ranks writing the same bytes between two flushes leave, per byte, one
 *     value or the other.
 *   - The file on disk holds the data after tcio_close (or tcio_close_end)
 *     returns 0 on every rank, and every write made before a tcio_sync
 *     once it returns 0 on every rank (the file staying open).  Bytes
 *     that no rank wrote keep what the file had: holes read as
 *     zero and the existing content of a file opened for update is
 *     preserved.  A segment written in many small pieces may reach the file
 *     as a read-modify-write of the span of its written bytes (data
 *     sieving), which writes the file's own bytes back between them (a
 *     sparse hole inside that span then holds allocated zeros), so the file
 *     must not be changed by other means between tcio_open and tcio_close
 *     (another tcio or MPI-IO handle, or POSIX calls, count as such;
 *     reading it by other means after a tcio_sync is fine).
 *   - Reading past the end of the file is defined: the bytes past the end
 *     (and in holes) read as zero.  The end of the file is the larger of
 *     its size at open (or as the last tcio_set_size set it) and the end
 *     of any byte written through the library that the reader can see.
 *
 * Threads
 *   Not thread-safe: calls on one file must not run concurrently.  The
 *   library needs MPI_THREAD_SINGLE only (MPI_THREAD_FUNNELED or above if
 *   the application itself uses threads, with only one thread in libtcio
 *   at a time per process).  tcio_close_begin hands an aggregator's
 *   segments to a helper thread of the library (one per process, started
 *   at the first tcio_close_begin that needs it, ended at MPI_Finalize)
 *   that writes them with POSIX calls and never calls MPI, allocates no
 *   memory and blocks every signal.  The MPI standard's words for
 *   MPI_THREAD_SINGLE ("only one thread will execute") do not foresee
 *   such a thread; MPICH and Open MPI themselves run helper threads of
 *   their own in a process initialised with MPI_THREAD_SINGLE, and their
 *   thread level only governs locking inside MPI, which a thread that
 *   never calls MPI does not enter (doc/portability.md).  A program that
 *   wants the letter of the standard initialises MPI with
 *   MPI_THREAD_FUNNELED, or sets tcio_background_memory=0 (no thread:
 *   tcio_close_begin then writes as tcio_close does).
 *
 * Errors
 *   Every int-returning call returns TCIO_SUCCESS (0) or one of the codes
 *   below; tcio_error_string turns any of them into a one-line message, and
 *   tcio_last_error tells why the last failure on this rank happened.  The
 *   library reports errors only through these codes and never aborts on its
 *   own (the two exceptions are opt-in or silenceable: see "Misuse" in
 *   doc/semantics.md; and a close that MPI_Finalize ends, because the
 *   program never called tcio_close_end, writes its failure to standard
 *   error, having no call to return it to).  A rejected call changes nothing:
 *   no data moves and the file position stays.  An MPI error or a lack of
 *   memory (TCIO_ERR_NO_MEMORY: its list of extents, a spill's buffer) in a
 *   move of level 1's bytes into level 2 is returned to the call that made
 *   the move; the bytes stay in level 1, and the next call that needs the
 *   move (tcio_close included) makes it again.  A data call that fails
 *   that way (rather than being rejected) may have taken the bytes of its
 *   first segments already: a write's are written later with the rest,
 *   and its file position stays, so repeating the call writes the same
 *   bytes again.  A read or write call that fails (also one refused for
 *   a failure that stuck, below; not one rejected for its arguments), or
 *   a failed completion of reads (tcio_fetch, or the one inside
 *   tcio_flush, tcio_sync, tcio_set_size or tcio_close), drops every read
 *   pending on this rank: their buffers hold undefined bytes, the library
 *   no longer writes into them, and they must be read again.  A
 *   collective call refused before anything moves changes nothing (its
 *   pending reads complete later).  A file-system or MPI error
 *   once data has left level 1 (a spill's or early drain's write, a merge
 *   between nodes), or a lack of memory there (a forward received on
 *   several nodes), sticks to the
 *   handle: every later call on it that can fail (tcio_write*,
 *   tcio_read*, tcio_fetch, tcio_prefetch, tcio_progress, and the
 *   collective tcio_flush, tcio_sync, tcio_set_size, tcio_read_session
 *   and tcio_close) returns it,
 *   and tcio_close (tcio_close_end) returns an error on every rank.
 */
#ifndef TCIO_H
#define TCIO_H

#include <mpi.h>
#include "tcio_version.h"   /* TCIO_VERSION_MAJOR, _MINOR, _PATCH, TCIO_VERSION */

/* A program compiled with another MPI than the library's would link both
 * MPI libraries and crash inside the first call that passes a handle:
 * refused here (and at run time by the open, for programs that no header
 * check sees: TCIO_ERR_MPI).  MPICH's derivatives define MPICH_VERSION
 * too. */
#if TCIO_BUILT_WITH_OPEN_MPI && !defined(OPEN_MPI)
#error "libtcio was built with Open MPI, but this mpi.h belongs to another MPI: compile with Open MPI's mpicc (mpicc.openmpi on Debian) or use a libtcio built with this MPI"
#elif TCIO_BUILT_WITH_MPICH && (!defined(MPICH_VERSION) || defined(OPEN_MPI))
#error "libtcio was built with MPICH, but this mpi.h belongs to another MPI: compile with MPICH's mpicc (mpicc.mpich on Debian) or use a libtcio built with this MPI"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Extra open flag, OR-ed with the MPI_MODE_* flags: truncate an existing
 * file to length zero at open, as fopen(name, "w") does.  Needs
 * MPI_MODE_WRONLY or MPI_MODE_RDWR.  Its value lies far above every
 * MPI_MODE_* flag of MPICH and Open MPI; tcio_open rejects a mode in which
 * it would collide with a flag of the MPI library in use.
 */
#define TCIO_MODE_TRUNC 0x40000000

/* Room for any message of tcio_last_error, NUL included. */
#define TCIO_MAX_ERROR_STRING 512

/* Error codes.  0 is success; every error is a positive constant. */
enum tcio_error {
    TCIO_SUCCESS = 0,
    TCIO_ERR_BAD_HANDLE,   /* NULL handle, a handle already closed, or one
                              between tcio_close_begin and tcio_close_end
                              given to any call but tcio_close_end       */
    TCIO_ERR_BAD_ARG,      /* negative count, offset or length, NULL data, bad
                              whence, NULL out-pointer or file name,
                              MPI_COMM_NULL or an inter-communicator,
                              sizes that differ between the ranks of
                              tcio_set_size, an end past the
                              largest addressable offset ((2^40 - 2)
                              segments, 1 EiB with 1 MiB segments, or
                              2^63 - 1 minus one segment rounded down to
                              a segment boundary where that is less), or a
                              single element of a non-contiguous type
                              over 2 GiB */
    TCIO_ERR_BAD_TYPE,     /* MPI_DATATYPE_NULL or a type not committed    */
    TCIO_ERR_BAD_MODE,     /* no or several of RDONLY/WRONLY/RDWR, RDONLY
                              with CREATE/EXCL/TRUNC, SEQUENTIAL, unknown bit;
                              or ranks that give different modes (the
                              access mode or any flag) */
    TCIO_ERR_READ_ONLY,    /* write or set size: file opened MPI_MODE_RDONLY */
    TCIO_ERR_WRITE_ONLY,   /* read from a file opened MPI_MODE_WRONLY      */
    TCIO_ERR_BAD_CONFIG,   /* an invalid tcio_* setting (info key or TCIO_*
                              environment variable): a size or count that is
                              not a positive number (or segment counts over
                              2^20), zero or more than P aggregators, a rank
                              list with duplicates, out-of-range ranks or
                              over 4,096 entries; or ranks that disagree */
    TCIO_ERR_NO_MEMORY,    /* memory for buffers or the window ran out     */
    TCIO_ERR_NO_SUCH_FILE, /* open: file (or directory) does not exist     */
    TCIO_ERR_ACCESS,       /* open: permission denied                      */
    TCIO_ERR_FILE_EXISTS,  /* open: MPI_MODE_EXCL and the file exists      */
    TCIO_ERR_OPEN,         /* open: any other reason the file system gave
                              (the name is a directory, too long, ...);
                              under Open MPI's ompio before 5.0.10 also a
                              name of 245 characters or more, on which
                              its MPI_File_open aborts the process
                              (doc/portability.md)                        */
    TCIO_ERR_NO_SPACE,     /* the file system is full (or the quota reached;
                              recognised also where ROMIO reports it as a
                              plain I/O error, from its message)           */
    TCIO_ERR_IO,           /* the file system failed a read or write       */
    TCIO_ERR_MPI,          /* an MPI call inside the library failed        */
    TCIO_ERR_REMOTE,       /* a collective call (tcio_flush, tcio_sync,
                              tcio_set_size, tcio_read_session, tcio_close,
                              tcio_close_end): another rank failed; this
                              rank's own part succeeded                    */
    TCIO_ERR_COUNT         /* number of codes; not an error itself         */
};

typedef struct tcio_file tcio_file;

/*
 * Open FNAME on MPI_COMM_WORLD with the MPI-IO access MODE (MPI_MODE_RDONLY,
 * MPI_MODE_WRONLY or MPI_MODE_RDWR, optionally with MPI_MODE_CREATE,
 * MPI_MODE_EXCL, MPI_MODE_APPEND, MPI_MODE_DELETE_ON_CLOSE,
 * MPI_MODE_UNIQUE_OPEN and TCIO_MODE_TRUNC).  Configuration comes from the
 * environment (TCIO_SEGMENT_SIZE, TCIO_SEGMENTS_PER_PROC; see
 * tcio_open_comm).  Collective on MPI_COMM_WORLD.  Returns the handle, or
 * NULL on any failure: tcio_last_error then returns the error code, one
 * of the errors of tcio_open_comm, and says why.  With MPI_MODE_WRONLY
 * each rank may open FNAME once more, read-only on MPI_COMM_SELF, for the
 * read-modify-write of segments written in many small pieces (not with
 * MPI_MODE_UNIQUE_OPEN, nor where reading is refused: such segments are
 * then written piece by piece); it is closed by tcio_sync, tcio_set_size,
 * tcio_close_begin and tcio_close.
 */
tcio_file *tcio_open(const char *fname, int mode);

/*
 * Open FNAME collectively over COMM, an intra-communicator (every rank passes the same name, mode
 * and configuration; modes and settings are compared, names are not, as
 * MPI-IO does not compare them: ranks that name different files each
 * reach their own, doc/semantics.md, "Misuse").  INFO may be MPI_INFO_NULL; it may carry:
 *   tcio_segment_size       segment size in bytes, a positive integer with
 *                           an optional k/K, m/M or g/G suffix (powers of
 *                           1024), at most 1 GiB.  Default: the striping_unit
 *                           the MPI-IO layer reports for the file, else 1 MiB.
 *   tcio_segments_per_proc  level-2 segments held by each aggregator, a
 *                           positive integer (same suffixes).  Default: 16.
 *   tcio_node_segments      on several nodes, segments held by each rank
 *                           in its node's combining tier (same form).
 *                           Default: 4, or tcio_segments_per_proc if
 *                           smaller.
 *   tcio_aggregators        number of aggregators, the ranks that hold
 *                           level-2 segments and write the file: 1..P.
 *                           Default: one per node (two on a single node),
 *                           related to the stripe count when it is known
 *                           (doc/configuration.md).
 *   tcio_aggregator_placement  "spread" (evenly spaced ranks, the default),
 *                           "node" (the same number on every node; the
 *                           count is rounded up to a multiple of the node
 *                           count) or a comma-separated list of distinct
 *                           ranks, "0,8,16" (its length is the count).
 *   tcio_early_drain        "on" (default), "off" (also 1/0, yes/no,
 *                           true/false) or "mover": a segment is written
 *                           as soon as every byte of it was written, by
 *                           its aggregator ("on") or ("mover") by the
 *                           rank whose write completed it when that rank
 *                           reaches the slot by address (shm; with rma an
 *                           aggregator's own slots), else by its
 *                           aggregator.
 *   tcio_stats              "on", "off" (default) or "json": tcio_close
 *                           makes rank 0 write a summary of the file's
 *                           traffic and phase times, a text table on
 *                           standard output ("on") or one JSON object on
 *                           one line on standard error ("json").
 *   tcio_stats_file         a file name: the summary is appended to it
 *                           instead (rank 0 opens it at each close; if it
 *                           cannot, the default stream is used).
 *   tcio_transport          how data reaches the aggregators' slots: "auto"
 *                           (default: shm when every rank of the
 *                           communicator is on one node, mixed when it
 *                           spans several, rma when the shared-memory
 *                           segment cannot be made), "rma" (MPI
 *                           one-sided operations), "shm" (one POSIX
 *                           shared-memory segment over the node, moves as
 *                           copies; every rank of the communicator must
 *                           share one node, else the open fails on every
 *                           rank with TCIO_ERR_BAD_CONFIG and creates no
 *                           file) or "mixed" (several nodes: shm inside
 *                           each node, where the node's pieces of a
 *                           segment are combined, rma between nodes, one
 *                           move per node and segment; shm on one node).
 *                           Lower case; anything else gives
 *                           TCIO_ERR_BAD_CONFIG.
 *   tcio_background_memory  bytes of level 2 per node (same suffixes, or
 *                           0) whose segments may wait for the helper
 *                           thread of tcio_close_begin; an aggregator's
 *                           share is this divided by the file's
 *                           aggregators on its node, less what its earlier
 *                           files still wait with; segments beyond it are
 *                           written inside tcio_close_begin.  0: no
 *                           thread, tcio_close_begin writes everything as
 *                           tcio_close does.  Default: an eighth of the
 *                           node's physical memory.  It may differ between
 *                           ranks (nodes differ in memory).
 *   tcio_forward_staging    several nodes (the mixed transport): how many
 *                           of a node's combined segments per rank of the
 *                           node may be on their way to their aggregators
 *                           as copies sent with MPI_Isend, so that a
 *                           forward waits for no other rank (0..64; each
 *                           copy takes a segment and its bitmap of the
 *                           node's shared memory); 0, the default: every
 *                           forward merges into the aggregator's slot
 *                           under its lock, waiting for the aggregator's
 *                           MPI progress.  Must be equal on every rank.
 * Each has an environment variable of the same name in capitals
 * (TCIO_SEGMENT_SIZE, ..., TCIO_BACKGROUND_MEMORY, TCIO_FORWARD_STAGING) that takes
 * precedence over the info key (so that a run can be tuned without
 * recompiling).  The first open of a process warns on rank 0's standard
 * error about each TCIO_* variable the library does not know (a typo
 * would otherwise be ignored), and about a value of an environment-only
 * setting it cannot read; every open warns on rank 0 about each tcio_*
 * info key that is no setting; TCIO_WARN_UNKNOWN=off silences both.
 * TCIO_COLLECTIVE_TIMEOUT=<seconds> (environment only) makes a rank that
 * waits longer than that in a collective call for the other ranks (in a
 * collective step, or for one rank's MPI progress or slot) print a
 * message naming the call and abort the job (doc/semantics.md, Misuse).
 * Every other info key passes through to MPI_File_open:
 * striping_unit and striping_factor set the striping of a file created
 * on Lustre or GPFS.  Each rank opens FNAME with a handle of its own
 * (MPI_File_open on MPI_COMM_SELF; libtcio's file accesses are all
 * independent), rank 0 first, creating the file; rank 0 also carries out
 * TCIO_MODE_TRUNC and, at tcio_close, MPI_MODE_DELETE_ON_CLOSE.  The
 * file position starts at 0 (at the end of the file with
 * MPI_MODE_APPEND).
 * On success stores the handle in *FH and returns TCIO_SUCCESS; otherwise
 * returns TCIO_ERR_BAD_ARG, TCIO_ERR_BAD_MODE, TCIO_ERR_BAD_CONFIG,
 * TCIO_ERR_NO_MEMORY, TCIO_ERR_NO_SUCH_FILE, TCIO_ERR_ACCESS,
 * TCIO_ERR_FILE_EXISTS, TCIO_ERR_OPEN, TCIO_ERR_NO_SPACE (the file system
 * or the quota full when MPI_File_open created the file),
 * TCIO_ERR_IO (MPI_File_get_size failed, or the truncation of
 * TCIO_MODE_TRUNC did: the truncation also gives TCIO_ERR_NO_SPACE or
 * TCIO_ERR_NO_MEMORY where MPI's error class says so) or TCIO_ERR_MPI,
 * the same code on every rank, with *FH set to NULL; the library changed
 * no file, and created none unless a failure came after rank 0's open
 * (below).
 * Bad arguments, modes and settings (also settings or modes that differ
 * between ranks, where MPI wants one mode on every rank, or settings that
 * name more aggregators or higher ranks than the communicator has) are
 * found before MPI_File_open.  Rank 0 opens the file first (and creates
 * it with MPI_MODE_CREATE), the other ranks after an agreement; after a
 * failure past rank 0's open (another rank's open failing, as where the
 * path is missing on that rank's node; out of memory; an MPI error) rank 0
 * removes the file again if this open created it and it is still empty
 * (only where the name reaches a local, POSIX file; through another
 * MPI-IO driver's prefix the empty file can stay).  An existing file is
 * left as it was (TCIO_MODE_TRUNC's truncation comes last).
 * TCIO_ERR_NO_MEMORY also when the level-2 windows of a node would take
 * more than half its physical memory or the free space of /dev/shm, or
 * exceed the address-space limit (RLIMIT_AS): checked before
 * MPI_File_open for one window of the given (or default) sizes, and again
 * once the aggregators are known, then with every window of the node, a
 * scratch segment and what the process maps already (a trial mapping on
 * every rank, agreed before the window is made).  After a refusal by the
 * second check rank 0 removes the file this open created, as above; an
 * existing file is left as it was.
 * TCIO_ERR_MPI also before MPI_Init and after MPI_Finalize (no MPI call
 * is made then), when the process holds the other MPI implementation's
 * library beside libtcio's (MPICH and Open MPI are told apart: a program
 * compiled or linked with the other MPI's mpicc or mpifort, such as a
 * Fortran `use mpi` program, which the check below cannot see; refused
 * before any MPI call, on each rank by itself, the reason without its
 * "rank R: " prefix), and when the MPI library cannot create the level-2 window
 * (for example Open MPI's osc/rdma without an RDMA-capable transport),
 * gives it the separate memory model (MPI_WIN_MODEL), which libtcio does
 * not support (doc/portability.md), or fails a one-sided operation of the
 * open's probe of it (tcio_get_info's tcio_target_progress).
 * Under Open MPI 4.1, the MPI windows (the rma transport: several nodes,
 * or rma asked for) of files opened at the same moment on communicators
 * with no rank in common that share a node can share memory (an Open MPI
 * defect, fixed in 5.0): open such files one after the other
 * (doc/portability.md, One-sided components under Open MPI).
 * Opening a file that this process closed with tcio_close_begin and
 * whose tcio_close_end has not come yet (under any name of the file,
 * also with one of ROMIO's file-system prefixes such as "ufs:", which
 * MPICH's MPI-IO takes off; Open MPI's ompio takes such a name as it is,
 * so there it names another file) waits for its helper thread, so
 * that the new handle sees every byte (on every rank of COMM: their
 * agreement waits for the ranks that wait); a rank outside COMM that still
 * holds segments of it is not waited for.
 * The first open on COMM keeps a duplicate of COMM and, after a successful
 * tcio_close, the file's level-2 window as attributes of COMM, for the
 * next file opened on it (which then needs neither a duplicate,
 * MPI_Comm_idup, nor MPI_Win_allocate): an aggregator keeps its level-2 memory between files
 * until COMM is freed, a file of another geometry is opened on it, or MPI
 * finalizes (doc/design.md, Open and close).  A process keeps them on at
 * most 16 communicators (each holds some of the MPI library's context
 * ids, of which MPICH has about 2,000): past that, a close lets its
 * communicator's duplicate and window go, and the next open there makes
 * them again.
 */
int tcio_open_comm(MPI_Comm comm, const char *fname, int mode, MPI_Info info,
                   tcio_file **fh);

/*
 * Write COUNT elements of TYPE from DATA at the rank's file position and
 * advance the position by the bytes written.  TYPE may be any committed
 * datatype, also non-contiguous in memory: its bytes land contiguously in
 * the file, in typemap order.  Local.  The data is copied before the call
 * returns: DATA may be reused at once.
 * Returns TCIO_SUCCESS, TCIO_ERR_BAD_HANDLE, TCIO_ERR_BAD_ARG (count < 0,
 * DATA NULL while the request holds bytes, end offset overflows), TCIO_ERR_BAD_TYPE,
 * TCIO_ERR_READ_ONLY, TCIO_ERR_NO_MEMORY, or TCIO_ERR_IO/TCIO_ERR_NO_SPACE/
 * TCIO_ERR_MPI when moving buffered data on needed a file or MPI operation
 * that failed.
 */
int tcio_write(tcio_file *fh, const void *data, int count, MPI_Datatype type);

/* As tcio_write, at byte OFFSET (>= 0); the file position is not used and
 * not changed.  Same errors, and TCIO_ERR_BAD_ARG for OFFSET < 0. */
int tcio_write_at(tcio_file *fh, MPI_Offset offset, const void *data,
                  int count, MPI_Datatype type);

/*
 * Record a read of COUNT elements of TYPE into DATA from the rank's file
 * position and advance the position by the bytes requested.  Local and lazy:
 * DATA HOLDS THE DATA ONLY AFTER tcio_fetch, tcio_flush OR tcio_close
 * RETURNS (the library may fill it earlier).  Bytes past the end of the file
 * read as zero.  Returns TCIO_SUCCESS, TCIO_ERR_BAD_HANDLE, TCIO_ERR_BAD_ARG,
 * TCIO_ERR_BAD_TYPE, TCIO_ERR_WRITE_ONLY, TCIO_ERR_NO_MEMORY, or an I/O or
 * MPI error from completing earlier requests that this call needed to finish.
 */
int tcio_read(tcio_file *fh, void *data, int count, MPI_Datatype type);

/* As tcio_read, at byte OFFSET (>= 0); the file position is not used and
 * not changed.  Same errors, and TCIO_ERR_BAD_ARG for OFFSET < 0. */
int tcio_read_at(tcio_file *fh, MPI_Offset offset, void *data, int count,
                 MPI_Datatype type);

/*
 * Set the rank's file position: to OFFSET (MPI_SEEK_SET), to the position
 * plus OFFSET (MPI_SEEK_CUR) or to the end of the file plus OFFSET
 * (MPI_SEEK_END; the end as tcio_get_size returns it: the size the ranks
 * last agreed on, at open or at the last tcio_flush, tcio_sync or
 * tcio_set_size, and this rank's own writes since).  Local.  Returns TCIO_SUCCESS, TCIO_ERR_BAD_HANDLE, or
 * TCIO_ERR_BAD_ARG for a bad whence, a resulting position < 0 or past the
 * largest addressable offset (see TCIO_ERR_BAD_ARG), or an overflow;
 * the position is then unchanged.
 */
int tcio_seek(tcio_file *fh, MPI_Offset offset, int whence);

/*
 * Collective.  Move this rank's buffered writes to level 2, complete its
 * pending reads, then synchronise: when tcio_flush has returned on every
 * rank, every rank's reads see every write made before it.  The data is not
 * necessarily in the file yet (tcio_sync or tcio_close writes it).  The
 * ranks also agree on the end of the file (see tcio_get_size).  Returns
 * TCIO_SUCCESS, TCIO_ERR_BAD_HANDLE (FH NULL, closed or closing: nothing
 * happened, and the other ranks wait, as for any collective call a rank
 * skips), TCIO_ERR_IO, TCIO_ERR_NO_SPACE, TCIO_ERR_NO_MEMORY,
 * TCIO_ERR_MPI (each also for a failure that an earlier call of this rank
 * met and that stuck to the handle: its code again), or TCIO_ERR_REMOTE
 * if only another rank failed.
 */
int tcio_flush(tcio_file *fh);

/*
 * Collective.  Put every rank's writes made before it into the file,
 * which stays open and writable: complete this rank's pending reads, move
 * its buffered writes to level 2, wait for every rank, make each
 * aggregator write the level-2 segments that hold unwritten bytes (its
 * segments stay in level 2, clean, for later reads and writes), and
 * MPI_File_sync every rank's handle on both sides of a barrier (MPI's
 * sync-barrier-sync).  When tcio_sync has returned 0 on every rank, the
 * file holds every byte written through FH before it, on every rank, and
 * another MPI-IO handle, process or program (after MPI_File_sync of its
 * own handle, if it had the file open already) reads them; every rank's
 * reads through FH see them too, as after tcio_flush.  Writes after it
 * are buffered again and reach the file at the next tcio_sync or at
 * tcio_close; a segment written in part again is written back with the
 * bytes of the file around the new ones, so nothing written before the
 * sync is lost or replaced by older bytes.  The file must still not be
 * changed by other means while FH is open (see Visibility above).  The
 * ranks agree on the end of the file: afterwards tcio_get_size returns
 * the same size on every rank, counting every rank's writes.  On a file
 * opened MPI_MODE_RDONLY it is tcio_flush (nothing to write or sync).
 * Returns TCIO_SUCCESS on every rank, or this rank's own error:
 * TCIO_ERR_BAD_HANDLE (FH NULL, closed or closing: nothing happened, and
 * the other ranks wait, as for any collective call a rank skips),
 * TCIO_ERR_IO, TCIO_ERR_NO_SPACE, TCIO_ERR_NO_MEMORY or TCIO_ERR_MPI (a
 * segment or the MPI_File_sync failed: the failure sticks to the handle,
 * and tcio_close fails too; a segment that could not be written stays
 * buffered, and the close tries again; also a failure that an earlier
 * call of this rank met), or
 * TCIO_ERR_REMOTE if only another rank failed.
 */
int tcio_sync(tcio_file *fh);

/*
 * Local.  Store in *SIZE the size of the file as this rank knows it,
 * without communication: the size the ranks last agreed on (the file's
 * size at open, then at each tcio_flush, tcio_sync and tcio_set_size),
 * or the end of this rank's own writes since, if that is further.  Right
 * after a tcio_flush or tcio_sync it is the same on every rank and counts
 * every rank's writes made before it (as MPI_File_get_size after
 * MPI_File_sync); other ranks' writes after it are not counted until the
 * next one.  Bytes are counted when written, buffered or not: the size
 * of the file on disk reaches it at tcio_sync or tcio_close (holes
 * included, which read as zero).  Returns TCIO_SUCCESS, TCIO_ERR_BAD_HANDLE
 * or TCIO_ERR_BAD_ARG (SIZE NULL); *SIZE is set only on success.
 */
int tcio_get_size(tcio_file *fh, MPI_Offset *size);

/*
 * Collective; every rank passes the same SIZE.  Make the file SIZE bytes
 * long, as MPI_File_set_size does: truncate it, or extend it with bytes
 * that read as zero.  Every rank's buffered writes below SIZE are kept
 * (they reach the file at tcio_sync or tcio_close, and reads see them);
 * every byte at or past SIZE, in the file or still buffered anywhere, is
 * dropped and never written later (a write after the call past SIZE
 * extends the file again, with zeros between).  File positions do not
 * change.  When it returns 0 on every rank, the file on disk is SIZE
 * bytes long (the buffered bytes below SIZE reach it later, at tcio_sync
 * or tcio_close), and tcio_get_size returns SIZE on every rank until the
 * next write past it.
 * Arguments are checked on every rank before anything happens: if any
 * rank's are bad, every rank fails and neither the file nor anything
 * buffered changes.  Returns TCIO_SUCCESS on every rank, or:
 * TCIO_ERR_BAD_HANDLE (FH NULL, closed or closing: nothing happened, and
 * the other ranks wait, as for any collective call a rank skips);
 * TCIO_ERR_BAD_ARG (SIZE negative or past the largest addressable offset,
 * on this rank; or SIZE differs between ranks: then every rank returns
 * it); TCIO_ERR_READ_ONLY (opened MPI_MODE_RDONLY, the same on every
 * rank); TCIO_ERR_IO, TCIO_ERR_NO_SPACE, TCIO_ERR_NO_MEMORY or
 * TCIO_ERR_MPI (moving buffered data failed: nothing was cut; or the truncation itself failed: the
 * failure sticks to the handle, and tcio_close fails too; also a failure
 * that an earlier call of this rank met, which refuses the call);
 * TCIO_ERR_REMOTE where
 * this rank's part (or its arguments) was fine and another rank's was not.
 */
int tcio_set_size(tcio_file *fh, MPI_Offset size);

/*
 * Local.  Complete this rank's pending reads: on return every buffer given
 * to tcio_read/tcio_read_at holds its data.  Returns TCIO_SUCCESS,
 * TCIO_ERR_BAD_HANDLE, TCIO_ERR_IO, TCIO_ERR_NO_SPACE, TCIO_ERR_NO_MEMORY
 * or TCIO_ERR_MPI (also a failure that stuck to the handle earlier: the
 * reads are completed first, their buffers hold the data).  On a failure
 * of its own the pending reads are dropped, their buffers undefined
 * (Errors, at the top).
 */
int tcio_fetch(tcio_file *fh);

/*
 * Collective.  Complete pending reads, move buffered writes to level 2,
 * wait for every rank, write every level-2 segment to the file, close the
 * file and free the handle (even on error: do not use FH afterwards; a
 * call with it returns TCIO_ERR_BAD_HANDLE unless a later open happened to
 * reuse its memory, as with a reused POSIX descriptor).
 * Returns TCIO_SUCCESS only if every rank's data reached the file; otherwise
 * the same failure on every rank: this rank's own error code, or
 * TCIO_ERR_REMOTE if this rank's part succeeded but another rank's failed.
 * A file opened with MPI_MODE_DELETE_ON_CLOSE whose deletion fails (rank
 * 0's, after all data reached the file) fails the close the same way
 * (TCIO_ERR_IO on rank 0) and stays.
 * TCIO_ERR_BAD_HANDLE if FH is NULL, closed or closing (nothing happened,
 * and the other ranks wait, as for any collective call a rank skips).
 */
int tcio_close(tcio_file *fh);

/*
 * Collective.  The first half of tcio_close, for a program that computes
 * while its file is written (a checkpoint): complete pending reads, move
 * buffered writes to level 2 and wait for every rank; then each aggregator
 * hands its level-2 segments to a helper thread of this process (see
 * Threads above), which writes them while the program goes on, and the
 * MPI-IO handle of the file is closed.  On return no rank needs another
 * rank for the data any more, and the program may compute, call MPI or
 * open other files (see tcio_open_comm for the same file); FH is closing:
 * only tcio_close_end accepts it (every other call returns
 * TCIO_ERR_BAD_HANDLE), and every rank must call tcio_close_end on it.
 * Segments beyond an aggregator's share of tcio_background_memory, and
 * every segment when the helper thread cannot reach the file by its name
 * with POSIX calls (a name with one of ROMIO's prefixes other than those
 * of drivers that write through the operating system, which are taken
 * off: "testfs:", say, but not "ufs:" or "lustre:"; a prefixed name where
 * both "ufs:x" and "x" exist as different files; a file renamed or
 * replaced since the open, MPI_MODE_DELETE_ON_CLOSE, no thread),
 * are written before it returns, as tcio_close writes them.  Each
 * aggregator writes exactly the segments it would write in tcio_close.
 * Returns TCIO_SUCCESS, or TCIO_ERR_BAD_HANDLE (FH not open: nothing
 * happened, and the other ranks wait, as for any collective call a rank
 * skips).  Every failure of the close, wherever it happens, is
 * reported by tcio_close_end.  The bytes are not in the file before
 * tcio_close_end returns: no other program, MPI-IO handle or process
 * should read the file before then.
 */
int tcio_close_begin(tcio_file *fh);

/*
 * Collective.  The second half: wait for this process's helper thread to
 * write FH's segments (at once if it has already), agree on the outcome
 * and free the handle, which keeps its level-2 window for the next file on
 * the communicator as tcio_close does.  Call it before the file is read
 * by anyone else, and before the next tcio_open on the communicator if
 * that file should reuse the window (an open before it allocates a window
 * of its own, and a tcio_open of the same file waits for the helper
 * thread).  A handle never given to tcio_close_end is ended by
 * MPI_Finalize, which waits for its segments and, if they failed, writes
 * the error to standard error (it can return it to nobody).
 * Returns what tcio_close returns: TCIO_SUCCESS only if every rank's data
 * reached the file; otherwise the same failure on every rank (this rank's
 * own error code, for example TCIO_ERR_NO_SPACE when the file system
 * filled up while the thread wrote, or TCIO_ERR_REMOTE).  Also
 * TCIO_ERR_BAD_HANDLE if FH is not closing (nothing happened, and the
 * other ranks wait, as for any collective call a rank skips).
 */
int tcio_close_end(tcio_file *fh);

/*
 * Local, advisory.  Load the file segments holding bytes [OFFSET,
 * OFFSET+LENGTH) into level 2 now, so that later reads of them by any rank
 * find them loaded.  The calling rank reads each segment with one
 * whole-segment MPI_File_read_at and puts it into its aggregator's slot.
 * At most as many segments as level 2 has slots (aggregators x
 * tcio_segments_per_proc) are loaded, from OFFSET on.  A handle opened
 * MPI_MODE_RDONLY on several nodes (transport mixed), before any read
 * session on it, loads them into the
 * calling rank's node's combining tier instead (at most the node's ranks
 * x tcio_node_segments): there the reads of that node's ranks find
 * them, while the other nodes read the file themselves (the aggregators of
 * such a file serve no reads unless a read session is declared); they
 * stay there across tcio_flush and tcio_sync (nobody writes such a file)
 * until the tier needs their slots for other segments.  A slot holding
 * another segment with unwritten-out data is left alone (a hint never
 * makes the library write).  Reads of the range need not follow; reads
 * that come before or without it still work.  On a read-only handle the
 * range is clipped to the file's size.  Pending reads and buffered writes
 * of this rank are not moved.
 * Returns TCIO_SUCCESS, TCIO_ERR_BAD_HANDLE, TCIO_ERR_WRITE_ONLY,
 * TCIO_ERR_BAD_ARG (OFFSET or LENGTH < 0, end past the addressable range),
 * TCIO_ERR_NO_MEMORY (one segment-sized buffer is allocated at the first
 * prefetch), TCIO_ERR_IO or TCIO_ERR_MPI (a failed load leaves the segment
 * to be loaded by its first read; it does not stick to the handle), or a
 * failure that stuck to the handle earlier (TCIO_ERR_NO_SPACE and
 * TCIO_ERR_NO_MEMORY included).
 */
int tcio_prefetch(tcio_file *fh, MPI_Offset offset, MPI_Offset length);

/*
 * Collective.  Declare a read session: each rank names the range it is
 * about to read (LENGTH 0 for none); the aggregators load the segments of
 * the union of all ranges that they own, straight into their level-2
 * memory, all of them at once, before the call returns.  As with
 * tcio_prefetch, each aggregator loads at most one segment per slot (in
 * file order), never evicts unwritten-out data, and reads that are not
 * declared or come first still work.  Use it before a restart or analysis
 * phase that reads a known part of the file in small pieces, and on
 * several nodes before any read-back that every node makes all over the
 * file: without a session each node reads from the file the segments its
 * ranks read (up to the whole file once per node); with one, each
 * aggregator reads its segments once.
 * Returns TCIO_SUCCESS or, the same on every rank in kind, this rank's
 * own error (as for tcio_prefetch; a rank with bad arguments takes part
 * declaring nothing) or TCIO_ERR_REMOTE if only another rank failed.
 * TCIO_ERR_BAD_HANDLE if FH is NULL, closed or closing: that rank takes
 * no part, and the other ranks wait, as for any collective call a rank
 * skips.
 */
int tcio_read_session(tcio_file *fh, MPI_Offset offset, MPI_Offset length);

/*
 * Local.  Give the library a moment: run MPI's progress engine for other
 * ranks' one-sided moves into this rank's level-2 segments (transport
 * rma; with shm the moves are copies that need nobody's progress),
 * complete early drains and start the drain of segments that other ranks
 * have filled (aggregators only; on other ranks it only drives MPI
 * progress, with rma), and with tcio_forward_staging on several nodes,
 * on every rank, merge the staged forwards that reached this rank and
 * free this rank's copies that their aggregators acknowledged.  The library's own polls skip MPI's progress
 * engine while no file open in this process has rma level-2 slots that
 * others reach (a file opened MPI_MODE_RDONLY on several nodes without a
 * read session has none: its reads go past the aggregators; nor has one
 * whose open found that other ranks' one-sided operations complete
 * without their target's progress, tcio_get_info's tcio_target_progress
 * "not needed"); tcio_progress turns it unless the open found so.
 * Every tcio call does this too; call tcio_progress during long
 * computations between I/O phases (say every few milliseconds of work) on
 * MPI libraries without asynchronous progress, where a busy aggregator
 * otherwise delays every rank that moves data to it.  Returns TCIO_SUCCESS,
 * TCIO_ERR_BAD_HANDLE, or the failure that stuck to the handle (a
 * file-system, MPI or memory error once data had left level 1: Errors, at
 * the top; tcio_close fails with it too).
 */
int tcio_progress(tcio_file *fh);

/* A one-line English message for any value; never NULL.  Local. */
const char *tcio_error_string(int code);

/*
 * Local.  Why the last failed call on this rank failed.  Returns the error
 * code of the last tcio call that failed on this rank (TCIO_SUCCESS if
 * none has; a successful call does not reset it, as with errno) and, when
 * BUF is not NULL and LEN > 0, copies a NUL-terminated message of at most
 * LEN bytes (NUL included, longer messages are cut) into BUF.  Messages
 * start with "rank R: " (the rank in MPI_COMM_WORLD) and the call that
 * failed, and name what failed: the argument and its value
 *   rank 2: tcio_write_at: count -3 is negative
 *   rank 0: tcio_read: the file was opened MPI_MODE_WRONLY
 * the setting, where it came from and its value
 *   rank 0: tcio_open_comm: environment variable TCIO_SEGMENT_SIZE="1.5M"
 *           is not valid: ...
 *   rank 1: tcio_open_comm: tcio_aggregators is 5, more than the 2 ranks
 *           of the communicator
 * the MPI call and MPI's error string
 *   rank 0: tcio_open_comm: MPI_File_open("out/x.dat") failed: <its text>
 * or what the library was doing when a resource failed it (no memory, a
 * transport's MPI call).  After a sticky failure every later call repeats
 * its reason.  It works after tcio_open returned NULL (the reason names
 * tcio_open).  After a failed collective call
 * every rank can explain the failure, also the ranks where it did not
 * happen: after an open they get the reason of the lowest rank where it
 * did; after tcio_flush, tcio_sync, tcio_set_size, tcio_read_session,
 * tcio_close and tcio_close_end the ranks that return TCIO_ERR_REMOTE get
 * that rank's code and reason.
 * Messages have at most TCIO_MAX_ERROR_STRING - 1 bytes.  Never fails; callable before MPI_Init and
 * after MPI_Finalize.
 */
int tcio_last_error(char *buf, int len);

/*
 * Local.  The settings in effect for FH, like MPI_File_get_info: stores in
 * *INFO a new info object that the caller frees with MPI_Info_free.  It
 * holds the MPI-IO hints of the underlying MPI file (what MPI_File_get_info
 * reports, e.g. striping_unit, cb_nodes) and these keys:
 *   tcio_segment_size          segment size in bytes
 *   tcio_segments_per_proc     level-2 segments per aggregator
 *   tcio_node_segments         segments per rank of a node's combining
 *                              tier (used on several nodes)
 *   tcio_level2_bytes          level-2 capacity of the whole file in bytes
 *                              (segment size x segments x aggregators)
 *   tcio_aggregators           number of aggregators
 *   tcio_aggregator_placement  "spread", "node" or "list"
 *   tcio_aggregator_ranks      the aggregators' ranks in the file's
 *                              communicator, "0,2" (left out if
 *                              MPI_MAX_INFO_VAL characters or longer)
 *   tcio_early_drain           "on", "off" or "mover"
 *   tcio_stats                 "off", "on" or "json"
 *   tcio_stats_file            where the statistics go, if set (left
 *                              out if MPI_MAX_INFO_VAL characters or
 *                              longer: a name from TCIO_STATS_FILE,
 *                              or under MPICH an info value of exactly
 *                              that length)
 *   tcio_transport             the transport in use (never "auto"): "rma"
 *                              (MPI one-sided operations), "shm" (node-
 *                              shared memory: auto on one node, or asked
 *                              for) or "mixed" (auto on several nodes, or
 *                              asked for there; auto there is "rma" when
 *                              the node's tier could not be made)
 *   tcio_background_memory     bytes per node of level 2 that may wait for
 *                              tcio_close_begin's helper thread (this
 *                              rank's value)
 *   tcio_forward_staging       staged forwards per rank of a node (0: off),
 *                              the setting: they are staged only with
 *                              "mixed" (several nodes)
 *   tcio_target_progress       "needed" or "not needed": whether other
 *                              ranks' moves into an aggregator's slots
 *                              wait for its MPI progress, as the open
 *                              that created the rma window measured it:
 *                              whether a rank on another node (where
 *                              there is one) and one on an aggregator's
 *                              node completed one operation of each
 *                              kind the moves use on an aggregator's
 *                              slots while it stayed out of MPI for up
 *                              to 5 ms (a failure of those operations
 *                              fails the open with TCIO_ERR_MPI); "not
 *                              needed" with shm.  Where not needed, the
 *                              library's polls and waits leave MPI's
 *                              progress engine alone
 * Numbers are decimal without suffix.  Returns TCIO_SUCCESS,
 * TCIO_ERR_BAD_HANDLE, TCIO_ERR_BAD_ARG (INFO NULL), TCIO_ERR_NO_MEMORY
 * (MPI ran out of memory for the info object) or TCIO_ERR_MPI (with
 * *INFO set to MPI_INFO_NULL).
 */
int tcio_get_info(tcio_file *fh, MPI_Info *info);

/* Local.  The library's version, "MAJOR.MINOR.PATCH", which may differ
 * from the TCIO_VERSION the program was compiled with.  Never NULL. */
const char *tcio_version(void);

#ifdef __cplusplus
}
#endif

#endif /* TCIO_H */
