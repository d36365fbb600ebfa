/* test_fortran_c.c - the C values that test_fortran compares the module's
 * constants with (so that tcio.F90 cannot drift from tcio.h unnoticed). */
#include <string.h>
#include <ISO_Fortran_binding.h>
#include <mpi.h>
#include "tcio.h"

/* The module's write stub (tcio_fortran.c), called here with a descriptor
 * no Fortran program could build on this machine. */
int tcio_f_write_at(tcio_file *fh, long long offset, const CFI_cdesc_t *data, int count,
                    MPI_Fint type);

/* NAME created on MPI_COMM_WORLD, and tcio_write_at of 2 integers at
 * OFFSET from a strided section that claims 2^34 of them (every other int
 * of 2^35, 64 GiB of elements) over 4 real ones: the stub must pack only
 * the 2 elements written (11 and 33), not the section, which it has no
 * memory for and which lies past the buffer.  Returns the write's code,
 * or the open's or the close's where they fail. */
int test_c_write_from_huge_section(const char *name, long long offset)
{
    tcio_file *fh = tcio_open(name, MPI_MODE_WRONLY | MPI_MODE_CREATE | TCIO_MODE_TRUNC);
    if (!fh)
        return tcio_last_error(NULL, 0);
    static int data[4] = { 11, 22, 33, 44 };
    CFI_CDESC_T(1) section;
    CFI_cdesc_t *d = (CFI_cdesc_t *)&section;
    CFI_index_t extent[1] = { (CFI_index_t)1 << 34 };
    int rc = CFI_establish(d, data, CFI_attribute_other, CFI_type_int, sizeof(int), 1, extent);
    if (rc == CFI_SUCCESS) {
        d->dim[0].sm = 2 * (CFI_index_t)sizeof(int);
        rc = tcio_f_write_at(fh, offset, d, 2, MPI_Type_c2f(MPI_INT));
    } else {
        rc = -1;
    }
    int close_rc = tcio_close(fh);
    return rc != TCIO_SUCCESS ? rc : close_rc;
}

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
