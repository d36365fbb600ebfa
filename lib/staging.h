/* staging.h - a node's staged forwards: copies of combined segments on
 * their way to the segments' aggregators, in memory every rank of the
 * node maps (node_segment.h), so that a forwarder frees its tier slot at
 * once and the node's later fetches of a segment still see its bytes
 * until the aggregator has merged them (forward.c; doc/design.md,
 * "Forwards that wait for no other rank").
 *
 * An entry is FREE, FILLING (claimed by a forwarder, with the next
 * sequence number of forwards from this node to the segment's aggregator)
 * or READY (its message is complete and may be sent and read).  The
 * sequence numbers count, per aggregator, every forward from this node,
 * staged or not: the aggregator applies them in that order.  Claims and
 * numbers are taken under one spin lock of the node (a few loads and
 * stores); the states are C11 atomics, READY published with release
 * ordering, as the shm transport's slot words are (transport_shm.c). */
#ifndef TCIO_STAGING_H
#define TCIO_STAGING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <mpi.h>
#include "level1.h"

/* A staged forward's message, as the aggregator receives it: this header,
 * then for each of its NRANGES ranges the segment's bitmap words [LO, HI),
 * then for each the data bytes from LO * 64 up to HI * 64 (or the
 * segment's end): the ranges the node wrote (tci_level1_ranges), as a
 * locked forward's merge moves them. */
typedef struct tci_forward_message {
    int64_t segment;
    int64_t seq;        /* of forwards from NODE to this aggregator, from 1 */
    int64_t node;
    int64_t entry;      /* the staging entry, which the acknowledgement names */
    int64_t nranges;    /* 1 to TCI_MAX_RANGES */
    int64_t lo[TCI_MAX_RANGES], hi[TCI_MAX_RANGES];   /* bitmap words */
    int64_t unused[3];
} tci_forward_message;

typedef struct tci_staging {
    char   *segment;          /* the node's mapping (NULL: none) */
    size_t  bytes;
    int     nentries;
    int     naggregators;
    int64_t segment_size;
    size_t  body_bytes;       /* room for one message */
} tci_staging;

/* Bytes of the node's staging for NENTRIES forwards to any of
 * NAGGREGATORS aggregators of SEGMENT_SIZE segments. */
size_t tci_staging_bytes(int nentries, int naggregators, int64_t segment_size);

/* Collective over NODE_COMM (SELF this rank there): map the node's
 * staging, every entry FREE and every sequence number 0.  On failure (the
 * reason recorded, alike on every rank) tci_staging_close still runs. */
int  tci_staging_open(tci_staging *st, MPI_Comm node_comm, int self, int nentries,
                      int naggregators, int64_t segment_size);
void tci_staging_close(tci_staging *st);

/* A FREE entry, now FILLING, for a forward of SEGMENT to aggregator OWNER
 * (its index in the segment map), with the next sequence number in *SEQ;
 * -1 if every entry is taken. */
int  tci_staging_claim(tci_staging *st, int owner, int64_t segment, int64_t *seq);

/* The next sequence number to OWNER for a forward that is not staged. */
int64_t tci_staging_next_seq(tci_staging *st, int owner);

/* Entry E's message (room for body_bytes). */
tci_forward_message *tci_staging_message(tci_staging *st, int e);

/* A FILLING entry's message is complete: READY. */
void tci_staging_publish(tci_staging *st, int e);

/* The entry is FREE again (its send completed and was acknowledged). */
void tci_staging_release(tci_staging *st, int e);

/* The entry holding the forward SEQ to OWNER, once READY (waiting, with
 * the processor given away, while its forwarder fills it: a rank of this
 * node inside the library, copying; the seconds waited are added to
 * *WAITED); -1 if no entry holds it. */
int  tci_staging_find(tci_staging *st, int owner, int64_t seq, double *waited);

/* The READY entries holding SEGMENT, in sequence order, into ENTRIES and
 * their numbers into SEQS (room for nentries each), as they were under
 * the lock; returns their count. */
int  tci_staging_of_segment(tci_staging *st, int64_t segment, int *entries, int64_t *seqs);

/* The bytes of message M: its length; the bitmap words of its range R,
 * and their data (for bytes R.lo * 64 onwards); the data of range R end
 * at tci_forward_message_end. */
size_t tci_forward_message_bytes(const tci_forward_message *m, int64_t segment_size);
const uint64_t *tci_forward_message_bits(const tci_forward_message *m, int r);
const char *tci_forward_message_data(const tci_forward_message *m, int r,
                                     int64_t segment_size);
int64_t tci_forward_message_end(const tci_forward_message *m, int r, int64_t segment_size);

#endif
