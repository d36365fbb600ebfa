/*
 * tcio_fortran.c - the C side of the Fortran module (tcio.F90).
 *
 * Thin stubs: each converts the Fortran MPI handles (MPI_Fint: the integer
 * of `use mpi', the MPI_VAL component of the `use mpi_f08' types) with the
 * MPI f2c functions and turns the Fortran buffer, an assumed-type,
 * assumed-rank dummy that arrives as a C descriptor (ISO_Fortran_binding.h,
 * Fortran 2018), into the address libtcio expects.  Its own refusals
 * (an array too small for COUNT, a non-contiguous read buffer) are
 * recorded for tcio_last_error like libtcio's; everything else is
 * libtcio's own checking and error codes.  See doc/fortran.md.
 */
#define _GNU_SOURCE   /* RTLD_DEFAULT, for one_mpi.h */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ISO_Fortran_binding.h>
#include "tcio.h"
#include "error.h"        /* tcio_fortran_refusal, one of libtcio's two exports outside tcio.h */
#include "one_mpi.h"

/* The module passes offsets as integer(c_long_long), converted from the
 * users' integer(MPI_OFFSET_KIND); tcio_seek, tcio_prefetch and
 * tcio_read_session are bound directly, so MPI_Offset must be as wide. */
_Static_assert(sizeof(MPI_Offset) == sizeof(long long),
               "the Fortran module passes MPI_Offset as long long");

/* ---- buffers ---------------------------------------------------------------
 * A rank-0 descriptor is a scalar or an array element: the buffer is its
 * address and COUNT elements follow it in memory, as MPI takes a choice
 * buffer (sequence association: u(1, 0, j, k) with count 5 * n is a row of
 * u).  Nothing tells how much memory follows, so it is trusted, as an
 * assumed-size array is.  An array (rank >= 1) of known size is checked:
 * COUNT elements must fit in it. */

/* Bytes the array described by D occupies, or -1 when unknown (a scalar or
 * array element, trusted; an assumed-size array, whose last extent is -1). */
static long long descriptor_bytes(const CFI_cdesc_t *d)
{
    if (d->rank == 0)
        return -1;
    long long n = (long long)d->elem_len;
    for (int r = 0; r < d->rank; r++) {
        if (d->dim[r].extent < 0)
            return -1;
        n *= (long long)d->dim[r].extent;
    }
    return n;
}

/* The module's own refusals go to tcio_last_error like libtcio's:
 * "rank R: CALL: REASON". */
