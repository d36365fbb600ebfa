/* other_mpi_prog - a program compiled with the other MPI implementation's
 * mpicc and linked with libtcio (tests/other-mpi.sh): its open must be
 * refused with TCIO_ERR_MPI and a reason, no file made, where the library
 * once crashed or MPI aborted.  tcio.h refuses this MPI's mpi.h, so the
 * two calls are declared here, as a program that declared them itself
 * would; the library must refuse before it touches the handles, whose
 * types are the other MPI's.  Then calls on the NULL handle must return
 * TCIO_ERR_BAD_HANDLE, not reach the other MPI while explaining it.
 *
 *   other_mpi_prog FILE CODE BAD_HANDLE   (TCIO_ERR_MPI's and
 *                                          TCIO_ERR_BAD_HANDLE's values)
 * Exits 0 when refused so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <mpi.h>

typedef struct tcio_file tcio_file;
int tcio_open_comm(MPI_Comm comm, const char *fname, int mode, MPI_Info info, tcio_file **fh);
int tcio_last_error(char *buf, int len);
int tcio_write(tcio_file *fh, const void *buf, int count, MPI_Datatype type);
int tcio_close(tcio_file *fh);

int main(int argc, char **argv)
{
    if (argc != 4)
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
    int x = 1, bad_handle = atoi(argv[3]);
    int write_rc = tcio_write(fh, &x, 1, MPI_INT), close_rc = tcio_close(fh);
    tcio_last_error(why, (int)sizeof why);
    printf("other_mpi_prog: tcio_write and tcio_close of the NULL handle returned %d and %d: %s\n",
           write_rc, close_rc, why);
    refused = refused && write_rc == bad_handle && close_rc == bad_handle;
    MPI_Finalize();
    return !refused;
}
