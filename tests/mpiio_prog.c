/* mpiio_prog.c - a plain MPI-IO program (no tcio_ call) for the MPI-IO
 * interposer's test, tests/mpiio.sh: it passes without the interposer
 * and must pass the same under LD_PRELOAD=libtcio_mpiio.so.
 *
 *   mpiio_prog DIR MODE      MODE: plain (no interposer) or interposed
 *
 * Every check compares the file's bytes, read with POSIX calls by rank 0
 * after the file is closed, against a reference built in memory from the
 * same pieces.  The MODE only changes what a shared-pointer write must do
 * (succeed plainly, be refused under the interposer); the error classes of
 * bad input are printed ("classes: ...") for the script to compare
 * between the two runs. */
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int rank, nprocs, failures;
static const char *dir;
static int interposed;

#define CHECK(cond, ...)                                               \
    do {                                                               \
        if (!(cond)) {                                                 \
            fprintf(stderr, "mpiio_prog: rank %d: %s:%d: ", rank, __func__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                              \
            fputc('\n', stderr);                                       \
            failures++;                                                \
        }                                                              \
    } while (0)
#define OK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)

#ifdef MPIIO_PROG_WRAP_MALLOC
/* The --wrap build: with MPIIO_PROG_NO_CACHE set, every allocation of
 * 64 KiB by this program's objects fails, the interposer's read cache
 * (mpiio/data.c, TMI_CACHE_BYTES) among them; small reads must then
 * still get their bytes.  libtcio and the MPI library are shared
 * libraries and allocate through the real malloc. */
static long failed_allocations;   /* said at the end: the test needs some */
void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size)
{
    static int no_cache = -1;
    if (no_cache < 0)
        no_cache = getenv("MPIIO_PROG_NO_CACHE") != NULL;
    if (no_cache && size == 64 * 1024) {
        failed_allocations++;
        return NULL;
    }
    return __real_malloc(size);
}
#endif

static unsigned char pat(long long o, int round)
{
    return (unsigned char)(((unsigned long long)o * 2654435761u >> 11) + 17 * round + 1);
}

static void path(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/mpiio-%s.dat", dir, name);
}

/* Rank 0: the file NAME must hold exactly REF (LEN bytes). */
static void compare_file(const char *name, const unsigned char *ref, long long len)
{
    if (rank != 0)
        return;
    char p[4096];
    path(p, sizeof p, name);
    int fd = open(p, O_RDONLY);
    CHECK(fd >= 0, "cannot open %s", p);
    if (fd < 0)
        return;
    struct stat st;
    fstat(fd, &st);
    CHECK(st.st_size == len, "%s: size %lld, expected %lld", name, (long long)st.st_size, len);
    unsigned char *got = calloc(len + 1, 1);
    ssize_t n = pread(fd, got, len, 0);
    close(fd);
    CHECK(n == len, "%s: read %zd of %lld bytes", name, n, len);
    for (long long i = 0; i < len && n == len; i++)
        if (got[i] != ref[i]) {
            CHECK(0, "%s: byte %lld is %u, expected %u", name, i, got[i], ref[i]);
            break;
        }
    free(got);
}

/* Whether this run is Open MPI's own MPI-IO (ompio), without the
 * interposer: a few of its answers differ from MPI's and are not checked. */
static int plain_open_mpi(void)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen;
    MPI_Get_library_version(version, &vlen);
    return !interposed && strstr(version, "Open MPI") != NULL;
}

static MPI_File open_world(const char *name, int amode)
{
    char p[4096];
    MPI_File fh;
    path(p, sizeof p, name);
    if (rank == 0)
        unlink(p);
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_open(MPI_COMM_WORLD, p, amode, MPI_INFO_NULL, &fh));
    return fh;
}

/* ---- random pieces at offsets and through the individual pointer ---- */
enum { NPIECES = 400 };
static long long poff[NPIECES], plen[NPIECES];
static int powner[NPIECES];   /* -1: a hole nobody writes */

static void make_pieces(void)
{
    unsigned s = 12345;   /* a fixed seed: every rank makes the same list */
    long long o = 0;
    for (int i = 0; i < NPIECES; i++) {
        s = s * 1103515245u + 12345u;
        poff[i] = o;
        plen[i] = 1 + (s >> 16) % 300;
        powner[i] = i % 5 == 4 ? -1 : i % nprocs;
        o += plen[i];
    }
}

static void test_pieces(void)
{
    MPI_File fh = open_world("pieces", MPI_MODE_RDWR | MPI_MODE_CREATE);
    make_pieces();
    long long end = 0;
    for (int i = 0; i < NPIECES; i++)
        if (powner[i] >= 0)
            end = poff[i] + plen[i];
    unsigned char *ref = calloc(end, 1);
    unsigned char *buf = malloc(2 * 300), *back = malloc(2 * 300);
    MPI_Datatype strided;   /* every other byte of a buffer */
    MPI_Status st;
    int count;
    for (int i = 0; i < NPIECES; i++) {
        if (powner[i] < 0)
            continue;
        for (long long k = 0; k < plen[i]; k++)
            ref[poff[i] + k] = pat(poff[i] + k, 0);
        if (powner[i] != rank)
            continue;
        switch (i / nprocs % 3) {
        case 0:
            OK(MPI_File_write_at(fh, poff[i], ref + poff[i], (int)plen[i], MPI_BYTE, &st));
            break;
        case 1:
            OK(MPI_File_seek(fh, poff[i], MPI_SEEK_SET));
            OK(MPI_File_write(fh, ref + poff[i], (int)plen[i], MPI_CHAR, &st));
            MPI_Offset pos;
            OK(MPI_File_get_position(fh, &pos));
            CHECK(pos == poff[i] + plen[i], "position %lld after a write, expected %lld",
                  (long long)pos, poff[i] + plen[i]);
            break;
        default:   /* a non-contiguous memory datatype */
            for (long long k = 0; k < plen[i]; k++)
                buf[2 * k] = ref[poff[i] + k];
            MPI_Type_vector((int)plen[i], 1, 2, MPI_BYTE, &strided);
            MPI_Type_commit(&strided);
            OK(MPI_File_write_at(fh, poff[i], buf, 1, strided, &st));
            MPI_Type_free(&strided);
            break;
        }
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == plen[i], "write count %d, expected %lld", count, plen[i]);
        /* read your writes, at once */
        memset(back, 0, plen[i]);
        OK(MPI_File_read_at(fh, poff[i], back, (int)plen[i], MPI_BYTE, &st));
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == plen[i], "read count %d, expected %lld", count, plen[i]);
        CHECK(memcmp(back, ref + poff[i], plen[i]) == 0, "piece %d read back wrong", i);
    }
    /* MPI's sync-barrier-sync: then another rank's writes are readable */
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    MPI_Offset size;
    OK(MPI_File_get_size(fh, &size));
    CHECK(size == end, "size %lld after sync, expected %lld", (long long)size, end);
    int other = (rank + 1) % nprocs;
    for (int i = 0; i < NPIECES; i++) {
        if (powner[i] != other && !(powner[i] < 0 && rank == 0))
            continue;
        OK(MPI_File_seek(fh, poff[i], MPI_SEEK_SET));
        memset(back, 0xee, plen[i]);
        OK(MPI_File_read(fh, back, (int)plen[i], MPI_BYTE, &st));
        if (poff[i] + plen[i] <= end)
            CHECK(memcmp(back, ref + poff[i], plen[i]) == 0, "piece %d of rank %d wrong", i,
                  powner[i]);
    }
    /* a read past the end: a short count */
    OK(MPI_File_read_at(fh, end - 10, back, 100, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == 10, "read across the end: count %d, expected 10", count);
    CHECK(memcmp(back, ref + end - 10, 10) == 0, "read across the end: wrong bytes");
    OK(MPI_File_read_at(fh, end + 5, back, 8, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == 0, "read past the end: count %d, expected 0", count);
    /* a second round over part of the pieces */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < NPIECES; i += 3) {
        if (powner[i] < 0)
            continue;
        long long h = plen[i] / 2;
        for (long long k = 0; k < h; k++)
            ref[poff[i] + k] = pat(poff[i] + k, 1);
        if (powner[i] == rank)
            OK(MPI_File_write_at(fh, poff[i], ref + poff[i], (int)h, MPI_BYTE, &st));
    }
    OK(MPI_File_close(&fh));
    compare_file("pieces", ref, end);
    free(ref);
    free(buf);
    free(back);
}

