/* pages.c - first touches of memory, in bulk (pages.h). */
#define _GNU_SOURCE               /* madvise, MADV_POPULATE_WRITE */
#include <stdint.h>
#include <unistd.h>
#include <sys/mman.h>
#include "pages.h"

/* Linux's value, for C libraries whose headers predate 5.14. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static uintptr_t page_size(void)
{
    static uintptr_t size;
    if (!size) {
        long s = sysconf(_SC_PAGESIZE);
        size = s > 0 ? (uintptr_t)s : 4096;
    }
    return size;
}

void tci_pages_populate(void *addr, size_t len)
{
    if (!addr || len == 0)
        return;
    uintptr_t page = page_size();
    uintptr_t start = (uintptr_t)addr & ~(page - 1);
    uintptr_t end = ((uintptr_t)addr + len + page - 1) & ~(page - 1);
    /* EINVAL on kernels without it: the faults then happen one by one, as
     * they would have without this call. */
    (void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
}
