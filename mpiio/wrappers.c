/* wrappers.c - the exported names: MPI_NAME and PMPI_NAME for every call
 * of calls.h, both going to tmi_NAME (served.c, data.c).  Both names are
 * needed: MPICH's Fortran bindings call the MPI_ names, Open MPI's the
 * PMPI_ ones, and a profiling tool or program may call either.
 *
 * Built with TMI_WRAP (libtcio_mpiio_wrap.a, for programs linked with
 * the linker's --wrap options, doc/mpiio.md): __wrap_MPI_NAME and
 * __wrap_PMPI_NAME instead, which the linker puts in place of every
 * reference to MPI_NAME and PMPI_NAME in the objects it links. */
#include "tmi.h"

#ifdef TMI_WRAP
#define TMI_WRAP_NAMES(name, params, args)                   \
    int tmi_##name params;                                   \
    int __wrap_MPI_##name params;                            \
    int __wrap_PMPI_##name params;                           \
    int __wrap_MPI_##name params { return tmi_##name args; }  \
    int __wrap_PMPI_##name params { return tmi_##name args; }
#else
#define TMI_WRAP_NAMES(name, params, args)                 \
    int tmi_##name params;                                 \
    int MPI_##name params { return tmi_##name args; }       \
    int PMPI_##name params { return tmi_##name args; }
#endif
TMI_CALLS(TMI_WRAP_NAMES)
TMI_CALLS_C(TMI_WRAP_NAMES)