/* ---- one element per call, the paper's interleaved pattern: the
 * interposer's small-access path and its read cache.  Through a
 * contiguous view with a displacement and etype MPI_INT, rank r owns
 * records (int, double) k*nprocs + r; it reads them back one element at a
 * time while rewriting records just ahead of its reads (read-your-writes
 * through a cache block it has filled), through offsets and through the
 * individual pointer; after sync-barrier-sync it reads its neighbour's
 * records. ---- */
enum { NRECORDS = 2000, RECORD_INTS = 3, VIEW_DISP = 20 };

static int rec_int(int r, int k, int round) { return (r + 1) * 1000003 + k * 7 + round * 11; }
static double rec_double(int r, int k, int round) { return (r + 1) * 0.5 + k * 0.25 + round; }

static void put_record(unsigned char *ref, int r, int k, int round)
{
    long long at = VIEW_DISP + ((long long)k * nprocs + r) * RECORD_INTS * 4;
    int i = rec_int(r, k, round);
    double d = rec_double(r, k, round);
    memcpy(ref + at, &i, 4);
    memcpy(ref + at + 4, &d, 8);
}

static void test_elements(void)
{
    MPI_File fh = open_world("elements", MPI_MODE_RDWR | MPI_MODE_CREATE);
    OK(MPI_File_set_view(fh, VIEW_DISP, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    long long len = VIEW_DISP + (long long)NRECORDS * nprocs * RECORD_INTS * 4;
    unsigned char *ref = calloc(len, 1);
    int round_of[NRECORDS] = { 0 };
    MPI_Status st;
    int count;
    for (int r = 0; r < nprocs; r++)
        for (int k = 0; k < NRECORDS; k++)
            put_record(ref, r, k, 0);
    for (int k = 0; k < NRECORDS; k++) {
        MPI_Offset at = ((MPI_Offset)k * nprocs + rank) * RECORD_INTS;
        int i = rec_int(rank, k, 0);
        double d = rec_double(rank, k, 0);
        OK(MPI_File_write_at(fh, at, &i, 1, MPI_INT, &st));
        OK(MPI_File_write_at(fh, at + 1, &d, 1, MPI_DOUBLE, &st));
    }
    /* Read back; every fifth record, rewrite the one three ahead first. */
    for (int k = 0; k < NRECORDS; k++) {
        if (k % 5 == 0 && k + 3 < NRECORDS) {
            int j = k + 3, i = rec_int(rank, j, 1);
            double d = rec_double(rank, j, 1);
            MPI_Offset at = ((MPI_Offset)j * nprocs + rank) * RECORD_INTS;
            OK(MPI_File_seek(fh, at, MPI_SEEK_SET));
            OK(MPI_File_write(fh, &i, 1, MPI_INT, &st));
            OK(MPI_File_write(fh, &d, 1, MPI_DOUBLE, &st));
            round_of[j] = 1;
            put_record(ref, rank, j, 1);
        }
        MPI_Offset at = ((MPI_Offset)k * nprocs + rank) * RECORD_INTS;
        int i = -1;
        double d = -1;
        if (k % 2) {
            OK(MPI_File_read_at(fh, at, &i, 1, MPI_INT, &st));
            OK(MPI_File_read_at(fh, at + 1, &d, 1, MPI_DOUBLE, &st));
        } else {
            OK(MPI_File_seek(fh, at, MPI_SEEK_SET));
            OK(MPI_File_read(fh, &i, 1, MPI_INT, &st));
            OK(MPI_File_read(fh, &d, 1, MPI_DOUBLE, &st));
            MPI_Offset pos;
            OK(MPI_File_get_position(fh, &pos));
            CHECK(pos == at + RECORD_INTS, "position %lld after a record, expected %lld",
                  (long long)pos, (long long)(at + RECORD_INTS));
        }
        MPI_Get_count(&st, MPI_DOUBLE, &count);
        CHECK(count == 1, "record %d: count %d, expected 1", k, count);
        CHECK(i == rec_int(rank, k, round_of[k]) && d == rec_double(rank, k, round_of[k]),
              "record %d read back as (%d, %g), expected round %d", k, i, d, round_of[k]);
    }
    /* sync-barrier-sync: the neighbour's records, one element at a time */
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    int other = (rank + 1) % nprocs, other_round[NRECORDS] = { 0 };
    for (int k = 0; k + 3 < NRECORDS; k += 5)
        other_round[k + 3] = 1;
    for (int r = 0; r < nprocs; r++)
        for (int k = 0; k + 3 < NRECORDS; k += 5)
            put_record(ref, r, k + 3, 1);
    for (int k = 0; k < NRECORDS; k++) {
        MPI_Offset at = ((MPI_Offset)k * nprocs + other) * RECORD_INTS;
        int i = -1;
        double d = -1;
        OK(MPI_File_read_at(fh, at, &i, 1, MPI_INT, &st));
        OK(MPI_File_read_at(fh, at + 1, &d, 1, MPI_DOUBLE, &st));
        CHECK(i == rec_int(other, k, other_round[k]) &&
              d == rec_double(other, k, other_round[k]),
              "rank %d's record %d read as (%d, %g)", other, k, i, d);
    }
    OK(MPI_File_close(&fh));
    compare_file("elements", ref, len);
    free(ref);
}

/* ---- files on communicators the program makes and frees, as HDF5 and
 * PnetCDF do (a duplicate per file): three files one after the other,
 * each on a new duplicate freed after its close; two files open at once
 * on two duplicates; a file on each half of the ranks.  Each rank writes
 * its blocks, the files are compared with POSIX reads. ---- */
enum { COMM_BLOCK = 1000, COMM_BLOCKS = 6 };

static void write_blocks(MPI_Comm comm, const char *name, int round)
{
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    char p[4096];
    path(p, sizeof p, name);
    if (r == 0)
        unlink(p);
    MPI_Barrier(comm);
    MPI_File fh;
    OK(MPI_File_open(comm, p, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    unsigned char buf[COMM_BLOCK];
    for (int b = 0; b < COMM_BLOCKS; b++) {
        long long at = ((long long)b * n + r) * COMM_BLOCK;
        for (int k = 0; k < COMM_BLOCK; k++)
            buf[k] = pat(at + k, round);
        OK(MPI_File_write_at(fh, at, buf, COMM_BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    OK(MPI_File_close(&fh));
}

static void compare_blocks(const char *name, int n, int round, int root)
{
    if (rank != root)
        return;
    long long len = (long long)COMM_BLOCKS * n * COMM_BLOCK;
    unsigned char *ref = malloc(len);
    for (long long i = 0; i < len; i++)
        ref[i] = pat(i, round);
    int saved = rank;
    rank = 0;                 /* compare_file works on rank 0 */
    compare_file(name, ref, len);
    rank = saved;
    free(ref);
}

static void test_comms(void)
{
    char name[64];
    for (int i = 0; i < 3; i++) {
        MPI_Comm c;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        snprintf(name, sizeof name, "comms-dup%d", i);
        write_blocks(c, name, i);
        MPI_Comm_free(&c);
        compare_blocks(name, nprocs, i, 0);
    }
    /* two at once: the second cannot share the first's libtcio state */
    MPI_Comm a, b;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &b));
    char pa[4096], pb[4096];
    path(pa, sizeof pa, "comms-a");
    path(pb, sizeof pb, "comms-b");
    if (rank == 0) {
        unlink(pa);
        unlink(pb);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fa, fb;
    OK(MPI_File_open(a, pa, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fa));
    OK(MPI_File_open(b, pb, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fb));
    unsigned char buf[COMM_BLOCK];
    for (int k = 0; k < COMM_BLOCKS; k++) {
        long long at = ((long long)k * nprocs + rank) * COMM_BLOCK;
        for (int j = 0; j < COMM_BLOCK; j++)
            buf[j] = pat(at + j, 5);
        OK(MPI_File_write_at(fa, at, buf, COMM_BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
        for (int j = 0; j < COMM_BLOCK; j++)
            buf[j] = pat(at + j, 6);
        OK(MPI_File_write_at(fb, at, buf, COMM_BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    OK(MPI_File_close(&fa));
    MPI_Comm_free(&a);
    OK(MPI_File_close(&fb));
    MPI_Comm_free(&b);
    compare_blocks("comms-a", nprocs, 5, 0);
    compare_blocks("comms-b", nprocs, 6, 0);
    /* halves: another group of ranks, twice (the second finds the first's) */
    MPI_Comm half;
    int color = rank % 2;
    OK(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half));
    int hn;
    MPI_Comm_size(half, &hn);
    for (int i = 0; i < 2; i++) {
        snprintf(name, sizeof name, "comms-half%d-%d", color, i);
        write_blocks(half, name, 7 + i);
        MPI_Barrier(MPI_COMM_WORLD);
        compare_blocks(name, hn, 7 + i, color);   /* rank COLOR is the half's rank 0 */
    }
    MPI_Comm_free(&half);
    /* More groups than the interposer keeps (4): the same ranks in five
     * more orders (each a group of its own to MPI_Comm_compare: SIMILAR,
     * not CONGRUENT), two files on each.  Those
     * without a kept communicator are opened on the program's, where
     * libtcio's own cache serves the second file. */
    for (int g = 1; g <= 5; g++) {
        /* rotations by 1 and 2, then the reversed order rotated by 0-2:
         * with 3 ranks, every order but the world's */
        int key = g <= 2 ? (rank + g) % nprocs : (nprocs - 1 - rank + g - 3) % nprocs;
        MPI_Comm c;
        OK(MPI_Comm_split(MPI_COMM_WORLD, 0, key, &c));
        for (int i = 0; i < 2; i++) {
            snprintf(name, sizeof name, "comms-order%d-%d", g, i);
            write_blocks(c, name, 10 + i);
            int r0 = -1, w = 0;
            MPI_Comm_rank(c, &w);
            int me = w == 0 ? rank : -1;
            MPI_Allreduce(&me, &r0, 1, MPI_INT, MPI_MAX, c);
            compare_blocks(name, nprocs, 10 + i, r0);
        }
        MPI_Comm_free(&c);
    }
}

/* ---- a view: etype MPI_INT, a vector filetype; collective, split and
 * nonblocking calls through it ---- */
enum { VB = 7, VTILES = 30 };

/* The file int index of stream element K of rank R. */
static long long view_index(int r, long long k)
{
    long long t = k / (2 * VB), j = k % (2 * VB);
    return t * 2 * VB * nprocs + j / VB * VB * nprocs + (long long)r * VB + j % VB;
}

static void test_view(void)
{
    MPI_File fh = open_world("view", MPI_MODE_RDWR | MPI_MODE_CREATE);
    MPI_Datatype vec, ft;
    MPI_Type_vector(2, VB, VB * nprocs, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)2 * VB * nprocs * sizeof(int), &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&vec);
    OK(MPI_File_set_view(fh, (MPI_Offset)rank * VB * sizeof(int), MPI_INT, ft, "native",
                         MPI_INFO_NULL));
    MPI_Type_free(&ft);   /* the view must outlive the program's datatype */
    long long n = (long long)VTILES * 2 * VB;   /* stream elements per rank */
    int *mine = malloc(n * sizeof *mine), *back = malloc(n * sizeof *back);
    for (long long k = 0; k < n; k++)
        mine[k] = (int)view_index(rank, k);
    /* quarters: write_all, write_at_all, split, nonblocking */
    long long q = n / 4;
    MPI_Status st;
    MPI_Request req;
    int count;
    OK(MPI_File_write_all(fh, mine, (int)q, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == q, "write_all count %d", count);
    OK(MPI_File_write_at_all(fh, q, mine + q, (int)q, MPI_INT, &st));
    OK(MPI_File_seek(fh, 2 * q, MPI_SEEK_SET));
    OK(MPI_File_write_all_begin(fh, mine + 2 * q, (int)q, MPI_INT));
    OK(MPI_File_write_all_end(fh, mine + 2 * q, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == q, "split write count %d", count);
    OK(MPI_File_iwrite(fh, mine + 3 * q, (int)(n - 3 * q), MPI_INT, &req));
    OK(MPI_Wait(&req, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == n - 3 * q, "iwrite count %d", count);
    MPI_Offset pos, byte;
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == n, "position %lld, expected %lld", (long long)pos, n);
    OK(MPI_File_get_byte_offset(fh, 5 * VB / 2, &byte));
    CHECK(byte == view_index(rank, 5 * VB / 2) * (long long)sizeof(int),
          "byte offset %lld, expected %lld", (long long)byte,
          view_index(rank, 5 * VB / 2) * (long long)sizeof(int));
    /* read back: read_at_all, iread_at, read_all_begin/end */
    memset(back, 0, n * sizeof *back);
    OK(MPI_File_read_at_all(fh, 0, back, (int)q, MPI_INT, &st));
    OK(MPI_File_iread_at(fh, q, back + q, (int)q, MPI_INT, &req));
    OK(MPI_Wait(&req, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == q, "iread_at count %d", count);
    OK(MPI_File_seek(fh, 2 * q, MPI_SEEK_SET));
    OK(MPI_File_read_all_begin(fh, back + 2 * q, (int)(n - 2 * q), MPI_INT));
    OK(MPI_File_read_all_end(fh, back + 2 * q, &st));
    CHECK(memcmp(back, mine, n * sizeof *back) == 0, "the view's ints read back wrong");
    OK(MPI_File_close(&fh));
    long long total = (long long)VTILES * 2 * VB * nprocs;
    int *ref = malloc(total * sizeof *ref);
    for (long long i = 0; i < total; i++)
        ref[i] = (int)i;
    compare_file("view", (unsigned char *)ref, total * (long long)sizeof(int));
    free(ref);
    free(mine);
    free(back);
}

/* ---- a view and memory type built on MPI_Type_create_f90_real ----
 * Such types are predefined and may not be freed (MPI-3.1, 17.1.9): the
 * interposer's walk of the filetype freed them as derived ones, and Open
 * MPI raised MPI_ERR_TYPE on MPI_COMM_WORLD, aborting the job.  Each rank
 * writes every nprocs-th real of the file (a vector filetype), two at a
 * time (a contiguous memory type), and reads them back. */
static void test_f90(void)
{
    MPI_Datatype real15 = MPI_DATATYPE_NULL, vec, ft, pair;
    int size = 0;
    if (MPI_Type_create_f90_real(15, MPI_UNDEFINED, &real15) == MPI_SUCCESS)
        MPI_Type_size(real15, &size);
    int usable = size == 8, all;
    MPI_Allreduce(&usable, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        if (rank == 0)
            printf("mpiio_prog: MPI_Type_create_f90_real(15) is no 8-byte real here: f90 "
                   "skipped\n");
        return;
    }
    enum { REALS = 16 };        /* per rank */
    MPI_File fh = open_world("f90", MPI_MODE_RDWR | MPI_MODE_CREATE);
    MPI_Type_vector(2, 1, nprocs, real15, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)2 * nprocs * 8, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&vec);
    MPI_Type_contiguous(2, real15, &pair);
    MPI_Type_commit(&pair);
    OK(MPI_File_set_view(fh, (MPI_Offset)rank * 8, real15, ft, "native", MPI_INFO_NULL));
    double mine[REALS], back[REALS];
    for (int k = 0; k < REALS; k++)
        mine[k] = (double)(k * nprocs + rank);     /* the real's index in the file */
    MPI_Status st;
    OK(MPI_File_write_all(fh, mine, REALS / 2, pair, &st));
    memset(back, 0, sizeof back);
    OK(MPI_File_read_at_all(fh, 0, back, REALS / 2, pair, &st));
    CHECK(memcmp(back, mine, sizeof back) == 0, "the f90 reals read back wrong");
    OK(MPI_File_close(&fh));
    MPI_Type_free(&ft);
    MPI_Type_free(&pair);
    long long total = (long long)REALS * nprocs;
    double *ref = malloc(total * sizeof *ref);
    for (long long i = 0; i < total; i++)
        ref[i] = (double)i;
    compare_file("f90", (unsigned char *)ref, total * (long long)sizeof(double));
    free(ref);
}

/* ---- set_size up and down, preallocate ---- */
static void test_size(void)
{
    MPI_File fh = open_world("size", MPI_MODE_RDWR | MPI_MODE_CREATE);
    enum { B = 1000 };
    long long big = (long long)B * nprocs * 3, cut = (long long)B * nprocs - 123;
    unsigned char *ref = calloc(big, 1), buf[B];
    MPI_Offset size;
    MPI_Status st;
    for (long long i = 0; i < (long long)B * nprocs; i++)
        ref[i] = pat(i, 2);
    OK(MPI_File_write_at(fh, (MPI_Offset)rank * B, ref + rank * B, B, MPI_BYTE, &st));
    /* HDF5's way: barrier, the size on rank 0, a collective set_size */
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_set_size(fh, big));
    OK(MPI_File_get_size(fh, &size));
    CHECK(size == big, "size %lld after set_size up, expected %lld", (long long)size, big);
    OK(MPI_File_read_at(fh, big - B, buf, B, MPI_BYTE, &st));
    int zeros = 1;
    for (int i = 0; i < B; i++)
        zeros &= buf[i] == 0;
    CHECK(zeros, "the extension does not read as zeros");
    /* A collective set_size may change the file before every rank has
     * entered it (Open MPI's ompio truncates at once): a rank still
     * checking the size above would see the cut. */
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_set_size(fh, cut));
    OK(MPI_File_get_size(fh, &size));
    CHECK(size == cut, "size %lld after set_size down, expected %lld", (long long)size, cut);
    /* Open MPI 4.1's ompio preallocate is left out without the
     * interposer: it extends the file past the size asked for, not with
     * zeros, differently on each rank, and a set_size after it fails. */
    long long end = cut;
    if (!plain_open_mpi()) {
        end = cut + 10;
        MPI_Barrier(MPI_COMM_WORLD);   /* as before the cut */
        OK(MPI_File_preallocate(fh, end));
        OK(MPI_File_get_size(fh, &size));
        CHECK(size == end, "size %lld after preallocate, expected %lld", (long long)size, end);
    }
    OK(MPI_File_close(&fh));
    memset(ref + cut, 0, end - cut);
    compare_file("size", ref, end);
    free(ref);
}

/* Rank 0 writes COUNT elements of TYPE from BUF at offset 0, then MPI's
 * sync-barrier-sync makes them every rank's. */
static void rank0_writes_synced(MPI_File fh, const void *buf, int count, MPI_Datatype type)
{
    MPI_Status st;
    if (rank == 0)
        OK(MPI_File_write_at(fh, 0, buf, count, type, &st));
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
}

/* ---- writes of the same bytes ordered by a bare barrier ----
 * Parallel HDF5's way at a chunked dataset's creation: every rank writes
 * fill values into its chunk collectively, a barrier, then the ranks
 * write their data, each into the next rank's chunk, with no sync.  ROMIO
 * writes through, so the data wins; the interposer flushes a file at a
 * barrier over its ranks (MPI_COMM_WORLD, then a duplicate of it:
 * congruent) so that it wins there too. */
static void test_barrier_order(void)
{
    enum { C = 4096 };
    MPI_File fh = open_world("barrier", MPI_MODE_RDWR | MPI_MODE_CREATE);
    long long len = (long long)C * nprocs;
    unsigned char *ref = malloc(len), *fill = malloc(len);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Status st;
    /* Three barriers per round, each a flush: tests/mpiio.sh counts 6 per
     * rank. */
    for (int round = 0; round < 2; round++) {
        MPI_Comm comm = round == 0 ? MPI_COMM_WORLD : dup;
        for (long long i = 0; i < len; i++) {
            fill[i] = pat(i, 20 + 2 * round);
            ref[i] = pat(i, 21 + 2 * round);
        }
        MPI_Offset mine = (MPI_Offset)rank * C, next = (MPI_Offset)((rank + 1) % nprocs) * C;
        OK(MPI_File_write_at_all(fh, mine, fill + mine, C, MPI_BYTE, &st));
        MPI_Barrier(comm);
        /* After the barrier the next rank's fill reads back here too, as
         * under ROMIO (before this rank writes over it). */
        unsigned char got[C];
        OK(MPI_File_read_at(fh, next, got, C, MPI_BYTE, &st));
        CHECK(memcmp(got, fill + next, C) == 0, "round %d: the next rank's fill does not read "
              "back after the barrier", round);
        MPI_Barrier(comm);
        OK(MPI_File_write_at_all(fh, next, ref + next, C, MPI_BYTE, &st));
        MPI_Barrier(comm);
    }
    /* A barrier over other ranks than the file's flushes nothing (and
     * hangs nowhere): half the ranks each, on a communicator made after
     * the duplicate was freed, which may get its handle back (MPICH's
     * do): the interposer remembers which communicators order the file,
     * and must not take it for the duplicate. */
    MPI_Comm_free(&dup);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Barrier(half);
    MPI_Barrier(half);
    MPI_Comm_free(&half);
    OK(MPI_File_close(&fh));
    compare_file("barrier", ref, len);
    free(ref);
    free(fill);
}

/* ---- a short read that ends inside an element of a derived type ----
 * The file holds 10 bytes; a read of one 12-byte contiguous element gets
 * 10, stored at the start of the buffer as MPI stores them (the
 * interposer unpacked whole elements only, a helper's audit found). */
static void test_partial_element(void)
{
    MPI_File fh = open_world("partial", MPI_MODE_RDWR | MPI_MODE_CREATE);
    unsigned char data[10], buf[16];
    for (int i = 0; i < 10; i++)
        data[i] = pat(i, 30);
    MPI_Status st;
    rank0_writes_synced(fh, data, 10, MPI_BYTE);
    MPI_Datatype twelve;
    OK(MPI_Type_contiguous(12, MPI_BYTE, &twelve));
    OK(MPI_Type_commit(&twelve));
    memset(buf, '.', sizeof buf);
    OK(MPI_File_read_at(fh, 0, buf, 1, twelve, &st));
    int got = -1;
    MPI_Get_count(&st, MPI_BYTE, &got);
    CHECK(got == 10, "read of one 12-byte element from a 10-byte file: %d bytes, expected 10",
          got);
    CHECK(memcmp(buf, data, 10) == 0, "the 10 bytes read are not in the buffer");
    CHECK(buf[10] == '.' && buf[11] == '.' && buf[12] == '.',
          "bytes past the 10 read were changed");
    OK(MPI_Type_free(&twelve));
    OK(MPI_File_close(&fh));
    compare_file("partial", data, 10);
}

/* ---- a handle opened on MPI_COMM_SELF before the collective open ----
 * Each rank holds the file open on MPI_COMM_SELF (not served) when all
 * open it on MPI_COMM_WORLD: that open is not served either, so that its
 * reads see what the MPI_COMM_SELF handle of rank 0 writes after MPI's
 * sync-barrier-sync (a served handle kept the bytes it had loaded: a
 * helper's audit). */
static void test_self_first(void)
{
    enum { N = 64 };
    char p[4096];
    path(p, sizeof p, "self-first");
    if (rank == 0)
        unlink(p);
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned char first[N], second[N], got[N];
    for (int i = 0; i < N; i++) {
        first[i] = pat(i, 40);
        second[i] = pat(i, 41);
    }
    MPI_File self, all;
    MPI_Status st;
    if (rank == 0) {
        OK(MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL,
                         &self));
        OK(MPI_File_write_at(self, 0, first, N, MPI_BYTE, &st));
        OK(MPI_File_sync(self));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0)
        OK(MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_RDWR, MPI_INFO_NULL, &self));
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR, MPI_INFO_NULL, &all));
    OK(MPI_File_read_at(all, 0, got, N, MPI_BYTE, &st));
    CHECK(memcmp(got, first, N) == 0, "the first bytes do not read back");
    MPI_Barrier(MPI_COMM_WORLD);   /* every rank read them before they change */
    if (rank == 0) {
        OK(MPI_File_write_at(self, 0, second, N, MPI_BYTE, &st));
        OK(MPI_File_sync(self));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(all));
    OK(MPI_File_read_at(all, 0, got, N, MPI_BYTE, &st));
    CHECK(memcmp(got, second, N) == 0, "the bytes rank 0 wrote through its MPI_COMM_SELF "
          "handle do not read back through the collective handle after sync-barrier-sync");
    OK(MPI_File_close(&all));
    OK(MPI_File_close(&self));
}

/* ---- MPI_BOTTOM with an absolute datatype ---- */
static void test_bottom(void)
{
    MPI_File fh = open_world("bottom", MPI_MODE_RDWR | MPI_MODE_CREATE);
    double a[5], b[3], ra[5] = { 0 }, rb[3] = { 0 };
    for (int i = 0; i < 5; i++)
        a[i] = rank * 100 + i;
    for (int i = 0; i < 3; i++)
        b[i] = -(rank * 100 + i);
    MPI_Aint addr[2];
    int blens[2] = { 5, 3 };
    MPI_Datatype t, rt;
    MPI_Get_address(a, &addr[0]);
    MPI_Get_address(b, &addr[1]);
    MPI_Type_create_hindexed(2, blens, addr, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    MPI_Status st;
    OK(MPI_File_write_at(fh, (MPI_Offset)rank * 8 * sizeof(double), MPI_BOTTOM, 1, t, &st));
    MPI_Get_address(ra, &addr[0]);
    MPI_Get_address(rb, &addr[1]);
    MPI_Type_create_hindexed(2, blens, addr, MPI_DOUBLE, &rt);
    MPI_Type_commit(&rt);
    OK(MPI_File_read_at(fh, (MPI_Offset)rank * 8 * sizeof(double), MPI_BOTTOM, 1, rt, &st));
    CHECK(memcmp(a, ra, sizeof a) == 0 && memcmp(b, rb, sizeof b) == 0,
          "MPI_BOTTOM read back wrong");
    MPI_Type_free(&t);
    MPI_Type_free(&rt);
    OK(MPI_File_close(&fh));
    double *ref = malloc(8 * nprocs * sizeof *ref);
    for (int r = 0; r < nprocs; r++)
        for (int i = 0; i < 8; i++)
            ref[8 * r + i] = i < 5 ? r * 100 + i : -(r * 100 + i - 5);
    compare_file("bottom", (unsigned char *)ref, 8LL * nprocs * sizeof *ref);
    free(ref);
}

/* ---- handovers: atomic mode, external32, an ordered write; each after
 * buffered writes, the individual pointer carried over ---- */
static void test_handover(const char *name)
{
    MPI_File fh = open_world(name, MPI_MODE_RDWR | MPI_MODE_CREATE);
    enum { B = 64 };
    long long region = (long long)B * nprocs;   /* ordered writes land here */
    long long len = region + 3LL * B * nprocs;
    unsigned char *ref = calloc(len, 1);
    MPI_Status st;
    for (long long i = region; i < len; i++)
        ref[i] = pat(i, 3);
    /* before: the first of two blocks through the pointer */
    long long at = region + (long long)rank * 2 * B;
    OK(MPI_File_seek(fh, at, MPI_SEEK_SET));
    OK(MPI_File_write(fh, ref + at, B, MPI_BYTE, &st));
    if (strcmp(name, "atomic") == 0) {
        OK(MPI_File_set_atomicity(fh, 1));
        int flag = 0;
        OK(MPI_File_get_atomicity(fh, &flag));
        CHECK(flag == 1, "atomicity %d after set_atomicity(1)", flag);
    } else if (strcmp(name, "external32") == 0) {
        /* the same bytes, as MPI_BYTE needs no conversion; the view is
         * what cannot be served */
        OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
        /* set_view puts the pointer at 0, handed over or not */
        MPI_Offset zero = -1;
        OK(MPI_File_get_position(fh, &zero));
        CHECK(zero == 0, "position %lld after set_view, expected 0", (long long)zero);
        OK(MPI_File_seek(fh, at + B, MPI_SEEK_SET));
    } else {
        unsigned char mine[B];
        for (long long i = 0; i < region; i++)   /* in rank order from 0 */
            ref[i] = pat(i, 4);
        memcpy(mine, ref + (long long)rank * B, B);
        OK(MPI_File_write_ordered(fh, mine, B, MPI_BYTE, &st));
        int count;
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == B, "write_ordered count %d", count);
    }
    MPI_Offset pos;
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == at + B, "position %lld after the handover, expected %lld", (long long)pos,
          at + B);
    OK(MPI_File_write(fh, ref + at + B, B, MPI_BYTE, &st));   /* after */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        OK(MPI_File_write_at(fh, len - (long long)B * nprocs, ref + len - (long long)B * nprocs,
                             B * nprocs, MPI_BYTE, &st));
    OK(MPI_File_close(&fh));
    compare_file(name, ref, len);
    free(ref);
}

/* ---- refusal: a shared-pointer write on a served file ---- */
static void test_refusal(void)
{
    MPI_File fh = open_world("shared", MPI_MODE_RDWR | MPI_MODE_CREATE);
    enum { B = 100 };
    unsigned char *ref = calloc((size_t)B * nprocs, 1), junk[B];
    MPI_Status st;
    for (long long i = 0; i < (long long)B * nprocs; i++)
        ref[i] = pat(i, 5);
    OK(MPI_File_write_at(fh, (MPI_Offset)rank * B, ref + rank * B, B, MPI_BYTE, &st));
    memset(junk, 0x5a, sizeof junk);
    int rc = MPI_File_write_shared(fh, junk, rank == 0 ? 7 : 0, MPI_BYTE, &st);
    if (interposed) {
        int cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION,
              "write_shared: class %d, expected MPI_ERR_UNSUPPORTED_OPERATION", cls);
    } else {
        CHECK(rc == MPI_SUCCESS, "write_shared failed without the interposer");
        if (rc == MPI_SUCCESS)
            memset(ref, 0x5a, 7);   /* rank 0's 7 bytes at shared pointer 0 */
    }
    if (interposed) {
        /* refused, a nonblocking call leaves a request a program can wait
         * on (MPI leaves a failed call's request undefined) */
        MPI_Request req;
        memset(&req, 0x5a, sizeof req);
        rc = MPI_File_iwrite_shared(fh, junk, 7, MPI_BYTE, &req);
        CHECK(rc != MPI_SUCCESS && req == MPI_REQUEST_NULL,
              "iwrite_shared: rc %d, request not MPI_REQUEST_NULL", rc);
        if (req == MPI_REQUEST_NULL)
            OK(MPI_Wait(&req, &st));
    }
    /* the real MPI-IO writes them at once; order it before the close */
    MPI_Barrier(MPI_COMM_WORLD);
    if (!interposed && rank == 0)
        OK(MPI_File_write_at(fh, 0, ref, 7, MPI_BYTE, &st));
    OK(MPI_File_close(&fh));
    compare_file("shared", ref, (long long)B * nprocs);
    free(ref);
}

/* ---- the program's say: info tcio_mpiio=disable (in any case) keeps a
 * file off ---- */
static void test_info_key(void)
{
    char p[4096];
    MPI_File fh;
    MPI_Info info;
    MPI_Status st;
    enum { B = 77 };
    long long len = (long long)B * nprocs;
    unsigned char *ref = malloc(len);
    for (long long i = 0; i < len; i++)
        ref[i] = pat(i, 10);
    path(p, sizeof p, "info-off");
    if (rank == 0)
        unlink(p);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Info_create(&info);
    MPI_Info_set(info, "tcio_mpiio", "Disable");
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_CREATE, info, &fh));
    MPI_Info_free(&info);
    OK(MPI_File_write_at(fh, (MPI_Offset)rank * B, ref + rank * B, B, MPI_BYTE, &st));
    OK(MPI_File_close(&fh));
    compare_file("info-off", ref, len);
    free(ref);
}

/* ---- MPI 4's large-count calls (MPICH 4; the int forms elsewhere) ---- */
static void test_large_count(void)
{
    MPI_File fh = open_world("large", MPI_MODE_RDWR | MPI_MODE_CREATE);
    enum { B = 333 };
    long long len = (long long)B * nprocs;
    unsigned char *ref = malloc(len), back[B];
    MPI_Status st;
    for (long long i = 0; i < len; i++)
        ref[i] = pat(i, 9);
#if MPI_VERSION >= 4
    MPI_Count count;
    OK(MPI_File_write_at_c(fh, (MPI_Offset)rank * B, ref + rank * B, (MPI_Count)B, MPI_BYTE,
                           &st));
    OK(MPI_File_read_at_c(fh, (MPI_Offset)rank * B, back, (MPI_Count)B, MPI_BYTE, &st));
    OK(MPI_Get_count_c(&st, MPI_BYTE, &count));
    CHECK(count == B, "read_at_c count %lld", (long long)count);
#else
    OK(MPI_File_write_at(fh, (MPI_Offset)rank * B, ref + rank * B, B, MPI_BYTE, &st));
    OK(MPI_File_read_at(fh, (MPI_Offset)rank * B, back, B, MPI_BYTE, &st));
#endif
    CHECK(memcmp(back, ref + rank * B, B) == 0, "large-count read back wrong");
    OK(MPI_File_close(&fh));
    compare_file("large", ref, len);
    free(ref);
}

/* ---- the same file opened twice on the same ranks (PnetCDF's
 * independent mode does): under the interposer the first handle is
 * handed over and the second not served; the bytes of both are right ---- */
static void test_second_open(void)
{
    MPI_File a = open_world("twice", MPI_MODE_RDWR | MPI_MODE_CREATE), b;
    enum { B = 50 };
    long long len = 2LL * B * nprocs;
    unsigned char *ref = calloc(len, 1), back[B];
    char p[4096];
    MPI_Status st;
    for (long long i = 0; i < len; i++)
        ref[i] = pat(i, 8);
    OK(MPI_File_write_at(a, (MPI_Offset)rank * B, ref + rank * B, B, MPI_BYTE, &st));
    path(p, sizeof p, "twice");
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR, MPI_INFO_NULL, &b));
    long long at = (long long)B * nprocs + (long long)rank * B;
    OK(MPI_File_write_at(b, at, ref + at, B, MPI_BYTE, &st));
    /* each handle's writes, after sync-barrier-sync, through the other */
    OK(MPI_File_sync(a));
    OK(MPI_File_sync(b));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(a));
    OK(MPI_File_sync(b));
    OK(MPI_File_read_at(a, at, back, B, MPI_BYTE, &st));
    CHECK(memcmp(back, ref + at, B) == 0, "the second handle's bytes, read through the first");
    OK(MPI_File_read_at(b, (MPI_Offset)rank * B, back, B, MPI_BYTE, &st));
    CHECK(memcmp(back, ref + rank * B, B) == 0,
          "the first handle's bytes, read through the second");
    OK(MPI_File_close(&b));
    OK(MPI_File_close(&a));
    compare_file("twice", ref, len);
    free(ref);
}

