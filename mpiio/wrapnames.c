/* wrapnames.c - prints the linker options of the --wrap form
 * (libtcio_mpiio.wrap: --wrap=NAME, one per line, a response file for
 * the linker: `mpicc app.o -Wl,@libtcio_mpiio.wrap -ltcio_mpiio_wrap
 * -ltcio`), from the same list the wrappers are made from, so that no
 * name is missed. */
#include <stdio.h>
#include "calls.h"

#define TMI_PRINT_WRAP(name, params, args) \
    puts("--wrap=MPI_" #name);             \
    puts("--wrap=PMPI_" #name);

int main(void)
{
    TMI_CALLS(TMI_PRINT_WRAP)
    TMI_CALLS_C(TMI_PRINT_WRAP)
    return 0;
}
