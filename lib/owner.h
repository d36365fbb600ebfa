/* owner.h - the drains: early drains of complete segments while the file
 * is open (by their aggregator, or by the mover that completed them), the
 * drain of everything left at close.  Driven from the API side
 * (progress.c, access.c, close.c), and from inside a move in one place
 * only: a node's forward (combiner.c, a spill or drain of its tier) that
 * completes a segment in the file's level 2 calls tci_owner_filled, as
 * access.c does after a write move that completes one. */
#ifndef TCIO_OWNER_H
#define TCIO_OWNER_H

#include "file.h"
#include "drainer.h"

/* Whenever the aggregator enters the library: if movers noticed full
 * segments since the last look, write every own slot whose bitmap is
 * complete and release it clean.  Failures stick to the handle.  Local;
 * nothing on ranks without slots or with early drain off. */
void tci_owner_early_drains(tcio_file *fh);

/* After a write move that completed a segment (L2.filled_valid): with
 * tcio_early_drain=mover the mover writes it at once when it reaches the
 * slot by address, else it notifies the slot's owner, which drains it at
 * its next entry.  Local.  Returns a failure of
 * the notice; a failed write sticks to the handle, as an early drain's. */
int tci_owner_filled(tcio_file *fh);

/* Drain every dirty slot this rank owns (collective close, after the
 * barrier that ends all access by others). */
int tci_owner_drain_all(tcio_file *fh);

/* The same in two steps, for a close that hands slots to the background
 * drain (background.c): list this rank's dirty slots by address, in slot
 * order, into DIRTY (room for every own slot), *NDIRTY their count
 * (after the close barrier; TCIO_ERR_MPI if a slot is still held, the
 * others listed); then write N of them with MPI-IO. */
int tci_owner_dirty_slots(tcio_file *fh, tci_drain_slot *dirty, int *ndirty);
int tci_owner_drain_slots(tcio_file *fh, const tci_drain_slot *slots, int n);

/* tcio_sync, after the barrier that ends every other rank's access to
 * this rank's slots: write every dirty own slot to the file and keep it,
 * clean (bitmap and counter cleared; still loaded if it was, its bytes
 * being the file's now), for later reads and writes of its segment.  A
 * failure sticks to the handle and leaves the slot dirty for the close.
 * Local. */
int tci_owner_sync_slots(tcio_file *fh);

/* tcio_set_size, between the two agreements that keep every other rank
 * out of this rank's slots: forget every byte at or past SIZE in the own
 * slots (a slot whose segment starts there is emptied; in the segment
 * that SIZE ends, the bytes from it on are unmarked, and zeroed where the
 * slot holds the file's bytes).  A failure sticks to the handle.  Local. */
int tci_owner_cut_slots(tcio_file *fh, MPI_Offset size);

#endif
