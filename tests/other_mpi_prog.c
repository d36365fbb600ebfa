/* other_mpi_prog - a program compiled with the other MPI implementation's
 * mpicc and linked with libtcio (tests/other-mpi.sh): its open must be
 * refused with TCIO_ERR_MPI and a reason, no file made, where the library
 * once crashed or MPI aborted.  tcio.h refuses this MPI's mpi.h, so the
 * two calls are declared here, as a program that declared them itself
 * would; the library must refuse before it touches the handles, whose
 * types are the other MPI's.
 *
 *   other_mpi_prog FILE CODE   (CODE: TCIO_ERR_MPI's value)
 * Exits 0 when refused so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <mpi.h>

typedef struct tcio_file tcio_file;
int tcio_open_comm(MPI_Comm comm, const char *fname, int mode, MPI_Info info, tcio_file **fh);
int tcio_last_error(char *buf, int len);

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    MPI_Init(&argc, &argv);
    tcio_file *fh = (tcio_file *)&argc;     /* must be set to NULL */
    int rc = tcio_open_comm(MPI_COMM_WORLD, argv[1], MPI_MODE_WRONLY | MPI_MODE_CREATE,
                            MPI_INFO_NULL, &fh);
    char why[1024];
    int code = tcio_last_error(why, (int)sizeof why);
    printf("other_mpi_prog: tcio_open_comm returned %d, handle %s: %s\n", rc,
           fh ? "not NULL" : "NULL", why);
    int refused = rc == atoi(argv[2]) && code == rc && fh == NULL &&
                  strstr(why, "is loaded too") && access(argv[1], F_OK) != 0;
    MPI_Finalize();
    return !refused;
}
