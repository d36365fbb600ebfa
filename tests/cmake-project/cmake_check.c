/* cmake_check - built by the CMake test project against the installed
 * libtcio: writes one int per rank with libtcio, reads it back and checks
 * that the header's version is the library's. */
#include <stdio.h>
#include <string.h>
#include <tcio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, ok = argc == 2 && strcmp(tcio_version(), TCIO_VERSION) == 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    tcio_file *f = ok ? tcio_open(argv[1], MPI_MODE_RDWR | MPI_MODE_CREATE | TCIO_MODE_TRUNC)
                      : NULL;
    int in = -1;
    ok = ok && f && tcio_write_at(f, rank * (MPI_Offset)sizeof rank, &rank, 1, MPI_INT) == 0 &&
         tcio_flush(f) == 0 && tcio_read_at(f, rank * (MPI_Offset)sizeof rank, &in, 1, MPI_INT) == 0;
    if (f)
        ok = tcio_close(f) == 0 && ok && in == rank;
    if (!ok) {
        char why[TCIO_MAX_ERROR_STRING];
        tcio_last_error(why, sizeof why);
        fprintf(stderr, "cmake_check: failed: %s\n", why);
    }
    MPI_Finalize();
    return ok ? 0 : 1;
}
