/* drain.h - moving level-2 segments between the windows and the file. */
#ifndef TCIO_DRAIN_H
#define TCIO_DRAIN_H

#include <stdint.h>

struct tcio_file;

/* Write the bytes of file segment SEGMENT whose bits are set in BITMAP from
 * DATA (one segment) to the file, one MPI_File_write_at per run of written
 * bytes: unwritten bytes are never written, so holes stay holes.  Returns
 * TCIO_SUCCESS or the file-system error. */
int tci_drain_segment(struct tcio_file *fh, int64_t segment, const char *data,
                      const unsigned char *bitmap);

/* Read file segment SEGMENT into BUF (one segment); bytes past the end of
 * the file are zero.  Returns TCIO_SUCCESS or the file-system error. */
int tci_load_segment(struct tcio_file *fh, int64_t segment, char *buf);

/* Drain every dirty slot this rank owns (collective close, after the
 * barrier that ends all one-sided access). */
int tci_drain_own_slots(struct tcio_file *fh);

/* The aggregator's duty whenever it enters the library: if movers noticed
 * full segments since the last look, write every own slot whose bitmap is
 * complete and release it clean.  Failures stick to the handle.  Local. */
void tci_drain_full_slots(struct tcio_file *fh);

#endif
