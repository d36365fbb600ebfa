/* transport.c - choosing and opening the transport of an open file. */
#include <string.h>
#include "transport.h"
#include "tcio.h"

const tci_transport_ops *tci_transport_choose(tci_transport_kind kind, MPI_Comm comm)
{
    (void)comm;   /* auto will look at the nodes once a second transport exists */
    switch (kind) {
    case TCI_TRANSPORT_RMA:
    case TCI_TRANSPORT_AUTO:
    default:
        return &tci_transport_rma;
    }
}

int tci_transport_open(tci_transport *t, const tci_transport_ops *ops, MPI_Comm comm,
                       const tci_segmap *map, bool owner)
{
    memset(t, 0, sizeof *t);
    t->ops = ops;
    t->map = map;
    t->local_slots = owner ? map->nslots : 0;
    MPI_Comm_rank(comm, &t->self);
    return ops->open(t, comm, map, owner);
}

void tci_transport_close(tci_transport *t)
{
    if (t->ops)
        t->ops->close(t);
    t->ops = NULL;
    t->local_slots = 0;
}
