/* handle.c - the life of a tcio_file handle: new and destroy, the
 * registry of open handles, and the level-2 window borrowed from the
 * communicator's cache. */
#include <stdio.h>
#include <stdlib.h>
#include "finalize.h"
#include "handle.h"
#include "progress.h"

/* ---- the registry of open handles ---------------------------------------- */

static tcio_file *open_files;
const tcio_file *tci_last_found_open;

bool tci_handle_is_open(const tcio_file *fh)
{
    for (const tcio_file *f = open_files; f; f = f->next_open)
        if (f == fh) {
            if (fh->failure == TCIO_SUCCESS)
                tci_last_found_open = fh;
            return true;
        }
    return false;
}

/* At MPI_Finalize, a file still open was never closed: closing it there
 * would need all its ranks at once, in one order of files, which
 * MPI_Finalize does not give, so it is left (doc/semantics.md, Misuse).
 * Its rank 0 says so, rather than the bytes vanishing without a word. */
static void warn_open_at_finalize(void)
{
    for (const tcio_file *f = open_files; f; f = f->next_open)
        if (f->rank == 0)
            fprintf(stderr, "libtcio: \"%s\" was still open at MPI_Finalize: it is not "
                    "closed, and writes since the last tcio_sync may be missing from the "
                    "file (tcio_close comes before MPI_Finalize)\n", f->name);
    fflush(stderr);
}

void tci_handle_remember(tcio_file *fh)
{
    static bool warning_arranged;
    if (!warning_arranged)
        warning_arranged = tci_at_finalize(warn_open_at_finalize) == 0;
    fh->next_open = open_files;
    open_files = fh;
}

void tci_handle_forget(tcio_file *fh)
{
    if (tci_last_found_open == fh)
        tci_last_found_open = NULL;
    for (tcio_file **p = &open_files; *p; p = &(*p)->next_open)
        if (*p == fh) {
            *p = fh->next_open;
            return;
        }
}

/* ---- the registry of closing handles: between tcio_close_begin and
 * tcio_close_end, oldest first (MPI_Finalize ends them in that order, the
 * same on every rank) ------------------------------------------------------ */

static tcio_file *closing_files;

bool tci_handle_is_closing(const tcio_file *fh)
{
    for (const tcio_file *f = closing_files; f; f = f->closing.next)
        if (f == fh)
            return true;
    return false;
}

int tcio_fortran_handle_state(const void *fh)
{
    if (!fh)
        return 0;
    if (tci_handle_is_closing(fh))
        return 2;
    return tci_handle_is_open(fh) ? 1 : 0;
}

void tci_handle_remember_closing(tcio_file *fh)
{
    tcio_file **tail = &closing_files;
    while (*tail)
        tail = &(*tail)->closing.next;
    fh->closing.next = NULL;
    *tail = fh;
}

void tci_handle_forget_closing(tcio_file *fh)
{
    for (tcio_file **p = &closing_files; *p; p = &(*p)->closing.next)
        if (*p == fh) {
            *p = fh->closing.next;
            return;
        }
}

tcio_file *tci_handle_oldest_closing(void)
{
    return closing_files;
}

/* ---- new and destroy ------------------------------------------------------ */

tcio_file *tci_handle_new(int mode)
{
    tcio_file *fh = calloc(1, sizeof *fh);
    if (!fh)
        return NULL;
    int access = mode & (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR);
    fh->comm = MPI_COMM_NULL;
    fh->file = MPI_FILE_NULL;
    fh->comb.comm = MPI_COMM_NULL;
    fh->fwd.win = MPI_WIN_NULL;
    fh->can_read = access != MPI_MODE_WRONLY;
    fh->can_write = access != MPI_MODE_RDONLY;
    fh->staged_tail = &fh->staged;
    fh->poll_countdown = TCI_POLL_INTERVAL;
    return fh;
}

void tci_handle_destroy(tcio_file *fh)
{
    free(fh->name);
    tci_staged_discard(&fh->staged);
    tci_level1_free(&fh->l1);
    tci_handle_return_window(fh);
    tci_level2_free(&fh->l2);
    tci_combiner_free(fh);
    tci_aggregators_free(&fh->aggr);
    tci_config_free(&fh->config);
    tci_segio_close(&fh->io);
    if (fh->file != MPI_FILE_NULL)
        MPI_File_close(&fh->file);
    if (fh->retire_comm)
        tci_comm_retire(&fh->comm, fh->comm_entry);
    else
        tci_comm_release(&fh->comm, fh->comm_entry);
    free(fh);
}

/* ---- the window borrowed from the communicator ---------------------------- */

tci_transport_plan tci_handle_plan(const tcio_file *fh)
{
    return tci_transport_plan_for(fh->config.transport, fh->aggr.nnodes, fh->shm_refused);
}

const tci_transport_ops *tci_handle_transport(const tcio_file *fh)
{
    return tci_handle_plan(fh).level2;
}

const char *tci_handle_transport_name(const tcio_file *fh)
{
    return fh->node.t.ops ? "mixed" : fh->l2.t.ops->name;
}

static tci_window_key window_key(const tcio_file *fh)
{
    return (tci_window_key){ .transport = tci_handle_transport(fh),
                             .nslots = fh->map.nslots,
                             /* a tier's size only where there is a tier */
                             .node_segments = tci_handle_plan(fh).tier
                                                  ? fh->config.node_segments : 0,
                             .segment_size = fh->map.segment_size,
                             .aggregators_digest = tci_aggregators_digest(&fh->aggr),
                             .nnodes = fh->aggr.nnodes,
                             .owner = fh->aggr.index >= 0,
                             .mapped_bytes = fh->level2_mapped };
}

bool tci_handle_reuse_window(tcio_file *fh)
{
    tci_window_key key = window_key(fh);
    tci_transport kept;
    if (!tci_comm_take_window(fh->comm_entry, &key, &kept))
        return false;
    fh->window_reused = true;
    tci_level2_adopt(&fh->l2, &kept, &fh->map, &tci_downstream_file);
    return true;
}

void tci_handle_return_window(tcio_file *fh)
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
    tci_combiner_keep(fh);
}
