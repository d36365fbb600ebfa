/* pages.h - first touches of memory, in bulk.
 *
 * A process's first access to a page of memory costs a page fault.  On
 * the virtual machines libtcio is developed on a fault costs 15-20 us (the
 * hypervisor's part of the exception), so a 1 MiB segment touched page by
 * page costs 4-5 ms: as much as moving its bytes many times over.  Asking
 * the kernel to map a whole range at once (MADV_POPULATE_WRITE, Linux
 * 5.14) costs 0.5 us a page where the pages exist already (another
 * process of the node touched them) and 3-5 us where they must be
 * allocated.  doc/design.md, "First touches", has the measurements. */
#ifndef TCIO_PAGES_H
#define TCIO_PAGES_H

#include <stddef.h>

/* Map [ADDR, ADDR+LEN) into this process for writing, now, in one call:
 * the pages that hold any of its bytes.  Best effort and harmless: the
 * contents do not change, and where the kernel cannot (older than 5.14,
 * or not allowed) the pages are faulted in later as usual. */
void tci_pages_populate(void *addr, size_t len);

#endif
