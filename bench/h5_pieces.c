/* h5_pieces - a plain parallel HDF5 program that writes and reads a shared
 * dataset in small pieces (the HDF5 program of the MPI-IO
 * interposer's measurements and of tests/mpiio-programs.sh).
 *
 *   mpiexec -n P h5_pieces [-c] [-b B] [-n N] [-r R] [-s SEED] [-k] [--chunked C]
 *                          [--csv] FILE
 *
 * The dataset /pieces is a 1-D array of P*N*B doubles, cut into blocks of
 * B elements; block i belongs to rank i % P (the blocks of the ranks
 * interleaved, as in tcio_bench's layout).  Each rank writes each of its
 * blocks with one H5Dwrite of a one-block hyperslab, then the file is
 * closed, opened again and every block read back the same way and checked.
 * HDF5's MPI-IO driver turns each H5Dwrite of independent mode into one
 * MPI_File_write_at (the pattern libtcio's interposer serves); with -c every
 * H5Dwrite is collective instead (H5FD_MPIO_COLLECTIVE: one collective
 * MPI-IO call with every rank per block).
 *
 * It uses nothing of libtcio: it must run unchanged with and without the
 * interposer (LD_PRELOAD=libtcio_mpiio.so).  The report is tcio_bench's
 * (bench_report, same CSV columns), with the median write and read times of
 * R repetitions; the write time runs from H5Fcreate to H5Fclose, the read
 * time from H5Fopen to H5Fclose (what a program waits for). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <hdf5.h>
#include <mpi.h>
#include "bench_common.h"

#define DATASET "/pieces"

typedef struct options {
    long        block;        /* -b: elements per block */
    long        blocks;       /* -n: blocks per rank */
    int         reps;         /* -r */
    long        seed;         /* -s */
    bool        collective;   /* -c */
    bool        keep;         /* -k: keep the file of the last repetition */
    long        chunk;        /* --chunked: elements per chunk; 0: contiguous */
    bool        csv;
    bool        help;
    const char *file;
} options;

static const char usage_text[] =
    "usage: mpiexec -n P h5_pieces [options] FILE\n"
    "Writes a dataset of P*N*B doubles with parallel HDF5, one H5Dwrite of a\n"
    "B-element hyperslab per block, block i by rank i % P, then reads every\n"
    "block back the same way and checks it.\n"
    "  -b, --block B         elements per block (default 64)\n"
    "  -n, --blocks N        blocks per rank (default 1024)\n"
    "  -c, --collective      collective transfers (H5FD_MPIO_COLLECTIVE);\n"
    "                        default independent (H5FD_MPIO_INDEPENDENT)\n"
    "  -r, --repetitions R   write and read R times, report the medians (default 1)\n"
    "  -s, --seed S          seed of the values, 0..65535 (default 1)\n"
    "  -k, --keep            keep FILE (the last repetition's); default: remove it\n"
    "      --chunked C       a chunked dataset of C-element chunks with HDF5's\n"
    "                        default fill settings (fill values written at its\n"
    "                        creation, then a barrier, then the blocks); default\n"
    "                        contiguous, never filled\n"
    "      --csv             one CSV header and row (tcio_bench's columns)\n"
    "  -h, --help            this text\n";

/* The value of element E of the dataset: the owner rank and the seed are in
 * it, so a block in the wrong place or from another run is caught.  Exact
 * in a double (E < 2^33, SEED < 2^16, OWNER/8 with OWNER < 2^16). */
static double value_of(long long e, int owner, long seed)
{
    return ldexp((double)seed, 36) + (double)e + (double)owner / 8.0;
}

