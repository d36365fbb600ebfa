/* real.c - the guard and the MPI library's own entry points.
 *
 * Every wrapped name is defined twice by the interposer (MPI_ and PMPI_),
 * so the real function is the MPI library's PMPI_ symbol found past this
 * object in the lookup order (dlsym RTLD_NEXT), resolved at its first use.
 * Calling it raises the guard: whatever MPI_File_* name the MPI library
 * calls inside (ROMIO does, for some) goes straight through again.  In
 * the --wrap form (TMI_WRAP) the linker gives the real function the name
 * __real_PMPI_NAME. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
#include "tmi.h"
#include "one_mpi.h"

/* A program of the other MPI implementation (another build's interposer
 * preloaded, or its --wrap form linked into such a program) holds both
 * MPI libraries: every wrapper, MPI_Finalize's included, would pass the
 * program's handles, of the other MPI's types, to functions that read
 * them as this MPI's, and the program would crash in its first MPI-IO
 * call or at the end.  No call exists yet to return an error from: say
 * why, once, and stop before main, as a dynamic linker does with a
 * library it cannot load.  An MPI the program loads later with dlopen is
 * not seen (doc/mpiio.md). */
__attribute__((constructor)) static void refuse_other_mpi(void)
{
#ifdef TCI_OTHER_MPI
    const char *symbol = tci_other_mpi_symbol();
    if (!symbol)
        return;
    fprintf(stderr, "libtcio_mpiio: this interposer was built with " TCI_OWN_MPI ", but the "
            "program uses " TCI_OTHER_MPI " (%s is defined): use the interposer of a libtcio "
            "built with " TCI_OTHER_MPI "\n", symbol);
    _exit(127);
#endif
}

/* initial-exec: a preloaded library gets static TLS, and every wrapped
 * call reads the guard (the default model calls __tls_get_addr each
 * time: 1% of tcio_bench -m 2's time under perf). */
__attribute__((tls_model("initial-exec"))) _Thread_local int tmi_depth;
__attribute__((tls_model("initial-exec"))) _Thread_local int tmi_lib_rc;
__attribute__((tls_model("initial-exec"))) _Thread_local int tmi_in_lib;

#ifdef TMI_WRAP
/* Linked with --wrap=PMPI_NAME: __real_PMPI_NAME is the MPI library's. */
#define TMI_REAL(name, params, args)                                 \
    int __real_PMPI_##name params;                                   \
    int tmr_##name params                                            \
    {                                                                \
        tmi_depth++;                                                 \
        int rc = __real_PMPI_##name args;                            \
        tmi_depth--;                                                 \
        return rc;                                                   \
    }
#else
void *tmi_real_symbol(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (!p)   /* an MPI library without the profiling names: the plain one */
        p = dlsym(RTLD_NEXT, name + 1);
    if (!p)
        fprintf(stderr, "libtcio_mpiio: the MPI library has no %s: the call fails\n", name);
    return p;
}

/* tmr_NAME: the real function (TMI_RESOLVE, tmi.h) with the guard raised. */
#define TMI_REAL(name, params, args)                                 \
    static int(*real_##name) params;                                 \
    int tmr_##name params                                            \
    {                                                                \
        TMI_RESOLVE(name, params, real_##name);                      \
        tmi_depth++;                                                 \
        int rc = real_##name args;                                   \
        tmi_depth--;                                                 \
        return rc;                                                   \
    }
#endif
TMI_CALLS(TMI_REAL)
TMI_CALLS_C(TMI_REAL)
