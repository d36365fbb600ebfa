/* wrappers.c - the exported names: MPI_NAME and PMPI_NAME for every call
 * of calls.h, both going to tmi_NAME (served.c, data.c).  Both names are
 * needed: MPICH's Fortran bindings call the MPI_ names, Open MPI's the
 * PMPI_ ones, and a profiling tool or program may call either. */
#include "tmi.h"

#define TMI_WRAP(name, params, args)                 \
    int tmi_##name params;                           \
    int MPI_##name params { return tmi_##name args; } \
    int PMPI_##name params { return tmi_##name args; }
TMI_CALLS(TMI_WRAP)
TMI_CALLS_C(TMI_WRAP)