static int refuse(int code, const char *call, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static int refuse(int code, const char *call, const char *format, ...)
{
    char reason[TCIO_MAX_ERROR_STRING];
    va_list ap;
    va_start(ap, format);
    vsnprintf(reason, sizeof reason, format, ap);
    va_end(ap);
    return tcio_fortran_refusal(code, call, reason);
}

/* " of MPI_INTEGER" for a named datatype, "" otherwise. */
static void type_name(MPI_Datatype type, char *out, size_t size)
{
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    out[0] = '\0';
    if (MPI_Type_get_name(type, name, &len) == MPI_SUCCESS && len > 0)
        snprintf(out, size, " of %s", name);
}

/* TCIO_SUCCESS if COUNT elements of TYPE, laid out from the start of the
 * buffer as MPI lays them out, fit into the NBYTES of array D (-1:
 * unknown, trusted), else the refusal of CALL.  *NEEDED_BYTES gets the bytes
 * from the buffer's start that the call reads or writes (NBYTES where
 * that is not known). */
static int check_fits(const char *call, const CFI_cdesc_t *d, long long nbytes, int count,
                      MPI_Datatype type, long long *needed_bytes)
{
    *needed_bytes = nbytes;
    if (nbytes < 0)
        return TCIO_SUCCESS;
    MPI_Aint lb, extent, true_lb, true_extent;
    if (MPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS)
        return TCIO_SUCCESS;               /* leave it to libtcio's own checks */
    char name[MPI_MAX_OBJECT_NAME + 8];
    type_name(type, name, sizeof name);
    if (true_lb < 0)
        return refuse(TCIO_ERR_BAD_ARG, call, "the datatype%s starts %lld bytes before the "
                      "buffer (a negative lower bound)", name, (long long)-true_lb);
    long long needed = (long long)true_lb + (long long)true_extent +
                       (long long)(count - 1) * (long long)extent;
    if (needed <= nbytes) {
        *needed_bytes = needed;
        return TCIO_SUCCESS;
    }
    return refuse(TCIO_ERR_BAD_ARG, call, "count %d%s needs %lld bytes, past the end of the "
                  "buffer, a rank-%d array of %lld bytes (%lld elements); to pass the memory "
                  "that follows an element, as MPI codes do, pass the element itself: "
                  "a(1, j), not a(:, j)", count, name, needed, (int)d->rank, nbytes,
                  nbytes / (long long)d->elem_len);
}

/* Copy the first NBYTES / elem_len elements of the non-contiguous array D,
 * in array element order, into a new contiguous buffer of NBYTES (NULL
 * when out of memory). */
static void *pack(const CFI_cdesc_t *d, long long nbytes)
{
    char *out = malloc(nbytes > 0 ? (size_t)nbytes : 1), *p = out;
    if (!out)
        return NULL;
    CFI_index_t index[CFI_MAX_RANK] = { 0 };
    long long elements = nbytes / (long long)d->elem_len;
    for (long long k = 0; k < elements; k++) {
        const char *src = d->base_addr;
        for (int r = 0; r < d->rank; r++)
            src += index[r] * d->dim[r].sm;
        memcpy(p, src, d->elem_len);
        p += d->elem_len;
        for (int r = 0; r < d->rank && ++index[r] == d->dim[r].extent; r++)
            index[r] = 0;
    }
    return out;
}

/* The first dimension of the non-contiguous array D whose stride breaks
 * contiguity (1-based, as Fortran counts), for the refusal's message. */
static int gap_dimension(const CFI_cdesc_t *d)
{
    long long expected = (long long)d->elem_len;
    for (int r = 0; r < d->rank; r++) {
        if (d->dim[r].extent > 1 && (long long)d->dim[r].sm != expected)
            return r + 1;
        expected *= (long long)d->dim[r].extent;
    }
    return 1;
}

/* ---- open (tcio_open itself takes no handle: the module binds it) -------- */

int tcio_f_open_comm(MPI_Fint comm, const char *fname, int mode, MPI_Fint info,
                     tcio_file **fh)
{
    /* With the other MPI's library in the process (a `use mpi` program of
     * its mpifort), Open MPI's MPI_Comm_f2c would be a call into it: the
     * open refuses such a process before it looks at the handles. */
    if (tci_other_mpi_symbol())
        return tcio_open_comm(MPI_COMM_NULL, fname, mode, MPI_INFO_NULL, fh);
    return tcio_open_comm(MPI_Comm_f2c(comm), fname, mode, MPI_Info_f2c(info), fh);
}

/* ---- writes: a non-contiguous array is packed first (tcio_write copies the
 * data before it returns anyway) ------------------------------------------- */

static int write_descriptor(tcio_file *fh, bool at, MPI_Offset offset,
                            const CFI_cdesc_t *data, int count, MPI_Fint ftype)
{
    const char *call = at ? "tcio_write_at" : "tcio_write";
    MPI_Datatype type = MPI_Type_f2c(ftype);
    const void *base = data->base_addr;
    void *packed = NULL;
    if (fh && count > 0 && type != MPI_DATATYPE_NULL) {
        long long nbytes = descriptor_bytes(data), needed = 0;
        int rc = check_fits(call, data, nbytes, count, type, &needed);
        if (rc != TCIO_SUCCESS)
            return rc;
        if (nbytes > 0 && !CFI_is_contiguous(data)) {
            /* Only the elements the write takes: COUNT elements of a
             * huge section cost no more than the bytes written. */
            long long elem = (long long)data->elem_len;
            long long copied = (needed >= 0 && needed < nbytes)
                                   ? (needed + elem - 1) / elem * elem : nbytes;
            packed = pack(data, copied);
            if (!packed)
                return refuse(TCIO_ERR_NO_MEMORY, call, "no memory for a %lld-byte copy of "
                              "the non-contiguous array section", copied);
            base = packed;
        }
    }
    int rc = at ? tcio_write_at(fh, offset, base, count, type)
                : tcio_write(fh, base, count, type);
    free(packed);
    return rc;
}

int tcio_f_write(tcio_file *fh, const CFI_cdesc_t *data, int count, MPI_Fint type)
{
    return write_descriptor(fh, false, 0, data, count, type);
}

int tcio_f_write_at(tcio_file *fh, long long offset, const CFI_cdesc_t *data,
                    int count, MPI_Fint type)
{
    return write_descriptor(fh, true, offset, data, count, type);
}

/* ---- reads: lazy, so the library must fill the user's own memory: a
 * non-contiguous array (a strided section) is refused ---------------------- */

static int read_descriptor(tcio_file *fh, bool at, MPI_Offset offset,
                           CFI_cdesc_t *data, int count, MPI_Fint ftype)
{
    const char *call = at ? "tcio_read_at" : "tcio_read";
    MPI_Datatype type = MPI_Type_f2c(ftype);
    if (fh && count > 0 && type != MPI_DATATYPE_NULL) {
        long long nbytes = descriptor_bytes(data), needed = 0;
        int rc = check_fits(call, data, nbytes, count, type, &needed);
        if (rc != TCIO_SUCCESS)
            return rc;
        if (nbytes > 0 && !CFI_is_contiguous(data))
            return refuse(TCIO_ERR_BAD_ARG, call, "the buffer is a non-contiguous array "
                          "section (a stride in dimension %d): reads are lazy and fill the "
                          "buffer's own memory at tcio_fetch, tcio_flush or tcio_close, where "
                          "a compiler copy would lose the data; read into a contiguous array",
                          gap_dimension(data));
    }
    return at ? tcio_read_at(fh, offset, data->base_addr, count, type)
              : tcio_read(fh, data->base_addr, count, type);
}

int tcio_f_read(tcio_file *fh, CFI_cdesc_t *data, int count, MPI_Fint type)
{
    return read_descriptor(fh, false, 0, data, count, type);
}

int tcio_f_read_at(tcio_file *fh, long long offset, CFI_cdesc_t *data, int count,
                   MPI_Fint type)
{
    return read_descriptor(fh, true, offset, data, count, type);
}

/* ---- settings in effect: the new info object goes back as MPI_Fint ------ */

int tcio_f_get_info(tcio_file *fh, MPI_Fint *info)
{
    MPI_Info c_info = MPI_INFO_NULL;
    int rc = tcio_get_info(fh, &c_info);
    *info = MPI_Info_c2f(rc == TCIO_SUCCESS ? c_info : MPI_INFO_NULL);
    return rc;
}

/* ---- the rest take no MPI handles or buffers: the module binds tcio_open,
 * tcio_seek, tcio_flush, tcio_sync, tcio_get_size (MPI_Offset is long
 * long), tcio_set_size, tcio_fetch, tcio_close, tcio_close_begin,
 * tcio_close_end, tcio_prefetch,
 * tcio_read_session, tcio_progress, tcio_error_string, tcio_last_error and
 * tcio_version directly ------------------------------------------------- */
