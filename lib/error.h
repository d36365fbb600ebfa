/* error.h - turning MPI error codes into libtcio error codes, and the
 * per-rank record of the last failure behind tcio_last_error. */
#ifndef TCIO_ERROR_H
#define TCIO_ERROR_H

#include <stddef.h>
#include <mpi.h>
#include "tcio.h"

/* Longest message kept for tcio_last_error, NUL included. */
#define TCI_ERROR_MESSAGE_MAX TCIO_MAX_ERROR_STRING

/* The conversions below also record why (the MPI call and its MPI error
 * string) for tcio_last_error.  The macros pass the argument's text: when
 * it is the MPI call itself ("MPI_Win_flush_all(r->win)") the message
 * names that call, otherwise the library function that made it. */
#define tci_error_from_open(err) tci_error_from_open_at((err), #err, __func__)
#define tci_error_from_io(err)   tci_error_from_io_at((err), #err, __func__)
#define tci_error_from_mpi(err)  tci_error_from_mpi_at((err), #err, __func__)

/* Error code for a failed MPI_File_open (no such file, access, exists...). */
int tci_error_from_open_at(int mpi_err, const char *expr, const char *func);

/* Error code for a failed MPI-IO read or write (no space, I/O error...). */
int tci_error_from_io_at(int mpi_err, const char *expr, const char *func);

/* Error code for any other failed MPI call (window, datatype, collective). */
int tci_error_from_mpi_at(int mpi_err, const char *expr, const char *func);

/* tci_error_from_open for MPI_File_open of FNAME: the reason names it. */
int tci_error_open_failed(const char *fname, int mpi_err);

/* Record why the current call is about to fail with CODE: a printf-style
 * message, to which "rank R: " (the rank in MPI_COMM_WORLD) is prefixed
 * (nothing before MPI_Init, after MPI_Finalize and in a process that holds
 * the other MPI's library too, where finding the rank is no MPI call to
 * make).
 * The reason becomes tcio_last_error's when the public call returns CODE
 * (tci_error_note); a call that succeeds after all discards it.  Returns
 * CODE. */
int tci_error_set(int code, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* The same for a failed MPI call: "CALL failed: <MPI error string>". */
int tci_error_set_mpi(int code, const char *call, int mpi_err);

/* Give a failure RC a reason when none is pending for it: a caller that
 * got a bare code from deep inside (an allocation, a transport) names
 * what it was doing; a reason set where the failure was found wins.
 * The message is FORMAT's text, ": ", and tcio_error_string(RC).
 * Returns RC (TCIO_SUCCESS untouched). */
int tci_error_explain(int rc, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* TCIO_ERR_BAD_HANDLE with the reason: FH is NULL, or not an open file. */
int tci_error_bad_handle(const void *fh);

/* The reason pending for CODE, without the "rank R: " prefix, into BUF
 * (tcio_error_string(CODE) when none is): kept with a handle's sticky
 * failure, so that every later call can say what went wrong. */
void tci_error_keep(int code, char *buf, size_t size);

/* "TCIO_ERR_IO" for TCIO_ERR_IO, and so on. */
const char *tci_error_code_name(int code);

/* The end of every public call: record RC as the last failure if it is
 * one, and return RC.  The reason is the one set during the call, or the
 * generic message of RC; either is prefixed with CALL (after "rank R: "),
 * unless it names a tcio_ call already. */
extern int tci_error_pending;     /* a reason was set during this call */
int tci_error_note_failure(const char *call, int rc);
static inline int tci_error_note(const char *call, int rc)
{
    if (rc == 0) {                    /* the per-access path: no call out */
        tci_error_pending = 0;
        return 0;
    }
    return tci_error_note_failure(call, rc);
}

/* A failure found in one public call and reported by a later one
 * (tcio_close_begin's, by tcio_close_end): save the reason set during the
 * current call for the failure RC, if one is, into BUF (SIZE bytes) and
 * return RC (TCIO_SUCCESS if none is: a reason of another failure is not
 * RC's); restore makes it the pending reason. */
int tci_error_save(int rc, char *buf, size_t size);
void tci_error_restore(int code, const char *message);

/* The first failure of a loop or a chain of steps that goes on past
 * failures (every slot is still drained, every collective step still
 * made), with its own reason: each later failure sets a reason of its
 * own, which would otherwise replace the first's, or leave a code without
 * its reason when the codes differ. */
typedef struct tci_first_failure {
    int  rc;
    int  explained;                        /* REASON is RC's */
    char reason[TCI_ERROR_MESSAGE_MAX];
} tci_first_failure;

/* Note RC, a step's result; returns the first failure so far. */
int tci_first_failure_note(tci_first_failure *f, int rc);
/* The first failure (TCIO_SUCCESS if none), its reason pending again. */
int tci_first_failure_result(const tci_first_failure *f);

/* Collective over COMM, for a failure RC that every rank of COMM returns
 * (an agreed open): ranks without a reason of their own for RC take the
 * reason of the lowest rank that has one, so that every rank can explain
 * the failure. */
void tci_error_share(MPI_Comm comm, int rc);

/* Collective over COMM, once every rank knows that the collective CALL
 * failed somewhere: ranks whose own part succeeded (LOCAL ==
 * TCIO_SUCCESS) and return TCIO_ERR_REMOTE get the reason of the lowest
 * rank that failed on its own (LOCAL neither TCIO_SUCCESS nor
 * TCIO_ERR_REMOTE), with its code.  Only the failure path pays. */
void tci_error_share_remote(MPI_Comm comm, int local);

/* Exported for the Fortran module's C stubs (libtcio_fortran), which
 * refuse some buffers before libtcio sees them: records CODE and
 * "CALL: REASON" as this rank's last failure, as a refusal of libtcio
 * itself would be.  Not part of the API (tcio.h): its name starts with
 * tcio_ only because the library exports no other names.  Returns CODE. */
int tcio_fortran_refusal(int code, const char *call, const char *reason);

#endif