/* ---- a second open with MPI_MODE_APPEND of a served file ----
 * Its pointers start at the end of the file, which holds the first
 * handle's writes: the interposer hands the first handle over (writing
 * its buffered bytes) after the real open had put them at the end it saw
 * then. */
static void test_append_second(void)
{
    enum { B = 100 };
    MPI_File a = open_world("append-second", MPI_MODE_RDWR | MPI_MODE_CREATE), b;
    unsigned char mine[B];
    for (int i = 0; i < B; i++)
        mine[i] = pat((long long)rank * B + i, 10);
    MPI_Status st;
    OK(MPI_File_write_at_all(a, (MPI_Offset)rank * B, mine, B, MPI_BYTE, &st));
    char p[4096];
    path(p, sizeof p, "append-second");
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &b));
    MPI_Offset pos = -1;
    OK(MPI_File_get_position(b, &pos));
    CHECK(pos == (MPI_Offset)B * nprocs, "the second handle (MPI_MODE_APPEND) starts at %lld, "
          "expected the end, %lld", (long long)pos, (long long)B * nprocs);
    OK(MPI_File_close(&b));
    OK(MPI_File_close(&a));
}

/* ---- a second open on MPI_COMM_SELF of a served file ----
 * Plain MPI-IO opens it; the interposer refuses it on every rank with
 * MPI_ERR_FILE_IN_USE, returned (Open MPI 4.1 refuses
 * MPI_File_call_errhandler on MPI_FILE_NULL and aborted the job). */
