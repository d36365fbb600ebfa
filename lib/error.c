/* error.c - error messages, the mapping from MPI error classes, and the
 * record of this rank's last failure (tcio_last_error). */
#define _GNU_SOURCE   /* RTLD_DEFAULT, for one_mpi.h */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <mpi.h>
#include "tcio.h"
#include "error.h"
#include "one_mpi.h"

static const char *const messages[TCIO_ERR_COUNT] = {
    [TCIO_SUCCESS]          = "success",
    [TCIO_ERR_BAD_HANDLE]   = "invalid tcio file handle (NULL, already closed, or closing)",
    [TCIO_ERR_BAD_ARG]      = "invalid argument (negative count, offset or length, NULL pointer, bad whence, an end past the largest addressable offset ((2^40 - 2) segments, or 2^63 - 1 minus a segment if less, down to a segment boundary), or one element of a non-contiguous datatype over 2 GiB)",
    [TCIO_ERR_BAD_TYPE]     = "invalid datatype (MPI_DATATYPE_NULL or not committed)",
    [TCIO_ERR_BAD_MODE]     = "invalid access mode",
    [TCIO_ERR_READ_ONLY]    = "write to a file opened read-only",
    [TCIO_ERR_WRITE_ONLY]   = "read from a file opened write-only",
    [TCIO_ERR_BAD_CONFIG]   = "invalid or inconsistent tcio_* setting (info key or TCIO_* variable)",
    [TCIO_ERR_NO_MEMORY]    = "out of memory",
    [TCIO_ERR_NO_SUCH_FILE] = "no such file or directory",
    [TCIO_ERR_ACCESS]       = "permission denied",
    [TCIO_ERR_FILE_EXISTS]  = "file exists (MPI_MODE_EXCL)",
    [TCIO_ERR_OPEN]         = "the file could not be opened",
    [TCIO_ERR_NO_SPACE]     = "no space left on the file system",
    [TCIO_ERR_IO]           = "file system I/O error",
    [TCIO_ERR_MPI]          = "an MPI operation failed",
    [TCIO_ERR_REMOTE]       = "the operation failed on another rank",
};

static const char *const code_names[TCIO_ERR_COUNT] = {
    [TCIO_SUCCESS]          = "TCIO_SUCCESS",
    [TCIO_ERR_BAD_HANDLE]   = "TCIO_ERR_BAD_HANDLE",
    [TCIO_ERR_BAD_ARG]      = "TCIO_ERR_BAD_ARG",
    [TCIO_ERR_BAD_TYPE]     = "TCIO_ERR_BAD_TYPE",
    [TCIO_ERR_BAD_MODE]     = "TCIO_ERR_BAD_MODE",
    [TCIO_ERR_READ_ONLY]    = "TCIO_ERR_READ_ONLY",
    [TCIO_ERR_WRITE_ONLY]   = "TCIO_ERR_WRITE_ONLY",
    [TCIO_ERR_BAD_CONFIG]   = "TCIO_ERR_BAD_CONFIG",
    [TCIO_ERR_NO_MEMORY]    = "TCIO_ERR_NO_MEMORY",
    [TCIO_ERR_NO_SUCH_FILE] = "TCIO_ERR_NO_SUCH_FILE",
    [TCIO_ERR_ACCESS]       = "TCIO_ERR_ACCESS",
    [TCIO_ERR_FILE_EXISTS]  = "TCIO_ERR_FILE_EXISTS",
    [TCIO_ERR_OPEN]         = "TCIO_ERR_OPEN",
    [TCIO_ERR_NO_SPACE]     = "TCIO_ERR_NO_SPACE",
    [TCIO_ERR_IO]           = "TCIO_ERR_IO",
    [TCIO_ERR_MPI]          = "TCIO_ERR_MPI",
    [TCIO_ERR_REMOTE]       = "TCIO_ERR_REMOTE",
};

const char *tci_error_code_name(int code)
{
    if (code < 0 || code >= TCIO_ERR_COUNT)
        return "an unknown tcio error code";
    return code_names[code];
}

