/* error.c - error messages and the mapping from MPI error classes. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <mpi.h>
#include "tcio.h"
#include "error.h"

static const char *const messages[TCIO_ERR_COUNT] = {
    [TCIO_SUCCESS]          = "success",
    [TCIO_ERR_BAD_HANDLE]   = "invalid tcio file handle (NULL or already closed)",
    [TCIO_ERR_BAD_ARG]      = "invalid argument (negative count, offset or length, NULL pointer, bad whence, an end past the largest addressable offset (2^63 minus a segment), or one element of a non-contiguous datatype over 2 GiB)",
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

int tci_error_from_open(int mpi_err)
{
    if (mpi_err == MPI_SUCCESS)
        return TCIO_SUCCESS;
    int cls = error_class(mpi_err);
    if (cls == MPI_ERR_NO_SUCH_FILE || cls == MPI_ERR_BAD_FILE)
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

int tci_error_from_io(int mpi_err)
{
    if (mpi_err == MPI_SUCCESS)
        return TCIO_SUCCESS;
    int cls = error_class(mpi_err);
    if (cls == MPI_ERR_NO_SPACE || cls == MPI_ERR_QUOTA)
        return TCIO_ERR_NO_SPACE;
    if (cls == MPI_ERR_IO && says_no_space(mpi_err))
        return TCIO_ERR_NO_SPACE;
    if (cls == MPI_ERR_NO_MEM)
        return TCIO_ERR_NO_MEMORY;
    return TCIO_ERR_IO;
}

int tci_error_from_mpi(int mpi_err)
{
    if (mpi_err == MPI_SUCCESS)
        return TCIO_SUCCESS;
    if (error_class(mpi_err) == MPI_ERR_NO_MEM)
        return TCIO_ERR_NO_MEMORY;
    return TCIO_ERR_MPI;
}