static const char *parse(int argc, char **argv, options *o)
{
    static const struct option longopts[] = {
        { "block", required_argument, NULL, 'b' },
        { "blocks", required_argument, NULL, 'n' },
        { "collective", no_argument, NULL, 'c' },
        { "repetitions", required_argument, NULL, 'r' },
        { "seed", required_argument, NULL, 's' },
        { "keep", no_argument, NULL, 'k' },
        { "chunked", required_argument, NULL, 'C' },
        { "csv", no_argument, NULL, BENCH_OPT_CSV },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    *o = (options){ .block = 64, .blocks = 1024, .reps = 1, .seed = 1 };
    int c;
    char *end;
    opterr = 0;   /* rank 0 alone reports, through bench_usage_exit */
    while ((c = getopt_long(argc, argv, "b:n:cr:s:kh", longopts, NULL)) != -1) {
        long v = 0;
        if (c == 'b' || c == 'n' || c == 'r' || c == 's' || c == 'C') {
            v = strtol(optarg, &end, 10);
            if (end == optarg || *end != '\0')
                return "a number was expected";
        }
        switch (c) {
        case 'b': if (v < 1 || v > (1L << 24)) return "-b: 1 to 16777216 elements"; o->block = v; break;
        case 'n': if (v < 1 || v > (1L << 24)) return "-n: 1 to 16777216 blocks"; o->blocks = v; break;
        case 'r': if (v < 1 || v > 100) return "-r: 1 to 100 repetitions"; o->reps = (int)v; break;
        case 's': if (v < 0 || v > 65535) return "-s: 0 to 65535"; o->seed = v; break;
        case 'c': o->collective = true; break;
        case 'k': o->keep = true; break;
        case 'C': if (v < 1 || v > (1L << 24)) return "--chunked: 1 to 16777216 elements"; o->chunk = v; break;
        case BENCH_OPT_CSV: o->csv = true; break;
        case 'h': o->help = true; return NULL;
        default: return bench_getopt_problem(argc, argv);
        }
    }
    if (optind != argc - 1)
        return optind >= argc ? "FILE is missing" : "one FILE only";
    o->file = argv[optind];
    return NULL;
}

/* Stop every rank with a message: a failed HDF5 or MPI call leaves nothing
 * worth measuring (HDF5 has printed its error stack already). */
static void die(const char *what)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "h5_pieces: rank %d: %s failed\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#define H5_CHECK(call) do { if ((call) < 0) die(#call); } while (0)

/* The access property list of HDF5's MPI-IO driver on MPI_COMM_WORLD. */
static hid_t mpio_fapl(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0)
        die("H5Pcreate(H5P_FILE_ACCESS)");
    H5_CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
    return fapl;
}

/* Move this rank's blocks, one H5Dwrite or H5Dread each, between the file
 * and BUF (its blocks one after another). */
static void move_blocks(hid_t dset, hid_t dxpl, const options *o, int rank, double *buf,
                        bool writing)
{
    hid_t filespace = H5Dget_space(dset);
    hsize_t count = (hsize_t)o->block;
    hid_t memspace = H5Screate_simple(1, &count, NULL);
    if (filespace < 0 || memspace < 0)
        die("H5Dget_space/H5Screate_simple");
    int nprocs;
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (long k = 0; k < o->blocks; k++) {
        hsize_t start = ((hsize_t)k * (hsize_t)nprocs + (hsize_t)rank) * (hsize_t)o->block;
        H5_CHECK(H5Sselect_hyperslab(filespace, H5S_SELECT_SET, &start, NULL, &count, NULL));
        double *piece = buf + k * o->block;
        if (writing)
            H5_CHECK(H5Dwrite(dset, H5T_NATIVE_DOUBLE, memspace, filespace, dxpl, piece));
        else
            H5_CHECK(H5Dread(dset, H5T_NATIVE_DOUBLE, memspace, filespace, dxpl, piece));
    }
    H5Sclose(memspace);
    H5Sclose(filespace);
}

static void write_file(const options *o, int rank, int nprocs, double *buf, hid_t dxpl)
{
    hid_t fapl = mpio_fapl();
    hid_t file = H5Fcreate(o->file, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (file < 0)
        die("H5Fcreate");
    hsize_t dims = (hsize_t)nprocs * (hsize_t)o->blocks * (hsize_t)o->block;
    hid_t space = H5Screate_simple(1, &dims, NULL);
    /* Never fill: parallel HDF5 allocates the whole dataset at creation,
     * and a fill value (one set by the user, or H5D_FILL_TIME_ALLOC) would
     * be written there to every element, collectively, before the pieces.
     * HDF5's default writes none either; saying so keeps the measurement
     * of the pieces alone whatever the library's defaults. */
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (space < 0 || dcpl < 0)
        die("H5Screate_simple/H5Pcreate");
    /* --chunked: HDF5's defaults, under which parallel HDF5 writes the
     * chunks' fill values at the creation, collectively, and orders them
     * before the blocks with a bare MPI_Barrier (the MPI-IO interposer's
     * barrier flush, doc/mpiio.md). */
    if (o->chunk > 0) {
        hsize_t chunk = (hsize_t)o->chunk < dims ? (hsize_t)o->chunk : dims;
        H5_CHECK(H5Pset_chunk(dcpl, 1, &chunk));
    } else {
        H5_CHECK(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER));
    }
    hid_t dset = H5Dcreate2(file, DATASET, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl,
                            H5P_DEFAULT);
    if (dset < 0)
        die("H5Dcreate2");
    move_blocks(dset, dxpl, o, rank, buf, true);
    H5_CHECK(H5Dclose(dset));
    H5Pclose(dcpl);
    H5Sclose(space);
    H5_CHECK(H5Fclose(file));
    H5Pclose(fapl);
}