const char *tcio_error_string(int code)
{
    if (code < 0 || code >= TCIO_ERR_COUNT)
        return "unknown tcio error code";
    return messages[code];
}

static int error_class(int mpi_err)
{
    int cls = MPI_ERR_OTHER;
    if (MPI_Error_class(mpi_err, &cls) != MPI_SUCCESS)
        return MPI_ERR_OTHER;
    return cls;
}

/* "MPI_Xxx" when EXPR is a call to it, else "an MPI call in FUNC". */
static int record_mpi_failure(int code, int mpi_err, const char *expr, const char *func)
{
    char call[64];
    size_t n = strcspn(expr, "( ");
    if (strncmp(expr, "MPI_", 4) == 0 && expr[n] == '(' && n < sizeof call)
        snprintf(call, sizeof call, "%.*s", (int)n, expr);
    else
        snprintf(call, sizeof call, "an MPI call in %s", func);
    return tci_error_set_mpi(code, call, mpi_err);
}

static int open_code(int mpi_err)
{
    int cls = error_class(mpi_err);
    /* MPI_ERR_BAD_FILE is a name that exists but is no file: a directory,
     * under MPICH also a path through a plain file or a name too long. */
    if (cls == MPI_ERR_NO_SUCH_FILE)
        return TCIO_ERR_NO_SUCH_FILE;
    if (cls == MPI_ERR_ACCESS || cls == MPI_ERR_READ_ONLY)
        return TCIO_ERR_ACCESS;
    if (cls == MPI_ERR_FILE_EXISTS)
        return TCIO_ERR_FILE_EXISTS;
    if (cls == MPI_ERR_NO_SPACE || cls == MPI_ERR_QUOTA)
        return TCIO_ERR_NO_SPACE;
    if (cls == MPI_ERR_NO_MEM)
        return TCIO_ERR_NO_MEMORY;
    return TCIO_ERR_OPEN;
}

/* ROMIO (MPICH 4.0) reports a full file system as class MPI_ERR_IO, its
 * message ending in strerror(ENOSPC) ("Other I/O error No space left on
 * device"): the message is the only place where the cause is known. */
static bool says_no_space(int mpi_err)
{
    char text[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    if (MPI_Error_string(mpi_err, text, &len) != MPI_SUCCESS)
        return false;
    text[len < 0 ? 0 : len > MPI_MAX_ERROR_STRING ? MPI_MAX_ERROR_STRING : len] = '\0';
    return strstr(text, strerror(ENOSPC)) || strstr(text, strerror(EDQUOT)) ||
           strstr(text, "No space left on device") || strstr(text, "Disk quota exceeded");
}

int tci_error_from_open_at(int mpi_err, const char *expr, const char *func)
{
    (void)expr;
    (void)func;
    if (mpi_err == MPI_SUCCESS)
        return TCIO_SUCCESS;
    return tci_error_set_mpi(open_code(mpi_err), "MPI_File_open", mpi_err);
}

int tci_error_open_failed(const char *fname, int mpi_err)
{
    char call[TCI_ERROR_MESSAGE_MAX / 2];
    snprintf(call, sizeof call, "MPI_File_open(\"%s\")", fname);
    return tci_error_set_mpi(open_code(mpi_err), call, mpi_err);
}

static int io_code(int mpi_err)
{
    int cls = error_class(mpi_err);
    if (cls == MPI_ERR_NO_SPACE || cls == MPI_ERR_QUOTA)
        return TCIO_ERR_NO_SPACE;
    if (cls == MPI_ERR_IO && says_no_space(mpi_err))
        return TCIO_ERR_NO_SPACE;
    if (cls == MPI_ERR_NO_MEM)
        return TCIO_ERR_NO_MEMORY;
    return TCIO_ERR_IO;
}

int tci_error_from_io_at(int mpi_err, const char *expr, const char *func)
{
    if (mpi_err == MPI_SUCCESS)
        return TCIO_SUCCESS;
    return record_mpi_failure(io_code(mpi_err), mpi_err, expr, func);
}

int tci_error_from_mpi_at(int mpi_err, const char *expr, const char *func)
{
    if (mpi_err == MPI_SUCCESS)
        return TCIO_SUCCESS;
    int code = error_class(mpi_err) == MPI_ERR_NO_MEM ? TCIO_ERR_NO_MEMORY : TCIO_ERR_MPI;
    return record_mpi_failure(code, mpi_err, expr, func);
}

/* ---- the last failure ----------------------------------------------------
 * A reason is set where a failure is found (pending) and becomes the last
 * failure only when a public call returns that code: a failure the library
 * recovers from (a prefetch that gives up) leaves the record alone. */

typedef struct failure {
    int  code;
    char message[TCI_ERROR_MESSAGE_MAX];
} failure;

static failure last = { TCIO_SUCCESS, "no failure" };
static failure pending;
int tci_error_pending;

/* "rank R: " in MPI_COMM_WORLD, or "" before MPI_Init and after
 * MPI_Finalize, and in a process that holds the other MPI
 * implementation's library too (one_mpi.h): there the MPI calls below
 * would reach that library with this one's handles (the open refuses such
 * a process, and the calls a program makes on its NULL handle then
 * explain themselves through here). */
static void rank_prefix(char *buf, size_t size)
{
    int initialized = 0, finalized = 0, rank = -1;
    buf[0] = '\0';
    if (tci_other_mpi_symbol())
        return;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized && MPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS)
        snprintf(buf, size, "rank %d: ", rank);
}

