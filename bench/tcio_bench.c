/* tcio_bench - the TCIO paper's synthetic interleaved benchmark (Table I).
 *
 *   mpiexec -n P tcio_bench -m METHOD -n NUM_ARRAY -t TYPES -l LEN_ARRAY
 *                           -s SIZE_ACCESS -o FILE [--csv] [--aggregators N]
 *                           [--placement P] [--early-drain on|off]
 *                           [--prefetch on|off]
 *                           [--dumps N [--compute-ms M] [--close sync|background]]
 *
 * Every rank holds NUM_ARRAY arrays of LEN_ARRAY elements (types from
 * TYPES).  The file holds blocks of SIZE_ACCESS elements of each array in
 * turn, the blocks of the ranks interleaved round-robin (the paper's
 * Figure 1).  METHOD 0 writes and reads it with ROMIO's collective I/O as in
 * Program 2 (OCIO), 1 with libtcio as in Program 3 (TCIO), 2 with one
 * independent MPI-IO call per access (MPI-IO), 3 with one contiguous block
 * per rank and one collective call (the file system's ceiling; another
 * layout), 4 with PnetCDF's nonblocking requests, one per access, on one
 * record variable per array (the same record layout, in netCDF's big-endian
 * encoding, after PnetCDF's header), 5 with one file per rank, FILE.RANK,
 * written and read through stdio, one fwrite/fread per access (the
 * file-per-process baseline: what users do when shared files are slow).
 * Every element read back is checked.  Methods 0-2 write byte-identical
 * files.  The tuning
 * options set libtcio's aggregators and early drain; --prefetch on declares
 * the read-back as a read session.  The report gives the share of the
 * write time spent in tcio_close.
 *
 * With --dumps N it is a checkpointing code instead: N rounds of "compute
 * for M ms (a busy loop, no MPI call), then write the file" (FILE.0 ...
 * FILE.N-1), then M ms more, and reports besides the per-dump figures the
 * time the ranks were blocked in the I/O calls (blocked_s: the write
 * functions of the method, from its open to its close, and for TCIO with
 * --close background tcio_close_begin, then tcio_close_end just before the
 * next dump's open and after the last computing; summed over the dumps,
 * the maximum over the ranks) and the wall time of the whole loop
 * (total_s).  Every dump is read back and checked afterwards. */
#define _POSIX_C_SOURCE 200809L   /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <mpi.h>
#include "tcio.h"
#include "bench_common.h"
#ifdef TCIO_HAVE_PNETCDF       /* configure found PnetCDF built for this MPI */
#include <pnetcdf.h>
#endif

/* ---- the benchmark's data ---------------------------------------------- */

typedef struct layout {
    int     nprocs, rank;
    int     num_array;
    size_t  elem_size[BENCH_MAX_ARRAYS];
    long    len_array;
    long    size_access;
    size_t  block_size;      /* one block of every array, in bytes */
} layout;

static MPI_Offset first_block(const layout *l, long i)
{
    return ((MPI_Offset)l->rank + (MPI_Offset)(i / l->size_access) * l->nprocs)
           * (MPI_Offset)l->block_size;
}

/* ---- OCIO: Program 2 ----------------------------------------------------- */

static int ocio_view(MPI_File fh, const layout *l, MPI_Datatype *etype, MPI_Datatype *ftype)
{
    MPI_Type_contiguous((int)l->block_size, MPI_BYTE, etype);
    MPI_Type_commit(etype);
    MPI_Type_vector((int)(l->len_array / l->size_access), 1, l->nprocs, *etype, ftype);
    MPI_Type_commit(ftype);
    return MPI_File_set_view(fh, (MPI_Offset)l->rank * l->block_size, *etype, *ftype,
                             "native", MPI_INFO_NULL);
}

