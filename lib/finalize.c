/* finalize.c - cleanup at MPI_Finalize.
 *
 * MPI_Finalize deletes the attributes of MPI_COMM_SELF first, while MPI is
 * still fully usable (MPI-3.1, 8.7.1): an attribute with a delete callback
 * is the standard hook for a library to free its process-wide MPI objects. */
#include <stddef.h>
#include <mpi.h>
#include "finalize.h"

enum { MAX_HOOKS = 8 };

static void (*hooks[MAX_HOOKS])(void);
static int nhooks;
static int self_keyval = MPI_KEYVAL_INVALID;

static int run_hooks(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value, (void)extra;
    while (nhooks > 0)
        hooks[--nhooks]();
    MPI_Comm_free_keyval(&self_keyval);
    return MPI_SUCCESS;
}

int tci_at_finalize(void (*fn)(void))
{
    if (nhooks == MAX_HOOKS)
        return -1;
    if (self_keyval == MPI_KEYVAL_INVALID) {
        if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, run_hooks, &self_keyval, NULL) !=
            MPI_SUCCESS)
            return -1;
        if (MPI_Comm_set_attr(MPI_COMM_SELF, self_keyval, NULL) != MPI_SUCCESS) {
            MPI_Comm_free_keyval(&self_keyval);
            return -1;
        }
    }
    hooks[nhooks++] = fn;
    return 0;
}