int tci_error_set(int code, const char *format, ...)
{
    char prefix[32];
    rank_prefix(prefix, sizeof prefix);
    size_t n = strlen(prefix);
    memcpy(pending.message, prefix, n + 1);
    va_list ap;
    va_start(ap, format);
    vsnprintf(pending.message + n, sizeof pending.message - n, format, ap);
    va_end(ap);
    pending.code = code;
    tci_error_pending = 1;
    return code;
}

int tci_error_set_mpi(int code, const char *call, int mpi_err)
{
    char text[MPI_MAX_ERROR_STRING + 1] = "";
    int len = 0;
    if (MPI_Error_string(mpi_err, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error code %d", mpi_err);
    for (char *p = text; *p; p++)      /* MPICH's error stacks span lines */
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    size_t n = strlen(text);
    while (n > 0 && text[n - 1] == ' ')
        text[--n] = '\0';
    return tci_error_set(code, "%s failed: %s", call, text);
}

static bool has_reason(int code)
{
    return tci_error_pending && pending.code == code;
}

int tci_error_explain(int rc, const char *format, ...)
{
    if (rc == TCIO_SUCCESS || has_reason(rc))
        return rc;
    char what[TCI_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, format);
    vsnprintf(what, sizeof what, format, ap);
    va_end(ap);
    return tci_error_set(rc, "%s: %s", what, tcio_error_string(rc));
}

int tci_error_bad_handle(const void *fh)
{
    if (!fh)
        return tci_error_set(TCIO_ERR_BAD_HANDLE, "the handle is NULL (a failed tcio_open "
                                                  "returns NULL)");
    return tci_error_set(TCIO_ERR_BAD_HANDLE, "the handle %p is not an open file (closed "
                                              "already, closing after tcio_close_begin, "
                                              "or never opened)", fh);
}

/* The length of a "rank R: " prefix at the start of MESSAGE, 0 if none. */
static size_t rank_prefix_length(const char *message)
{
    if (strncmp(message, "rank ", 5) != 0)
        return 0;
    size_t n = 5;
    while (message[n] >= '0' && message[n] <= '9')
        n++;
    return n > 5 && message[n] == ':' && message[n + 1] == ' ' ? n + 2 : 0;
}

void tci_error_keep(int code, char *buf, size_t size)
{
    if (has_reason(code))
        snprintf(buf, size, "%s", pending.message + rank_prefix_length(pending.message));
    else
        snprintf(buf, size, "%s", tcio_error_string(code));
}

/* LAST becomes the pending reason with CALL after its "rank R: " prefix,
 * unless the reason starts with CALL already. */
static void record_last(const char *call)
{
    size_t prefix = rank_prefix_length(pending.message), n = strlen(call);
    const char *text = pending.message + prefix;
    last.code = pending.code;
    if (strncmp(text, call, n) == 0 && text[n] == ':')
        snprintf(last.message, sizeof last.message, "%s", pending.message);
    else
        snprintf(last.message, sizeof last.message, "%.*s%s: %s", (int)prefix,
                 pending.message, call, text);
}

int tci_error_note_failure(const char *call, int rc)
{
    if (rc != TCIO_SUCCESS) {
        if (!has_reason(rc)) {
            if (rc == TCIO_ERR_REMOTE)
                tci_error_set(rc, "this rank's part succeeded, another rank's failed");
            else
                tci_error_set(rc, "%s", tcio_error_string(rc));
        }
        record_last(call);
    }
    tci_error_pending = 0;
    return rc;
}

int tci_error_save(int rc, char *buf, size_t size)
{
    if (rc == TCIO_SUCCESS || !tci_error_pending || pending.code != rc || size == 0)
        return TCIO_SUCCESS;
    snprintf(buf, size, "%s", pending.message);
    return pending.code;
}

void tci_error_restore(int code, const char *message)
{
    pending.code = code;
    snprintf(pending.message, sizeof pending.message, "%s", message);
    tci_error_pending = 1;
}

int tci_first_failure_note(tci_first_failure *f, int rc)
{
    if (f->rc == TCIO_SUCCESS && rc != TCIO_SUCCESS) {
        f->rc = rc;
        f->explained = tci_error_save(rc, f->reason, sizeof f->reason) == rc;
    }
    return f->rc;
}

int tci_first_failure_result(const tci_first_failure *f)
{
    if (f->rc != TCIO_SUCCESS && f->explained)
        tci_error_restore(f->rc, f->reason);
    return f->rc;
}

int tcio_fortran_refusal(int code, const char *call, const char *reason)
{
    tci_error_set(code, "%s", reason);
    return tci_error_note_failure(call, code);
}

int tcio_last_error(char *buf, int len)
{
    if (buf && len > 0) {
        strncpy(buf, last.message, (size_t)len - 1);
        buf[len - 1] = '\0';
    }
    return last.code;
}

void tci_error_share(MPI_Comm comm, int rc)
{
    /* An inter-communicator, refused by the open on every rank with the
     * same reason, has no collective of this form (its reductions cross
     * between the groups, its broadcasts need MPI_ROOT). */
    int rank, nprocs, inter = 0;
    if (comm == MPI_COMM_NULL || MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
        MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &nprocs) != MPI_SUCCESS)
        return;
    bool has_reason = tci_error_pending && pending.code == rc;
    int mine = has_reason ? rank : INT_MAX, source = INT_MAX;
    if (MPI_Allreduce(&mine, &source, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS ||
        source == INT_MAX)
        return;
    char message[TCI_ERROR_MESSAGE_MAX];
    memcpy(message, pending.message, sizeof message);
    if (MPI_Bcast(message, (int)sizeof message, MPI_CHAR, source, comm) != MPI_SUCCESS ||
        has_reason)
        return;
    message[sizeof message - 1] = '\0';
    pending.code = rc;
    memcpy(pending.message, message, sizeof message);
    tci_error_pending = 1;
}

void tci_error_share_remote(MPI_Comm comm, int local)
{
    int rank;
    if (comm == MPI_COMM_NULL || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return;
    bool own = local != TCIO_SUCCESS && local != TCIO_ERR_REMOTE;
    if (own && !has_reason(local))
        tci_error_set(local, "%s", tcio_error_string(local));
    int mine = own ? rank : INT_MAX, source = INT_MAX;
    if (MPI_Allreduce(&mine, &source, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS ||
        source == INT_MAX)
        return;
    failure theirs = pending;
    if (MPI_Bcast(&theirs, (int)sizeof theirs, MPI_BYTE, source, comm) != MPI_SUCCESS ||
        local != TCIO_SUCCESS)
        return;
    theirs.message[sizeof theirs.message - 1] = '\0';
    tci_error_set(TCIO_ERR_REMOTE, "this rank's part succeeded; another rank failed with %s: %s",
                  tci_error_code_name(theirs.code), theirs.message);
}