static void read_file(const options *o, int rank, double *buf, hid_t dxpl)
{
    hid_t fapl = mpio_fapl();
    hid_t file = H5Fopen(o->file, H5F_ACC_RDONLY, fapl);
    if (file < 0)
        die("H5Fopen");
    hid_t dset = H5Dopen2(file, DATASET, H5P_DEFAULT);
    if (dset < 0)
        die("H5Dopen2");
    move_blocks(dset, dxpl, o, rank, buf, false);
    H5_CHECK(H5Dclose(dset));
    H5_CHECK(H5Fclose(file));
    H5Pclose(fapl);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    options o;
    const char *problem = parse(argc, argv, &o);
    int status = bench_usage_exit(o.help, "h5_pieces", problem, usage_text);
    if (status >= 0)
        return status;
    if ((long long)nprocs * o.blocks * o.block >= (1LL << 33) || nprocs > 65535) {
        if (rank == 0)
            fprintf(stderr, "h5_pieces: P*N*B must stay below 2^33 elements\n");
        MPI_Finalize();
        return 2;
    }

    size_t mine = (size_t)o.blocks * (size_t)o.block;
    double *out = malloc(mine * sizeof *out), *in = malloc(mine * sizeof *in);
    double *write_s = malloc((size_t)o.reps * sizeof *write_s);
    double *read_s = malloc((size_t)o.reps * sizeof *read_s);
    if (!out || !in || !write_s || !read_s)
        die("malloc");
    for (long k = 0; k < o.blocks; k++)
        for (long j = 0; j < o.block; j++) {
            long long e = ((long long)k * nprocs + rank) * o.block + j;
            out[k * o.block + j] = value_of(e, rank, o.seed);
        }
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (dxpl < 0)
        die("H5Pcreate(H5P_DATASET_XFER)");
    H5_CHECK(H5Pset_dxpl_mpio(dxpl, o.collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT));

    bool verified = true;
    for (int r = 0; r < o.reps; r++) {
        double t0 = bench_start();
        write_file(&o, rank, nprocs, out, dxpl);
        write_s[r] = bench_stop(t0);
        memset(in, 0, mine * sizeof *in);
        t0 = bench_start();
        read_file(&o, rank, in, dxpl);
        read_s[r] = bench_stop(t0);
        bool ok = true;
        for (size_t i = 0; i < mine && ok; i++)
            if (in[i] != out[i]) {
                long k = (long)(i / (size_t)o.block);
                fprintf(stderr, "h5_pieces: rank %d, repetition %d: element %zu of block %ld "
                        "(dataset index %lld) read %.17g, expected %.17g\n", rank, r + 1,
                        i % (size_t)o.block, (long)(k * nprocs + rank),
                        ((long long)k * nprocs + rank) * o.block + (long long)(i % (size_t)o.block),
                        in[i], out[i]);
                ok = false;
            }
        verified = bench_all_true(ok) && verified;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0 && !(o.keep && r == o.reps - 1))
            remove(o.file);
    }

    bench_result res = {
        .bytes = (double)nprocs * (double)mine * sizeof(double),
        .write_s = bench_median(write_s, o.reps),
        .read_s = bench_median(read_s, o.reps),
        .peak_rss_mib = bench_max_peak_rss_mib(),
        .verified = verified,
    };
    bench_row row = {
        .method = o.collective ? "hdf5-collective" : "hdf5-independent",
        .nprocs = nprocs, .num_array = 1, .types = "d",
        .len_array = (long)mine, .size_access = o.block,
    };
    if (rank == 0) {
        unsigned maj, min, rel;
        H5get_libversion(&maj, &min, &rel);
        if (!o.csv)
            printf("HDF5 %u.%u.%u, %s H5Dwrite/H5Dread of %ld doubles per block, "
                   "%d repetition%s (medians)\n", maj, min, rel,
                   o.collective ? "collective" : "independent", o.block, o.reps,
                   o.reps == 1 ? "" : "s");
        bench_report(stdout, o.csv, &row, &res);
    }
    H5Pclose(dxpl);
    free(out);
    free(in);
    free(write_s);
    free(read_s);
    MPI_Finalize();
    return verified ? 0 : 1;
}
