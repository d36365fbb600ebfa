/* owner.h - an aggregator's duties to its own slots: early drains while
 * the file is open, the drain of everything left at close.  Driven from
 * the API side (progress.c, api.c), never from inside a move. */
#ifndef TCIO_OWNER_H
#define TCIO_OWNER_H

#include "file.h"

/* Whenever the aggregator enters the library: if movers noticed full
 * segments since the last look, write every own slot whose bitmap is
 * complete and release it clean.  Failures stick to the handle.  Local;
 * nothing on ranks without slots or with early drain off. */
void tci_owner_early_drains(tcio_file *fh);

/* Drain every dirty slot this rank owns (collective close, after the
 * barrier that ends all access by others). */
int tci_owner_drain_all(tcio_file *fh);

#endif
