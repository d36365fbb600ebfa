/* predefined_type.h - whether an MPI datatype is one of MPI's own, for
 * libtcio (lib/datatype.c) and the MPI-IO interposer (mpiio/view.c),
 * which walk the types a program built with MPI_Type_get_contents and
 * must free the derived ones it returns, never MPI's own; the interposer
 * links libtcio but sees only its public names: so it lives here, inline,
 * as romio_prefix.h does.
 *
 * MPI's own are the named types and the parameterized ones of
 * MPI_Type_create_f90_real, _complex and _integer, which MPI-3.1 (17.1.9)
 * calls predefined and forbids freeing: Open MPI 4.1 raised MPI_ERR_TYPE
 * on MPI_COMM_WORLD, fatal by default, when a type built on one was
 * written (an audit found it).  MPICH counts a reference on such a type
 * at each MPI_Type_get_contents and would take it back: left, as the
 * standard asks; the types live for the whole run in both MPIs anyway. */
#ifndef TCIO_PREDEFINED_TYPE_H
#define TCIO_PREDEFINED_TYPE_H

#include <stdbool.h>
#include <mpi.h>

static inline bool tci_combiner_is_predefined(int combiner)
{
    return combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL ||
           combiner == MPI_COMBINER_F90_COMPLEX || combiner == MPI_COMBINER_F90_INTEGER;
}

static inline bool tci_type_is_predefined(MPI_Datatype type)
{
    int ni, na, nd, combiner;
    return MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
           tci_combiner_is_predefined(combiner);
}

#endif
