/* node_segment.h - one POSIX shared-memory segment mapped by every rank
 * of a node's communicator: the shm transport's level 2
 * (transport_shm.c) and a node's staged forwards (staging.c).
 *
 * libtcio's own segment (shm_open, ftruncate, mmap), not an
 * MPI_Win_allocate_shared window: MPICH 4.0.2 makes every new shared
 * window look for a free address range with one msync per page, 0.1 s for
 * 32 MiB on the development machine, while the segment costs a few system
 * calls and two agreements (doc/design.md, "The shm transport"). */
#ifndef TCIO_NODE_SEGMENT_H
#define TCIO_NODE_SEGMENT_H

#include <stddef.h>
#include <mpi.h>

/* Collective over COMM (whose ranks share a node; SELF is this rank's
 * rank there): rank 0 creates and maps BYTES of zeroes, one agreement
 * tells the others its name (rank 0's process id and count of segments)
 * or its failure, they map it, a second agreement tells everyone whether
 * all did, and rank 0 unlinks the name (the memory lives until the last
 * process unmaps it; no name is left behind, also after a failure).
 * Returns TCIO_SUCCESS with the mapping in *SEGMENT, or
 * TCIO_ERR_NO_MEMORY with the reason recorded, naming PURPOSE ("the shm
 * transport's level 2"), on every rank alike; *SEGMENT is then NULL or
 * mapped (tci_node_segment_close it either way). */
int  tci_node_segment_open(MPI_Comm comm, int self, size_t bytes, const char *purpose,
                           char **segment);

/* Local: unmap SEGMENT (BYTES long); harmless on NULL. */
void tci_node_segment_close(char *segment, size_t bytes);

#endif
