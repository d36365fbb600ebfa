/* handle.h - the life of a tcio_file handle: creating and destroying it,
 * the registry of open handles that lets every call reject a closed or
 * bogus one, and the level-2 window it borrows from its communicator's
 * cache (comm_cache.c). */
#ifndef TCIO_HANDLE_H
#define TCIO_HANDLE_H

#include <stdbool.h>
#include "file.h"

/* A new handle for access MODE (MPI_MODE_* flags), not yet open: no
 * communicator, no file.  NULL without memory. */
tcio_file *tci_handle_new(int mode);

/* Free everything FH holds (its level 2 goes back to the communicator's
 * cache if it came from there), close its file if open, and FH itself. */
void tci_handle_destroy(tcio_file *fh);

/* The registry: whether FH is a handle that is open (and then, if it has
 * no sticky failure, remember it as tci_last_found_open, file.h), add an
 * opened handle, remove a closing one (which clears
 * tci_last_found_open if it is FH). */
bool tci_handle_is_open(const tcio_file *fh);
void tci_handle_remember(tcio_file *fh);
void tci_handle_forget(tcio_file *fh);

/* The handles between tcio_close_begin and tcio_close_end: whether FH is
 * one, add one (at the end of the list), remove one, the oldest (NULL if
 * none). */
bool tci_handle_is_closing(const tcio_file *fh);
void tci_handle_remember_closing(tcio_file *fh);
void tci_handle_forget_closing(tcio_file *fh);
tcio_file *tci_handle_oldest_closing(void);

/* Exported for the Fortran module (libtcio_fortran), whose tcio_close and
 * tcio_close_end keep a handle they refused only while it still needs a
 * call (closing: tcio_close_end; open: tcio_close or tcio_close_begin),
 * and reset one that is neither (a copy of a closed handle): 2 if FH is
 * between tcio_close_begin and tcio_close_end, 1 if it is open, 0
 * otherwise.  FH is only compared with the registry's handles, never
 * read.  Not part of the API (tcio.h): named tcio_ because the library
 * exports no other names. */
int tcio_fortran_handle_state(const void *fh);

/* TCIO_ERR_BAD_HANDLE for FH, which CALL found not open, with the
 * reason: a handle between tcio_close_begin and tcio_close_end is named
 * as closing (only tcio_close_end may use it). */
static inline int tci_handle_refuse(const tcio_file *fh, const char *call)
{
    if (fh && tci_handle_is_closing(fh))
        return tci_error_set(TCIO_ERR_BAD_HANDLE, "%s: the handle is closing (tcio_close_begin "
                             "was called): only tcio_close_end may use it", call);
    return tci_error_bad_handle(fh);
}

/* The transports of FH (tci_transport_plan_for): its setting on the
 * nodes its communicator spans (known on every rank once the open has
 * found the nodes), and whether auto's shm was refused; and the file's
 * level 2's of them. */
tci_transport_plan tci_handle_plan(const tcio_file *fh);
const tci_transport_ops *tci_handle_transport(const tcio_file *fh);

/* The transport as TCIO_STATS and tcio_get_info name it: "mixed" with a
 * node's combining tier (combiner.c), else the file's level 2's. */
const char *tci_handle_transport_name(const tcio_file *fh);

/* Local: set level 2 up on the slots the previous file on this
 * communicator left, if they have this file's geometry and transport.
 * Returns whether it did. */
bool tci_handle_reuse_window(tcio_file *fh);

/* Local: the level 2 of FH back to its communicator's cache, if it came
 * from there (a failed open then leaves the cache as it found it) or
 * tcio_close hands it over (FH->window_reused set).  Where the cache
 * cannot take it (a file with a communicator of its own, a user
 * communicator freed meanwhile, a transport that cannot be kept: alike on
 * every rank) it stays in FH for tci_level2_free. */
void tci_handle_return_window(tcio_file *fh);

#endif
