/* test_fortran_c.c - the C values that test_fortran compares the module's
 * constants with (so that tcio.F90 cannot drift from tcio.h unnoticed). */
#include <string.h>
#include "tcio.h"

/* The constants of tcio.h by name, in the order test_fortran lists the
 * module's: returns how many were stored (at most N). */
int test_c_constants(int *values, int n)
{
    const int named[] = {
        TCIO_SUCCESS, TCIO_ERR_BAD_HANDLE, TCIO_ERR_BAD_ARG, TCIO_ERR_BAD_TYPE,
        TCIO_ERR_BAD_MODE, TCIO_ERR_READ_ONLY, TCIO_ERR_WRITE_ONLY, TCIO_ERR_BAD_CONFIG,
        TCIO_ERR_NO_MEMORY, TCIO_ERR_NO_SUCH_FILE, TCIO_ERR_ACCESS, TCIO_ERR_FILE_EXISTS,
        TCIO_ERR_OPEN, TCIO_ERR_NO_SPACE, TCIO_ERR_IO, TCIO_ERR_MPI, TCIO_ERR_REMOTE,
        TCIO_ERR_COUNT, TCIO_MODE_TRUNC, TCIO_VERSION_MAJOR, TCIO_VERSION_MINOR,
        TCIO_VERSION_PATCH, TCIO_MAX_ERROR_STRING,
    };
    int k = 0;
    for (size_t i = 0; i < sizeof named / sizeof named[0] && k < n; i++)
        values[k++] = named[i];
    return k;
}

/* TCIO_VERSION, blank-padded into a Fortran character(len=LEN). */
void test_c_version(char *buf, int len)
{
    int n = (int)strlen(TCIO_VERSION);
    memset(buf, ' ', (size_t)len);
    memcpy(buf, TCIO_VERSION, (size_t)(n < len ? n : len));
}