#ifdef OPEN_MPI
static int file_null_errors;

static void count_file_null_errors(MPI_File *fh, int *err, ...)
{
    (void)fh;
    (void)err;
    file_null_errors++;
}
#endif

/* A second open of the served file NAME on MPI_COMM_SELF (WHAT: how it
 * is named): refused with MPI_ERR_FILE_IN_USE under the interposer, which
 * would serve one handle behind the other; opened plainly otherwise. */
static void self_open_refused(const char *name, const char *what)
{
    MPI_File b;
    int rc = MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDWR, MPI_INFO_NULL, &b);
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    if (interposed)
        CHECK(cls == MPI_ERR_FILE_IN_USE, "second open %s on MPI_COMM_SELF: class %d, expected "
              "MPI_ERR_FILE_IN_USE (%d)", what, cls, MPI_ERR_FILE_IN_USE);
    else
        CHECK(rc == MPI_SUCCESS, "second open %s on MPI_COMM_SELF failed (class %d)", what, cls);
    if (rc == MPI_SUCCESS)
        OK(MPI_File_close(&b));
}

static void test_self_second(void)
{
    MPI_File a = open_world("self-second", MPI_MODE_RDWR | MPI_MODE_CREATE);
    char p[4096];
    path(p, sizeof p, "self-second");
    self_open_refused(p, "by its name");
    /* The same through another name of the file (a hard link): the same
     * file for the interposer, which keys files by device and inode. */
    char link_path[4096 + 8];
    snprintf(link_path, sizeof link_path, "%s.link", p);
    if (rank == 0) {
        unlink(link_path);
        CHECK(link(p, link_path) == 0, "link(%s) failed", link_path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    self_open_refused(link_path, "through a hard link");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(link_path);
#if defined(MPICH_VERSION) && !defined(OPEN_MPI)
    /* And through ROMIO's prefixed name ("ufs:PATH", which ROMIO strips;
     * Open MPI's ompio takes the whole string for a path). */
    char prefixed[4096 + 8];
    snprintf(prefixed, sizeof prefixed, "ufs:%s", p);
    self_open_refused(prefixed, "as ufs:PATH");
#endif
#ifdef OPEN_MPI
    /* A program's handler on MPI_FILE_NULL runs for the refusal (Open
     * MPI refuses MPI_File_call_errhandler on MPI_FILE_NULL itself: the
     * interposer calls it on the refused real handle).  Not under MPICH,
     * whose 4.0.2 miscounts references to a user handler on
     * MPI_FILE_NULL across file closes. */
    MPI_Errhandler eh;
    MPI_File b;
    OK(MPI_File_create_errhandler(count_file_null_errors, &eh));
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    file_null_errors = 0;
    int rc = MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_RDWR, MPI_INFO_NULL, &b);
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    OK(MPI_Errhandler_free(&eh));
    if (interposed)
        CHECK(rc != MPI_SUCCESS && file_null_errors == 1, "refused open with a handler on "
              "MPI_FILE_NULL: rc %d, the handler ran %d times, expected once", rc,
              file_null_errors);
    else
        CHECK(rc == MPI_SUCCESS && file_null_errors == 0, "open with a handler on "
              "MPI_FILE_NULL: rc %d, the handler ran %d times", rc, file_null_errors);
    if (rc == MPI_SUCCESS)
        OK(MPI_File_close(&b));
#endif
    OK(MPI_File_close(&a));
}

/* ---- a memory type whose typemap walks memory out of order ----
 * Four ints written and read with a transpose type (two columns of a 2x2
 * matrix: typemap 0, 8, 4, 12 bytes, no gap): MPI moves them in typemap
 * order, so the file gets 1 3 2 4 from the matrix 1 2 3 4, and reading
 * them back with the same type gives 1 2 3 4 again; the same through a
 * view of every other int (the interposer's pieces, which took such a
 * type for plain bytes). */
static void test_memtypes(void)
{
    MPI_File fh = open_world("memtypes", MPI_MODE_RDWR | MPI_MODE_CREATE);
    MPI_Datatype col, col1, pair, tr, every0, every;
    MPI_Type_vector(2, 1, 2, MPI_INT, &col);
    MPI_Type_create_resized(col, 0, sizeof(int), &col1);
    MPI_Type_contiguous(2, col1, &pair);
    MPI_Type_create_resized(pair, 0, 4 * sizeof(int), &tr);
    MPI_Type_commit(&tr);
    MPI_Type_vector(1, 1, 2, MPI_INT, &every0);
    MPI_Type_create_resized(every0, 0, 2 * sizeof(int), &every);
    MPI_Type_commit(&every);
    const int m[4] = { 1, 2, 3, 4 };
    MPI_Status st;
    /* Zeros first, so that the holes between the view's ints exist: ROMIO's
     * sieved write through a view leaves garbage in holes past the end of
     * the file. */
    long long len = (long long)16 * nprocs * sizeof(int) - sizeof(int);
    int *ref = calloc(16 * nprocs, sizeof(int));
    if (rank == 0)
        OK(MPI_File_write_at(fh, 0, ref, (int)len, MPI_BYTE, &st));
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    /* rank R's matrix at ints 4R.., and through the view at ints 8P + 8R.. */
    OK(MPI_File_write_at(fh, (MPI_Offset)rank * 4 * sizeof(int), m, 1, tr, &st));
    OK(MPI_File_set_view(fh, ((MPI_Offset)8 * nprocs + 8 * rank) * sizeof(int), MPI_INT, every,
                         "native", MPI_INFO_NULL));
    OK(MPI_File_write_at(fh, 0, m, 1, tr, &st));
    int back[4] = { 0 };
    OK(MPI_File_read_at(fh, 0, back, 1, tr, &st));
    CHECK(memcmp(back, m, sizeof m) == 0, "through the view: read back %d %d %d %d", back[0],
          back[1], back[2], back[3]);
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    memset(back, 0, sizeof back);
    OK(MPI_File_read_at(fh, (MPI_Offset)rank * 4 * sizeof(int), back, 1, tr, &st));
    CHECK(memcmp(back, m, sizeof m) == 0, "read back %d %d %d %d", back[0], back[1], back[2],
          back[3]);
    OK(MPI_File_close(&fh));
    MPI_Type_free(&tr);
    MPI_Type_free(&pair);
    MPI_Type_free(&col1);
    MPI_Type_free(&col);
    MPI_Type_free(&every);
    MPI_Type_free(&every0);
    for (int r = 0; r < nprocs; r++) {
        const int t[4] = { 1, 3, 2, 4 };
        memcpy(ref + 4 * r, t, sizeof t);
        for (int k = 0; k < 4; k++)
            ref[8 * nprocs + 8 * r + 2 * k] = t[k];
    }
    compare_file("memtypes", (unsigned char *)ref, len);
    free(ref);
}

/* ---- MPI_SEEK_END through a filetype whose data lies past its extent ----
 * One int at byte 16 of a type of extent 4 (lower bound 16): in a 64-byte
 * file the view's ints are those at bytes 16, 20, ..., 60, twelve of them.
 * Checked under the interposer only: Open MPI 4.1's ompio puts the end at
 * 1 (MPICH's ROMIO at 12). */
static void test_seek_end(void)
{
    MPI_File fh = open_world("seek-end", MPI_MODE_RDWR | MPI_MODE_CREATE);
    int z[16];
    for (int i = 0; i < 16; i++)
        z[i] = i;
    rank0_writes_synced(fh, z, 16, MPI_INT);
    MPI_Datatype late;
    int one = 1;
    MPI_Aint at = 16;
    MPI_Type_create_hindexed(1, &one, &at, MPI_INT, &late);
    MPI_Type_commit(&late);
    OK(MPI_File_set_view(fh, 0, MPI_INT, late, "native", MPI_INFO_NULL));
    MPI_Type_free(&late);
    MPI_Offset pos = -1, byte = -1;
    OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    OK(MPI_File_get_position(fh, &pos));
    OK(MPI_File_get_byte_offset(fh, pos, &byte));
    if (interposed)
        CHECK(pos == 12 && byte == 64, "end of file at %lld (byte %lld), expected 12 (64)",
              (long long)pos, (long long)byte);
    OK(MPI_File_close(&fh));
}

/* ---- a collective read with one rank far past the end of the file ----
 * Its count is 0, the other ranks read their bytes: with
 * TCIO_MPIIO_READ_SESSIONS=on (tests/mpiio.sh runs this part so) the
 * session that each collective read declares leaves the far rank's span
 * out (it declared it whole, and a span past what libtcio can address, at
 * 2^61, failed every rank's read).  1 GiB: ROMIO's two-phase read, the
 * plain run's, walks the ranks' whole range in its buffer's steps. */
static void test_past_eof_all(void)
{
    MPI_File fh = open_world("past-eof-all", MPI_MODE_RDWR | MPI_MODE_CREATE);
    enum { B = 3000 };
    unsigned char mine[B], back[B];
    for (int i = 0; i < B; i++)
        mine[i] = pat((long long)rank * B + i, 9);
    MPI_Status st;
    OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * B, mine, B, MPI_BYTE, &st));
    OK(MPI_File_sync(fh));
    int last = rank == nprocs - 1, count = -1;
    MPI_Offset at = last ? (MPI_Offset)1 << 30 : (MPI_Offset)rank * B;
    memset(back, 0, B);
    OK(MPI_File_read_at_all(fh, at, back, B, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    if (last)   /* Open MPI 4.1's ompio counts the bytes asked for */
        CHECK(count == 0 || plain_open_mpi(), "the read past the end counted %d bytes", count);
    else
        CHECK(count == B && memcmp(back, mine, B) == 0, "read %d bytes, not this rank's", count);
    OK(MPI_File_close(&fh));
}

/* ---- a file per rank on MPI_COMM_SELF: not served, bytes right ---- */
static void test_self(void)
{
    char p[4096], name[64];
    snprintf(name, sizeof name, "self-%d", rank);
    path(p, sizeof p, name);
    unlink(p);
    MPI_File fh;
    MPI_Status st;
    unsigned char buf[1000];
    for (int i = 0; i < 1000; i++)
        buf[i] = pat(i + rank, 6);
    OK(MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    for (int i = 0; i < 10; i++)
        OK(MPI_File_write(fh, buf + 100 * i, 100, MPI_BYTE, &st));
    OK(MPI_File_close(&fh));
    int fd = open(p, O_RDONLY);
    unsigned char back[1000] = { 0 };
    CHECK(fd >= 0 && pread(fd, back, 1000, 0) == 1000 && memcmp(back, buf, 1000) == 0,
          "%s: wrong bytes", name);
    if (fd >= 0)
        close(fd);
}

/* ---- bad input: the classes are printed for the script to compare ---- */
/* ---- offsets in etypes whose bytes overflow MPI_Offset ----
 * Under the interposer, an offset in etypes whose byte offset through the
 * view is past INT64_MAX is refused with MPI_ERR_ARG (seek, get_byte_offset,
 * write_at, read_at), and nothing is written: it wrapped around to a
 * byte before the view (an audit found 4 bytes written there).  An access
 * of no bytes there succeeds, as in ROMIO.  A filetype whose run lies far
 * past its extent is bounded by that run; one whose extent is most of
 * INT64_MAX still takes an access at 0 (two reviews).  ROMIO wraps the
 * same way, so without the interposer the section only runs the calls. */
static int class_of(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

static void test_overflow(void)
{
    MPI_File fh = open_world("overflow", MPI_MODE_RDWR | MPI_MODE_CREATE);
    OK(MPI_File_set_view(fh, 4096, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int v = 0x11111111;
    MPI_Status st;
    const MPI_Offset huge = INT64_MAX / 2;     /* etypes: 4 * huge wraps */
    MPI_Offset byte = 0;
    int cls[6];
    cls[0] = class_of(MPI_File_seek(fh, huge, MPI_SEEK_SET));
    cls[1] = class_of(MPI_File_get_byte_offset(fh, huge, &byte));
    cls[2] = class_of(MPI_File_write_at(fh, huge, &v, 1, MPI_INT, &st));
    cls[3] = class_of(MPI_File_read_at(fh, huge, &v, 1, MPI_INT, &st));
    cls[4] = class_of(MPI_File_write_at(fh, huge, &v, 0, MPI_INT, &st));
    /* A run at 2^62 in a filetype of extent 4: every etype's byte lies
     * 2^62 further than its tile. */
    MPI_Datatype far, wide;
    int one = 1;
    MPI_Aint at = (MPI_Aint)1 << 62;
    MPI_Type_create_hindexed(1, &one, &at, MPI_INT, &far);
    MPI_Type_commit(&far);
    OK(MPI_File_set_view(fh, 0, MPI_INT, far, "native", MPI_INFO_NULL));
    /* 1.5 * 2^60 etypes: 1.5 * 2^62 bytes fit, the run 2^62 beyond not */
    cls[5] = class_of(MPI_File_seek(fh, (MPI_Offset)3 << 59, MPI_SEEK_SET));
    MPI_Type_free(&far);
    /* Two ints 2^62 apart: an extent of most of INT64_MAX, and a write of
     * the first int at 0. */
    MPI_Type_create_hvector(2, 1, at, MPI_INT, &wide);
    MPI_Type_commit(&wide);
    OK(MPI_File_set_view(fh, 0, MPI_INT, wide, "native", MPI_INFO_NULL));
    int wide_write = class_of(rank == 0 ? MPI_File_write_at(fh, 0, &v, 1, MPI_INT, &st)
                                        : MPI_SUCCESS);
    MPI_Type_free(&wide);
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Offset size = -1;
    OK(MPI_File_get_size(fh, &size));
    OK(MPI_File_close(&fh));
    if (interposed) {
        CHECK(cls[0] == MPI_ERR_ARG && cls[1] == MPI_ERR_ARG && cls[2] == MPI_ERR_ARG &&
              cls[3] == MPI_ERR_ARG && cls[4] == MPI_SUCCESS && cls[5] == MPI_ERR_ARG,
              "an offset of %lld etypes (4-byte): seek %d, get_byte_offset %d, write_at %d, "
              "read_at %d, write_at of nothing %d; a seek past a far run %d (MPI_ERR_ARG %d "
              "but for the write of nothing, which succeeds)", (long long)huge, cls[0],
              cls[1], cls[2], cls[3], cls[4], cls[5], MPI_ERR_ARG);
        CHECK(wide_write == MPI_SUCCESS && (rank != 0 || size == 4), "a write at 0 "
              "through a filetype of extent 2^62 + 4: class %d, the file %lld bytes for its "
              "writer (success and 4 expected)", wide_write, (long long)size);
    }
}

static void test_bad_input(void)
{
    MPI_File fh = open_world("bad", MPI_MODE_RDWR | MPI_MODE_CREATE), closed;
    char c = 0;
    MPI_Status st;
    int cls[3];
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    int rc = MPI_File_write_at(fh, -1, &c, 1, MPI_BYTE, &st);
    MPI_Error_class(rc, &cls[0]);
    rc = MPI_File_write_at(MPI_FILE_NULL, 0, &c, 1, MPI_BYTE, &st);
    MPI_Error_class(rc, &cls[1]);
    closed = fh;
    OK(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "close did not set the handle to MPI_FILE_NULL");
    rc = MPI_File_sync(fh);
    MPI_Error_class(rc, &cls[2]);
    (void)closed;
    /* (Open MPI 4.1's ompio accepts a negative offset: its write fails
     * inside and the call returns MPI_SUCCESS.  The script compares the
     * classes with the interposer against these.) */
    CHECK(cls[1] != MPI_SUCCESS && cls[2] != MPI_SUCCESS,
          "bad input accepted: classes %d %d %d", cls[0], cls[1], cls[2]);
    if (rank == 0)
        printf("classes: negative offset %d, MPI_FILE_NULL %d, closed handle %d\n", cls[0],
               cls[1], cls[2]);
}

/* ---- a collective in a file error handler, on one rank ----
 * Rank 0's read at a negative offset fails inside the MPI library, whose
 * error handler call runs the handler there: a barrier through the PMPI_
 * name (as Fortran bindings make one) that the other ranks make outside
 * any MPI-IO call.  Under the interposer the handler runs inside a
 * forwarded call; the barrier must still take the blocking form the
 * others take, or the two never match and the job hangs.  Twice: with a
 * variadic handler, and with one whose barrier is its last call, which
 * the compiler makes a jump (the return address is then the MPI
 * library's).  (Open MPI 4.1's ompio accepts the negative offset: rank 0
 * then makes its barrier after the call.) */
static int handler_ran;
static void barrier_handler(MPI_File *fh, int *err, ...)
{
    (void)fh;
    (void)err;
    handler_ran = 1;
    PMPI_Barrier(MPI_COMM_WORLD);
}

__attribute__((noinline)) static void tail_barrier_handler(MPI_File *fh, int *err)
{
    (void)fh;
    (void)err;
    handler_ran = 1;
    PMPI_Barrier(MPI_COMM_WORLD);
}

static void test_handler_collective(int tail)
{
    MPI_File fh = open_world(tail ? "handler-tail" : "handler", MPI_MODE_RDWR | MPI_MODE_CREATE);
    MPI_Errhandler eh;
    /* Through void (*)(void), the cast that programs use (and GCC's
     * -Wcast-function-type accepts) for a handler without the "...". */
    MPI_File_errhandler_function *fn =
        tail ? (MPI_File_errhandler_function *)(void (*)(void))tail_barrier_handler
             : barrier_handler;
    OK(MPI_File_create_errhandler(fn, &eh));
    OK(MPI_File_set_errhandler(fh, eh));
    handler_ran = 0;
    if (rank == 0) {
        char c;
        MPI_File_read_at(fh, -1, &c, 1, MPI_BYTE, MPI_STATUS_IGNORE);
        if (!handler_ran)
            PMPI_Barrier(MPI_COMM_WORLD);
        printf("handler%s: the error handler %s\n", tail ? " (tail call)" : "",
               handler_ran ? "ran" : "did not run");
    } else {
        PMPI_Barrier(MPI_COMM_WORLD);
    }
    OK(MPI_File_close(&fh));
    MPI_Errhandler_free(&eh);
}

/* ---- a file left open at MPI_Finalize ---- */
static MPI_File left_open;
static unsigned char left_ref[4096];
static void test_left_open(void)
{
    left_open = open_world("left-open", MPI_MODE_WRONLY | MPI_MODE_CREATE);
    long long per = (long long)sizeof left_ref / nprocs;
    MPI_Status st;
    for (long long i = 0; i < per * nprocs; i++)
        left_ref[i] = pat(i, 7);
    for (long long i = 0; i < per; i += 16) {
        long long n = per - i < 16 ? per - i : 16;
        OK(MPI_File_write_at(left_open, rank * per + i, left_ref + rank * per + i, (int)n,
                             MPI_BYTE, &st));
    }
}

/* Whether part NAME runs: all of them, or those MPIIO_PROG_ONLY lists
 * (comma-separated; the script's runs that only check which files are
 * served need two).  MPIIO_PROG_TRACE=1: rank 0 names each part as it
 * starts (a hang is then found at once). */
static int section(const char *name)
{
    const char *only = getenv("MPIIO_PROG_ONLY");
    if (only && *only) {
        size_t n = strlen(name);
        const char *p = only;
        int found = 0;
        while (!found && (p = strstr(p, name)) != NULL) {
            found = (p == only || p[-1] == ',') && (p[n] == '\0' || p[n] == ',');
            p += n;
        }
        if (!found)
            return 0;
    }
    if (rank == 0 && getenv("MPIIO_PROG_TRACE"))
        fprintf(stderr, "mpiio_prog: %s\n", name);
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc != 3 || (strcmp(argv[2], "plain") != 0 && strcmp(argv[2], "interposed") != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiio_prog DIR plain|interposed\n");
        MPI_Finalize();
        return 2;
    }
    dir = argv[1];
    interposed = strcmp(argv[2], "interposed") == 0;
    if (section("pieces"))
        test_pieces();
    if (section("elements"))
        test_elements();
    if (section("comms"))
        test_comms();
    if (section("view"))
        test_view();
    if (section("f90"))
        test_f90();
    if (section("size"))
        test_size();
    if (section("bottom"))
        test_bottom();
    if (section("barrier_order"))
        test_barrier_order();
    if (section("partial_element"))
        test_partial_element();
    if (section("handover atomic"))
        test_handover("atomic");
    if (section("handover external32"))
        test_handover("external32");
    if (section("handover ordered"))
        test_handover("ordered");
    if (section("refusal"))
        test_refusal();
    if (section("info_key"))
        test_info_key();
    if (section("large_count"))
        test_large_count();
    if (section("second_open"))
        test_second_open();
    if (section("self"))
        test_self();
    if (section("self_second"))
        test_self_second();
    if (section("self_first"))
        test_self_first();
    if (section("append_second"))
        test_append_second();
    if (section("memtypes"))
        test_memtypes();
    if (section("seek_end"))
        test_seek_end();
    if (section("past_eof_all"))
        test_past_eof_all();
    if (section("overflow"))
        test_overflow();
    if (section("bad_input"))
        test_bad_input();
    if (section("handler")) {
        test_handler_collective(0);
        test_handler_collective(1);
    }
    int left_open_ran = section("left_open");
    if (left_open_ran)
        test_left_open();
    int all, before;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    before = failures;
#ifdef MPIIO_PROG_WRAP_MALLOC
    if (getenv("MPIIO_PROG_NO_CACHE"))
        printf("mpiio_prog: rank %d: %ld allocations of 64 KiB failed\n", rank,
               failed_allocations);
#endif
    MPI_Finalize();
    /* after MPI_Finalize: the file left open holds every rank's bytes */
    if (rank == 0) {
        long long len = (long long)sizeof left_ref / nprocs * nprocs;
        if (left_open_ran)
            compare_file("left-open", left_ref, len);
        all += failures - before;
        printf("mpiio_prog: %s (%d ranks, %s)\n", all ? "FAILED" : "all checks passed", nprocs,
               argv[2]);
    }
    return all ? 1 : 0;
}
