#define _POSIX_C_SOURCE 200809L
/* mpiio_edges - a plain MPI-IO program of the interposer's edges: views,
 * positions, byte offsets, the read cache, preallocate, APPEND and a
 * handover, each part's results (positions, offsets, bytes read, error
 * classes, file contents) printed on rank 0.  tests/mpiio.sh runs it
 * without and under the interposer and compares the outputs, which must
 * be equal.  Each part names, in its comment, the fault of the
 * interposer's that a mutation audit made in it unnoticed by the other
 * tests (it changes this program's output).
 *
 *   mpiio_edges DIR [PART...]   (2 ranks or more; every part when none is named)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;
static char path[4096];

static const char *dir;

/* Rank 0 writes PATH, DIR/mpiio-edges-NAME.dat, with N bytes 0, 1, 2, ... */
static void fill(const char *name, int n)
{
    snprintf(path, sizeof path, "%s/mpiio-edges-%s.dat", dir, name);
    if (rank == 0) {
        FILE *f = fopen(path, "wb");
        if (!f)
            MPI_Abort(MPI_COMM_WORLD, 2);
        for (int i = 0; i < n; i++)
            fputc(i & 0xff, f);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 0 prints the first 64 bytes of PATH. */
static void dump(const char *what)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0)
        return;
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("%s: cannot read %s\n", what, path);
        return;
    }
    int c, n = 0;
    printf("%s: file:", what);
    while ((c = fgetc(f)) != EOF && n++ < 64)
        printf(" %02x", c);
    printf("\n");
    fclose(f);
}

static MPI_File open_rw(void)
{
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 3);
    return fh;
}

/* SEEK_END through a non-contiguous view (4 of every 8 bytes), a 16-byte
 * file (the view's end counted one byte short). */
static void seek_end(void)
{
    fill("seek_end", 16);
    MPI_File fh = open_rw();
    MPI_Datatype t;
    MPI_Type_create_resized(MPI_INT, 0, 8, &t);
    MPI_Type_commit(&t);
    MPI_File_set_view(fh, 0, MPI_BYTE, t, "native", MPI_INFO_NULL);
    MPI_Offset pos = -1;
    MPI_File_seek(fh, 0, MPI_SEEK_END);
    MPI_File_get_position(fh, &pos);
    if (rank == 0)
        printf("seek_end: position after SEEK_END %lld\n", (long long)pos);
    MPI_File_close(&fh);
    MPI_Type_free(&t);
}

/* MPI_File_get_byte_offset at every etype, across the filetype's runs
 * (a run boundary off by one). */
static void byte_offset(void)
{
    fill("byte_offset", 64);
    MPI_File fh = open_rw();
    int bl[2] = { 4, 4 };
    MPI_Aint d[2] = { 0, 8 };
    MPI_Datatype h, t;
    MPI_Type_create_hindexed(2, bl, d, MPI_BYTE, &h);
    MPI_Type_create_resized(h, 0, 16, &t);
    MPI_Type_commit(&t);
    MPI_File_set_view(fh, 0, MPI_BYTE, t, "native", MPI_INFO_NULL);
    for (MPI_Offset o = 0; o < 10; o++) {
        MPI_Offset b = -1;
        MPI_File_get_byte_offset(fh, o, &b);
        if (rank == 0)
            printf("byte_offset: etype %lld at byte %lld\n", (long long)o, (long long)b);
    }
    MPI_File_close(&fh);
    MPI_Type_free(&t);
    MPI_Type_free(&h);
}

/* A derived-datatype read through a contiguous view with a displacement
 * (the displacement ignored). */