static int ocio_write(const char *fname, const layout *l, char **arrays)
{
    size_t bytes = l->block_size * (size_t)(l->len_array / l->size_access);
    char *buffer = malloc(bytes), *p = buffer;
    for (long i = 0; i < l->len_array; i += l->size_access)
        for (int j = 0; j < l->num_array; j++) {
            size_t n = l->elem_size[j] * (size_t)l->size_access;
            memcpy(p, arrays[j] + i * l->elem_size[j], n);
            p += n;
        }
    MPI_File fh;
    MPI_Datatype etype, ftype;
    int err = MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_WRONLY | MPI_MODE_CREATE,
                            MPI_INFO_NULL, &fh);
    if (err == MPI_SUCCESS) {
        MPI_File_set_size(fh, 0);
        err = ocio_view(fh, l, &etype, &ftype);
        if (err == MPI_SUCCESS)
            err = MPI_File_write_all(fh, buffer, (int)bytes, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_File_close(&fh);
        MPI_Type_free(&etype);
        MPI_Type_free(&ftype);
    }
    free(buffer);
    return err;
}

static int ocio_read(const char *fname, const layout *l, char **arrays)
{
    size_t bytes = l->block_size * (size_t)(l->len_array / l->size_access);
    char *buffer = malloc(bytes), *p = buffer;
    MPI_File fh;
    MPI_Datatype etype, ftype;
    int err = MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (err == MPI_SUCCESS) {
        err = ocio_view(fh, l, &etype, &ftype);
        if (err == MPI_SUCCESS)
            err = MPI_File_read_all(fh, buffer, (int)bytes, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_File_close(&fh);
        MPI_Type_free(&etype);
        MPI_Type_free(&ftype);
    }
    for (long i = 0; i < l->len_array; i += l->size_access)
        for (int j = 0; j < l->num_array; j++) {
            size_t n = l->elem_size[j] * (size_t)l->size_access;
            memcpy(arrays[j] + i * l->elem_size[j], p, n);
            p += n;
        }
    free(buffer);
    return err;
}

/* ---- TCIO: Program 3 ----------------------------------------------------- */

static bool read_session;      /* --prefetch on */
static double close_seconds;   /* this rank's tcio_close of the write */
static bool close_background;  /* --close background: tcio_close_begin */
static tcio_file *closing;     /* the dump whose tcio_close_end is due */

/* tcio_close_end of the dump whose close was begun, if any. */
static int end_pending_close(void)
{
    if (!closing)
        return TCIO_SUCCESS;
    int rc = tcio_close_end(closing);
    closing = NULL;
    return rc;
}

static int tcio_bench_write(const char *fname, const layout *l, char **arrays)
{
    tcio_file *fh = tcio_open(fname, MPI_MODE_WRONLY | MPI_MODE_CREATE | TCIO_MODE_TRUNC);
    if (!fh)
        return TCIO_ERR_OPEN;
    int rc = TCIO_SUCCESS;
    for (long i = 0; i < l->len_array && rc == TCIO_SUCCESS; i += l->size_access) {
        MPI_Offset pos = first_block(l, i);
        for (int j = 0; j < l->num_array && rc == TCIO_SUCCESS; j++) {
            int n = (int)(l->elem_size[j] * l->size_access);
            rc = tcio_write_at(fh, pos, arrays[j] + i * l->elem_size[j], n, MPI_BYTE);
            pos += n;
        }
    }
    double t0 = MPI_Wtime();
    int close_rc;
    if (close_background) {
        close_rc = tcio_close_begin(fh);   /* tcio_close_end: end_pending_close */
        closing = fh;
    } else {
        close_rc = tcio_close(fh);
    }
    close_seconds = MPI_Wtime() - t0;
    return rc != TCIO_SUCCESS ? rc : close_rc;
}

static int tcio_bench_read(const char *fname, const layout *l, char **arrays)
{
    tcio_file *fh = tcio_open(fname, MPI_MODE_RDONLY);
    if (!fh)
        return TCIO_ERR_OPEN;
    /* Every rank reads blocks spread over the whole file. */
    MPI_Offset size = (MPI_Offset)l->block_size * (l->len_array / l->size_access) * l->nprocs;
    int rc = read_session ? tcio_read_session(fh, 0, size) : TCIO_SUCCESS;
    for (long i = 0; i < l->len_array && rc == TCIO_SUCCESS; i += l->size_access) {
        MPI_Offset pos = first_block(l, i);
        for (int j = 0; j < l->num_array && rc == TCIO_SUCCESS; j++) {
            int n = (int)(l->elem_size[j] * l->size_access);
            rc = tcio_read_at(fh, pos, arrays[j] + i * l->elem_size[j], n, MPI_BYTE);
            pos += n;
        }
    }
    int close_rc = tcio_close(fh);   /* completes the lazy reads */
    return rc != TCIO_SUCCESS ? rc : close_rc;
}

/* ---- MPI-IO: one independent call per access ----------------------------- */

static int mpiio_access(const char *fname, const layout *l, char **arrays, int writing)
{
    MPI_File fh;
    int mode = writing ? MPI_MODE_WRONLY | MPI_MODE_CREATE : MPI_MODE_RDONLY;
    int err = MPI_File_open(MPI_COMM_WORLD, fname, mode, MPI_INFO_NULL, &fh);
    if (err != MPI_SUCCESS)
        return err;
    if (writing)
        MPI_File_set_size(fh, 0);
    for (long i = 0; i < l->len_array && err == MPI_SUCCESS; i += l->size_access) {
        MPI_Offset pos = first_block(l, i);
        for (int j = 0; j < l->num_array && err == MPI_SUCCESS; j++) {
            int n = (int)(l->elem_size[j] * l->size_access);
            char *p = arrays[j] + i * l->elem_size[j];
            err = writing ? MPI_File_write_at(fh, pos, p, n, MPI_BYTE, MPI_STATUS_IGNORE)
                          : MPI_File_read_at(fh, pos, p, n, MPI_BYTE, MPI_STATUS_IGNORE);
            pos += n;
        }
    }
    MPI_File_close(&fh);
    return err;
}

static int mpiio_write(const char *f, const layout *l, char **a) { return mpiio_access(f, l, a, 1); }
static int mpiio_read(const char *f, const layout *l, char **a) { return mpiio_access(f, l, a, 0); }

/* ---- contiguous: the file system's ceiling ------------------------------ */

/* Each rank's data as one contiguous block of the file (its arrays one
 * after another), moved with one collective call straight from the arrays
 * (an hindexed memory type, no packing): what any method can reach at
 * best.  The file differs from the other methods' (not interleaved). */
static int contiguous_access(const char *fname, const layout *l, char **arrays, int writing)
{
    int lengths[BENCH_MAX_ARRAYS];
    MPI_Aint displs[BENCH_MAX_ARRAYS];
    MPI_Offset rank_bytes = 0;
    for (int j = 0; j < l->num_array; j++) {
        lengths[j] = (int)(l->elem_size[j] * (size_t)l->len_array);
        MPI_Get_address(arrays[j], &displs[j]);
        rank_bytes += lengths[j];
    }
    MPI_Datatype memtype;
    MPI_Type_create_hindexed(l->num_array, lengths, displs, MPI_BYTE, &memtype);
    MPI_Type_commit(&memtype);
    MPI_File fh;
    int mode = writing ? MPI_MODE_WRONLY | MPI_MODE_CREATE : MPI_MODE_RDONLY;
    int err = MPI_File_open(MPI_COMM_WORLD, fname, mode, MPI_INFO_NULL, &fh);
    if (err == MPI_SUCCESS) {
        MPI_Offset at = rank_bytes * l->rank;
        if (writing) {
            MPI_File_set_size(fh, 0);
            err = MPI_File_write_at_all(fh, at, MPI_BOTTOM, 1, memtype, MPI_STATUS_IGNORE);
        } else {
            err = MPI_File_read_at_all(fh, at, MPI_BOTTOM, 1, memtype, MPI_STATUS_IGNORE);
        }
        MPI_File_close(&fh);
    }
    MPI_Type_free(&memtype);
    return err;
}

static int contiguous_write(const char *f, const layout *l, char **a) { return contiguous_access(f, l, a, 1); }
static int contiguous_read(const char *f, const layout *l, char **a) { return contiguous_access(f, l, a, 0); }

/* ---- file per rank: what users do when shared files are slow ------------ */

/* Each rank writes its own file, FILE.RANK, with stdio: one fwrite per
 * access, its blocks in the order the shared-file methods write them (the
 * same bytes, without the other ranks' blocks between them), then reads
 * it back with one fread per access.  stdio's buffer is its default one
 * (st_blksize bytes: 4 KiB on tmpfs and on FUSE), as in the codes this
 * stands for.  fclose ends the write (the buffer reaches the file system
 * there) and is timed, as the other methods' close is; nothing is synced,
 * as stdio codes do not.  The files are left in place like the other
 * methods' file (the scripts remove FILE.*). */
static int per_rank_name(char *name, size_t size, const char *fname, int rank)
{
    return snprintf(name, size, "%s.%d", fname, rank) < (int)size ? 0 : -1;
}

static int file_per_rank_access(const char *fname, const layout *l, char **arrays, int writing)
{
    char name[4096];
    if (per_rank_name(name, sizeof name, fname, l->rank) != 0)
        return -1;
    FILE *f = fopen(name, writing ? "wb" : "rb");
    if (!f)
        return -1;
    int err = 0;
    for (long i = 0; i < l->len_array && !err; i += l->size_access)
        for (int j = 0; j < l->num_array && !err; j++) {
            size_t n = l->elem_size[j] * (size_t)l->size_access;
            char *p = arrays[j] + i * l->elem_size[j];
            err = (writing ? fwrite(p, n, 1, f) : fread(p, n, 1, f)) != 1;
        }
    if (fclose(f) != 0)
        err = 1;
    return err ? -1 : 0;
}

static int file_per_rank_write(const char *f, const layout *l, char **a) { return file_per_rank_access(f, l, a, 1); }
static int file_per_rank_read(const char *f, const layout *l, char **a) { return file_per_rank_access(f, l, a, 0); }

/* ---- PnetCDF: nonblocking requests aggregated by ncmpi_wait_all ---------- */

#ifdef TCIO_HAVE_PNETCDF
static const bool pnetcdf_built = true;

/* One record variable per array, of SIZE_ACCESS elements per record: record
 * r holds block r of the interleaved layout (one access of each array, the
 * ranks round-robin), the layout of the other methods' file in netCDF's
 * big-endian encoding after PnetCDF's header.  One nonblocking request per
 * access (one element in Table II's shape), all completed by one collective
 * ncmpi_wait_all, which aggregates them into MPI-IO collective calls. */

/* The netCDF type of an element of ELEM_SIZE bytes and the MPI type of
 * the buffer (bytes move unchanged: 4-byte elements as int, whether the
 * array holds int or float). */
static nc_type pnetcdf_type(size_t elem_size, MPI_Datatype *buftype)
{
    switch (elem_size) {
    case 1: *buftype = MPI_SIGNED_CHAR; return NC_BYTE;
    case 2: *buftype = MPI_SHORT; return NC_SHORT;
    case 4: *buftype = MPI_INT; return NC_INT;
    default: *buftype = MPI_DOUBLE; return NC_DOUBLE;
    }
}

static int pnetcdf_access(const char *fname, const layout *l, char **arrays, int writing)
{
    int ncid, dims[2], vars[BENCH_MAX_ARRAYS], rc;
    MPI_Datatype buftypes[BENCH_MAX_ARRAYS];
    for (int j = 0; j < l->num_array; j++)
        pnetcdf_type(l->elem_size[j], &buftypes[j]);
    if (writing) {
        rc = ncmpi_create(MPI_COMM_WORLD, fname, NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &ncid);
        if (rc != NC_NOERR)
            return rc;
        ncmpi_def_dim(ncid, "record", NC_UNLIMITED, &dims[0]);
        ncmpi_def_dim(ncid, "access", (MPI_Offset)l->size_access, &dims[1]);
        for (int j = 0; j < l->num_array; j++) {
            char name[16];
            snprintf(name, sizeof name, "array%d", j);
            ncmpi_def_var(ncid, name, pnetcdf_type(l->elem_size[j], &buftypes[j]), 2, dims,
                          &vars[j]);
        }
        rc = ncmpi_enddef(ncid);
    } else {
        rc = ncmpi_open(MPI_COMM_WORLD, fname, NC_NOWRITE, MPI_INFO_NULL, &ncid);
        if (rc != NC_NOERR)
            return rc;
        for (int j = 0; j < l->num_array && rc == NC_NOERR; j++) {
            char name[16];
            snprintf(name, sizeof name, "array%d", j);
            rc = ncmpi_inq_varid(ncid, name, &vars[j]);
        }
    }
    MPI_Offset count[2] = { 1, l->size_access };
    for (long i = 0; i < l->len_array && rc == NC_NOERR; i += l->size_access) {
        MPI_Offset start[2] = { (MPI_Offset)(i / l->size_access) * l->nprocs + l->rank, 0 };
        for (int j = 0; j < l->num_array && rc == NC_NOERR; j++) {
            void *p = arrays[j] + i * l->elem_size[j];
            rc = writing ? ncmpi_iput_vara(ncid, vars[j], start, count, p, l->size_access,
                                           buftypes[j], NULL)
                         : ncmpi_iget_vara(ncid, vars[j], start, count, p, l->size_access,
                                           buftypes[j], NULL);
        }
    }
    int wait_rc = ncmpi_wait_all(ncid, NC_REQ_ALL, NULL, NULL);
    int close_rc = ncmpi_close(ncid);
    return rc != NC_NOERR ? rc : wait_rc != NC_NOERR ? wait_rc : close_rc;
}
#else
static const bool pnetcdf_built = false;   /* main() says so and exits 77 */
static int pnetcdf_access(const char *fname, const layout *l, char **arrays, int writing)
{
    (void)fname, (void)l, (void)arrays, (void)writing;
    return -1;
}
#endif

static int pnetcdf_write(const char *f, const layout *l, char **a) { return pnetcdf_access(f, l, a, 1); }
static int pnetcdf_read(const char *f, const layout *l, char **a) { return pnetcdf_access(f, l, a, 0); }

/* ---- driver -------------------------------------------------------------- */

typedef int (*io_fn)(const char *, const layout *, char **);

static const struct method {
    const char *name;
    io_fn write, read;
} methods[] = {
    { "ocio", ocio_write, ocio_read },
    { "tcio", tcio_bench_write, tcio_bench_read },
    { "mpiio", mpiio_write, mpiio_read },
    { "contiguous", contiguous_write, contiguous_read },
    { "pnetcdf", pnetcdf_write, pnetcdf_read },
    { "file-per-rank", file_per_rank_write, file_per_rank_read },
};

/* On the rank whose WHAT (write or read) returned RC: say why on stderr,
 * so that a failed run names its cause and not only "verified no" (the
 * libtcio methods' own reason; the others' codes are their MPI or POSIX
 * errors). */
static void say_failure(const struct method *m, const char *what, int rc, int rank)
{
    if (rc == 0)
        return;
    char why[TCIO_MAX_ERROR_STRING] = "";
    if (m->write == tcio_bench_write)
        tcio_last_error(why, sizeof why);
    fprintf(stderr, "tcio_bench: rank %d: %s %s failed (code %d)%s%s\n", rank, m->name, what,
            rc, why[0] ? ": " : "", why);
}

/* ---- the checkpointing loop (--dumps) ------------------------------------- */

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The application's computing: a busy loop of MS milliseconds that calls
 * neither MPI nor libtcio (the clock is read with clock_gettime). */
static void compute(long ms)
{
    volatile double x = 1.0;
    double until = seconds_now() + (double)ms / 1000.0;
    while (seconds_now() < until)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
}

static void dump_name(char *name, size_t size, const char *file, long k)
{
    snprintf(name, size, "%s.%ld", file, k);
}

/* ARRAYS hold dump K's values (bench_set_array). */
static void set_dump(const bench_options *opt, const layout *l, char **arrays, long k)
{
    for (int j = 0; j < l->num_array; j++)
        bench_set_array(arrays[j], opt->types[j], l->rank, j, l->len_array, k);
}

/* --dumps: the loop, then every dump read back into READBACK and checked
 * against its own values.  Each dump writes values of its own, set in
 * ARRAYS as the computing's result before its write, so that a dump's
 * bytes in another dump's file, or a close (tcio_close_begin) that still
 * read the arrays after the write returned, fail the check.  Fills R:
 * write_s is the slowest rank's time from the open to the close (to
 * tcio_close_begin), summed over the dumps, divided by their number (no
 * barrier between dumps: the ranks compute and write at their own pace);
 * blocked_s adds the tcio_close_end calls. */
static void run_dumps(const struct method *m, const bench_options *opt, const layout *l,
                      char **arrays, char **readback, bench_result *r)
{
    char name[4096];
    double blocked = 0, written = 0, closed = 0, read = 0;
    int rc = 0;
    double t0 = bench_start();
    for (long k = 0; k < opt->dumps; k++) {
        compute(opt->compute_ms);
        set_dump(opt, l, arrays, k);
        double t = MPI_Wtime();
        int end_rc = end_pending_close();      /* the previous dump's */
        double t_open = MPI_Wtime();
        dump_name(name, sizeof name, opt->file, k);
        int write_rc = m->write(name, l, arrays);
        double t_done = MPI_Wtime();
        blocked += t_done - t;
        written += t_done - t_open;
        closed += close_seconds;
        close_seconds = 0;
        if (!rc) {
            rc = end_rc ? end_rc : write_rc;
            say_failure(m, "write", rc, l->rank);   /* while its reason is the last */
        }
    }
    compute(opt->compute_ms);
    double t = MPI_Wtime();
    int end_rc = end_pending_close();
    blocked += MPI_Wtime() - t;
    if (!rc) {
        rc = end_rc;
        say_failure(m, "write", rc, l->rank);
    }
    r->total_s = bench_stop(t0);
    r->blocked_s = bench_max(blocked);
    r->write_s = bench_max(written) / (double)opt->dumps;
    r->close_s = bench_max(closed) / (double)opt->dumps;
    r->write_rc = rc;
    long wrong = 0;
    for (long k = 0; k < opt->dumps; k++) {
        for (int j = 0; j < l->num_array; j++)
            memset(readback[j], 0, (size_t)l->len_array * l->elem_size[j]);
        dump_name(name, sizeof name, opt->file, k);
        double tr = bench_start();
        int read_rc = m->read(name, l, readback);
        read += bench_stop(tr);
        if (!r->read_rc)
            r->read_rc = read_rc;
        set_dump(opt, l, arrays, k);
        for (int j = 0; j < l->num_array; j++)
            if (memcmp(arrays[j], readback[j], (size_t)l->len_array * l->elem_size[j]) != 0)
                wrong++;
    }
    r->read_s = read / (double)opt->dumps;
    r->dumps = opt->dumps;
    r->compute_ms = opt->compute_ms;
    r->close_mode = opt->close_background ? "background" : "sync";
    say_failure(m, "read", r->read_rc, l->rank);
    r->verified = bench_all_true(r->write_rc == 0 && r->read_rc == 0 && wrong == 0);
}

static const char usage[] =
    "usage: mpiexec -n P tcio-bench -m METHOD -n NUM_ARRAY -t TYPES -l LEN_ARRAY\n"
    "                               -s SIZE_ACCESS -o FILE [--csv] [tuning options]\n"
    "(bench/tcio_bench in the build tree)\n"
    "  -m METHOD       0 = OCIO (ROMIO collective I/O, Program 2), 1 = TCIO (libtcio,\n"
    "                  Program 3), 2 = MPI-IO (one independent call per access),\n"
    "                  3 = contiguous (one block per rank, MPI_File_write_at_all/\n"
    "                  read_at_all: the ceiling), 4 = PnetCDF (one nonblocking\n"
    "                  request per access, then ncmpi_wait_all; exit status 77 if\n"
    "                  built without PnetCDF), 5 = file per rank (FILE.RANK per\n"
    "                  rank, one fwrite/fread per access with stdio: the\n"
    "                  file-per-process baseline)\n"
    "  -n NUM_ARRAY    arrays per rank (1..16)\n"
    "  -t TYPES        comma-separated element type of each array: c,s,i,f,d\n"
    "  -l LEN_ARRAY    elements per array, a multiple of SIZE_ACCESS (k/m suffix ok)\n"
    "  -s SIZE_ACCESS  elements per access\n"
    "  -o FILE         the shared file (written, read back, left in place); METHOD 5:\n"
    "                  the stem of the per-rank files FILE.0, FILE.1, ...\n"
    "  --csv           print a CSV header and one row instead of a table\n"
    "  -h, --help      print this help\n"
    "A checkpointing code (every method):\n"
    "  --dumps N       N rounds of computing, then writing FILE.0 ... FILE.N-1\n"
    "                  (left in place); every dump is read back and checked\n"
    "                  afterwards; reports blocked_s (time inside the I/O calls,\n"
    "                  all dumps, max over ranks) and total_s (the loop's wall\n"
    "                  time); write, close and read figures are per dump (write:\n"
    "                  open to close, or to tcio_close_begin, summed over the\n"
    "                  dumps on the slowest rank); each dump writes values of\n"
    "                  its own, set after the computing\n"
    "  --compute-ms M  a busy loop of M ms (no MPI call) before each dump and\n"
    "                  after the last (default 0)\n"
    "  --close X       sync (default: tcio_close) or background (METHOD 1:\n"
    "                  tcio_close_begin, and tcio_close_end just before the next\n"
    "                  dump's open and after the last computing)\n"
    "Tuning options (METHOD 1):\n"
    BENCH_TUNING_USAGE;

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_options opt;
    layout l;
    MPI_Comm_rank(MPI_COMM_WORLD, &l.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &l.nprocs);
    const char *problem = bench_parse_options(argc, argv, &opt);
    int status = bench_usage_exit(opt.help, "tcio-bench", problem, usage);
    if (status >= 0)
        return status;
    bench_apply_tuning(&opt.tuning);
    read_session = opt.tuning.prefetch;
    close_background = opt.close_background;
    l.num_array = opt.num_array;
    l.len_array = opt.len_array;
    l.size_access = opt.size_access;
    l.block_size = 0;
    for (int j = 0; j < l.num_array; j++) {
        l.elem_size[j] = bench_type_size(opt.types[j]);
        l.block_size += l.elem_size[j] * (size_t)l.size_access;
    }

    char *arrays[BENCH_MAX_ARRAYS], *readback[BENCH_MAX_ARRAYS];
    for (int j = 0; j < l.num_array; j++) {
        arrays[j] = bench_fill_array(opt.types[j], l.rank, j, l.len_array);
        readback[j] = calloc((size_t)l.len_array, l.elem_size[j]);
    }
    const struct method *m = &methods[opt.method];
    if (m->write == pnetcdf_write && !pnetcdf_built) {
        if (l.rank == 0)
            fprintf(stderr, "tcio_bench: method 4 (pnetcdf) skipped: this tcio_bench was built "
                    "without PnetCDF (configure found none for this MPI)\n");
        MPI_Finalize();
        return 77;
    }
    bench_result r = { 0 };
    r.bytes = (double)l.block_size * (double)(l.len_array / l.size_access) * l.nprocs;
    if (opt.dumps) {
        run_dumps(m, &opt, &l, arrays, readback, &r);
    } else {
        double t0 = bench_start();
        r.write_rc = m->write(opt.file, &l, arrays);
        r.write_s = bench_stop(t0);
        say_failure(m, "write", r.write_rc, l.rank);   /* before the read's reason */
        r.close_s = bench_max(close_seconds);
        t0 = bench_start();
        r.read_rc = m->read(opt.file, &l, readback);
        r.read_s = bench_stop(t0);
        say_failure(m, "read", r.read_rc, l.rank);
        long wrong = 0;
        for (int j = 0; j < l.num_array; j++)
            if (memcmp(arrays[j], readback[j], (size_t)l.len_array * l.elem_size[j]) != 0)
                wrong++;
        r.verified = bench_all_true(r.write_rc == 0 && r.read_rc == 0 && wrong == 0);
    }
    r.peak_rss_mib = bench_max_peak_rss_mib();
    if (l.rank == 0)
        bench_report(stdout, opt.csv, &(bench_row){ .method = m->name, .nprocs = l.nprocs,
                     .num_array = opt.num_array, .types = opt.types_text,
                     .len_array = opt.len_array, .size_access = opt.size_access,
                     .tuning = &opt.tuning }, &r);
    for (int j = 0; j < l.num_array; j++) {
        free(arrays[j]);
        free(readback[j]);
    }
    MPI_Finalize();
    return r.verified ? 0 : 1;
}