static void disp_read(void)
{
    fill("disp_read", 256);
    MPI_File fh = open_rw();
    MPI_File_set_view(fh, 100, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    MPI_Datatype four;
    MPI_Type_contiguous(4, MPI_BYTE, &four);
    MPI_Type_commit(&four);
    unsigned char buf[8] = { 0 };
    MPI_Status st;
    MPI_File_read_at(fh, 0, buf, 2, four, &st);
    if (rank == 0)
        printf("disp_read: %d %d %d %d %d %d %d %d (expected 100..107)\n", buf[0], buf[1],
               buf[2], buf[3], buf[4], buf[5], buf[6], buf[7]);
    MPI_File_close(&fh);
    MPI_Type_free(&four);
}

/* Rank 0 writes the N bytes of W through a view of FILETYPE into a new
 * 32-byte file NAME, whose first bytes are then printed. */
static void write_through(const char *name, MPI_Datatype filetype, const unsigned char *w, int n)
{
    fill(name, 32);
    MPI_File fh = open_rw();
    MPI_File_set_view(fh, 0, MPI_BYTE, filetype, "native", MPI_INFO_NULL);
    if (rank == 0)
        MPI_File_write_at(fh, 0, w, n, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    dump(name);
}

/* A struct filetype with a block length of 2 (the block length ignored). */
static void struct_block(void)
{
    int bl = 2;
    MPI_Aint d = 4;
    MPI_Datatype ty = MPI_INT, s, t;
    MPI_Type_create_struct(1, &bl, &d, &ty, &s);
    MPI_Type_create_resized(s, 0, 16, &t);
    MPI_Type_commit(&t);
    unsigned char w[16];
    memset(w, 0xee, sizeof w);
    write_through("struct_block", t, w, 16);
    MPI_Type_free(&t);
    MPI_Type_free(&s);
}

/* A Fortran-order subarray filetype (its strides computed wrongly). */
static void subarray_f(void)
{
    int sizes[2] = { 4, 4 }, sub[2] = { 2, 2 }, starts[2] = { 1, 1 };
    MPI_Datatype t;
    MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_FORTRAN, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    const unsigned char w[4] = { 0xa1, 0xa2, 0xa3, 0xa4 };
    write_through("subarray_f", t, w, 4);
    MPI_Type_free(&t);
}

/* An indexed-block filetype (a displacement read from the wrong place). */
static void indexed_block(void)
{
    int disps[2] = { 1, 3 };
    MPI_Datatype t;
    MPI_Type_create_indexed_block(2, 1, disps, MPI_INT, &t);
    MPI_Type_commit(&t);
    const unsigned char w[8] = { 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8 };
    write_through("indexed_block", t, w, 8);
    MPI_Type_free(&t);
}

/* Rank 0 prints 4 bytes read BEFORE and AFTER what WHAT says. */
static void show4(const char *part, const unsigned char before[4], const char *what,
                  const unsigned char after[4])
{
    printf("%s: before %02x %02x %02x %02x, after %s %02x %02x %02x %02x\n", part, before[0],
           before[1], before[2], before[3], what, after[0], after[1], after[2], after[3]);
}

/* A small read fills the read cache; a derived-datatype write over those
 * bytes; the same small read again (a write that left the cache). */
static void cache_write(void)
{
    fill("cache_write", 64);
    MPI_File fh = open_rw();
    if (rank == 0) {
        unsigned char r1[4], r2[4], w[4] = { 0xc1, 0xc2, 0xc3, 0xc4 };
        MPI_Datatype four;
        MPI_Type_contiguous(4, MPI_BYTE, &four);
        MPI_Type_commit(&four);
        MPI_File_read_at(fh, 8, r1, 4, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_File_write_at(fh, 8, w, 1, four, MPI_STATUS_IGNORE);
        MPI_File_read_at(fh, 8, r2, 4, MPI_BYTE, MPI_STATUS_IGNORE);
        show4("cache_write", r1, "the write", r2);
        MPI_Type_free(&four);
    }
    MPI_File_close(&fh);
}

/* A write of 2 bytes through a view of 4-byte etypes, not a whole etype:
 * refused, with the class MPI-IO gives (the check left out). */
static void part_etype(void)
{
    fill("part_etype", 16);
    MPI_File fh = open_rw();
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    if (rank == 0) {
        unsigned char w[2] = { 0xd1, 0xd2 };
        int rc = MPI_File_write_at(fh, 1, w, 2, MPI_BYTE, MPI_STATUS_IGNORE), cls = -1;
        MPI_Error_class(rc, &cls);
        printf("part_etype: write of 2 bytes through an MPI_INT view: class %d (%s)\n", cls,
               cls == MPI_SUCCESS ? "success" : "error");
    }
    MPI_File_close(&fh);
    dump("part_etype");
}

/* SEEK_END and SEEK_CUR through a view of 4-byte etypes, a 10-byte file
 * (the end rounded down; the current position taken in bytes). */
static void seek_etypes(void)
{
    fill("seek_etypes", 10);
    MPI_File fh = open_rw();
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    MPI_Offset a = -1, b = -1;
    MPI_File_seek(fh, 0, MPI_SEEK_END);
    MPI_File_get_position(fh, &a);
    MPI_File_seek(fh, 1, MPI_SEEK_SET);
    MPI_File_seek(fh, 1, MPI_SEEK_CUR);
    MPI_File_get_position(fh, &b);
    if (rank == 0) {
        printf("seek_etypes: SEEK_END of a 10-byte file in 4-byte etypes: %lld\n", (long long)a);
        printf("seek_etypes: SET 1, then CUR 1: %lld\n", (long long)b);
    }
    MPI_File_close(&fh);
}

/* MPI_File_preallocate smaller than the file leaves it as it is (a
 * preallocate that truncated). */
static void prealloc_small(void)
{
    fill("prealloc_small", 64);
    MPI_File fh = open_rw();
    MPI_File_preallocate(fh, 16);
    MPI_Offset size = -1;
    MPI_File_get_size(fh, &size);
    if (rank == 0)
        printf("prealloc_small: size of a 64-byte file after MPI_File_preallocate(16): %lld\n",
               (long long)size);
    MPI_File_close(&fh);
}

/* A cached read, truncate, extend, the same read: zeros (a set_size
 * that left the cache). */
static void set_size_cache(void)
{
    fill("set_size_cache", 64);
    MPI_File fh = open_rw();
    unsigned char r1[4] = { 0 }, r2[4] = { 0 };
    MPI_File_read_at(fh, 8, r1, 4, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_set_size(fh, 4);
    MPI_File_set_size(fh, 64);
    MPI_File_read_at(fh, 8, r2, 4, MPI_BYTE, MPI_STATUS_IGNORE);
    if (rank == 0)
        show4("set_size_cache", r1, "set_size(4), set_size(64)", r2);
    MPI_File_close(&fh);
}

/* Rank 0 reads (cached), then rank 1 writes; sync, a message from rank 1
 * to rank 0 (no barrier), sync; rank 0 reads rank 1's bytes (a sync that
 * left the cache: a barrier's own drop hides it in sync-barrier-sync). */
static void sync_cache(void)
{
    fill("sync_cache", 64);
    MPI_File fh = open_rw();
    unsigned char r1[4] = { 0 }, r2[4] = { 0 }, w[4] = { 0xf1, 0xf2, 0xf3, 0xf4 };
    int token = 1;
    if (rank == 0) {
        MPI_File_read_at(fh, 8, r1, 4, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_Send(&token, 1, MPI_INT, 1, 6, MPI_COMM_WORLD);
    }
    if (rank == 1) {
        MPI_Recv(&token, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_File_write_at(fh, 8, w, 4, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    MPI_File_sync(fh);
    if (rank == 1)
        MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    if (rank == 0)
        MPI_Recv(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    if (rank == 0) {
        MPI_File_read_at(fh, 8, r2, 4, MPI_BYTE, MPI_STATUS_IGNORE);
        show4("sync_cache", r1, "rank 1's write and sync-send-sync", r2);
    }
    MPI_File_close(&fh);
}

/* MPI_MODE_APPEND puts the individual pointer at the end (a pointer left
 * at 0 overwrote the file's start). */
static void append(void)
{
    fill("append", 16);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_APPEND, MPI_INFO_NULL, &fh);
    MPI_Offset pos = -1;
    MPI_File_get_position(fh, &pos);
    if (rank == 0) {
        unsigned char w[2] = { 0xe1, 0xe2 };
        MPI_File_write(fh, w, 2, MPI_BYTE, MPI_STATUS_IGNORE);
        printf("append: position at open with MPI_MODE_APPEND %lld\n", (long long)pos);
    }
    MPI_File_close(&fh);
    dump("append");
}

/* A handover (MPI_File_set_atomicity) keeps the individual pointer,
 * counted in etypes of a 4-byte-etype view (handed over in bytes). */
static void handover_pos(void)
{
    fill("handover_pos", 64);
    MPI_File fh = open_rw();
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    MPI_File_seek(fh, 2, MPI_SEEK_SET);
    MPI_File_set_atomicity(fh, 1);
    MPI_Offset pos = -1;
    MPI_File_get_position(fh, &pos);
    if (rank == 0)
        printf("handover_pos: position 2 (etypes) after the handover: %lld\n", (long long)pos);
    MPI_File_close(&fh);
}

/* A file open read-only on MPI_COMM_SELF on every rank, then opened on
 * all ranks and written: the bytes (tests/mpiio.sh checks that it was
 * served: a read-only handle cannot hold stale bytes). */
static void rdonly_self(void)
{
    fill("rdonly_self", 16);
    MPI_File ro, fh;
    MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &ro);
    fh = open_rw();
    unsigned char w[2] = { 0x71, 0x72 };
    if (rank == 0)
        MPI_File_write_at(fh, 0, w, 2, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    MPI_File_close(&ro);
    dump("rdonly_self");
}

static const struct { const char *name; void (*fn)(void); } parts[] = {
    { "seek_end", seek_end }, { "byte_offset", byte_offset }, { "disp_read", disp_read },
    { "struct_block", struct_block }, { "subarray_f", subarray_f },
    { "indexed_block", indexed_block }, { "cache_write", cache_write },
    { "part_etype", part_etype }, { "seek_etypes", seek_etypes },
    { "prealloc_small", prealloc_small }, { "set_size_cache", set_size_cache },
    { "sync_cache", sync_cache }, { "append", append },
    { "handover_pos", handover_pos }, { "rdonly_self", rdonly_self },
};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiio_edges DIR [PART...]\n");
        MPI_Finalize();
        return 2;
    }
    dir = argv[1];
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        int want = argc <= 2;
        for (int a = 2; a < argc; a++)
            want |= strcmp(argv[a], parts[i].name) == 0;
        if (want)
            parts[i].fn();
    }
    MPI_Finalize();
    return 0;
}
