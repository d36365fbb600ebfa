/* art_bench - the ART cosmology dump/restart case of the TCIO paper
 * (Section V.C, Table IV, Figure 8).
 *
 *   mpiexec -n P art_bench -m METHOD -o FILE [-T TREES] [-c CELLS] [--csv]
 *                          [--aggregators N] [--placement P]
 *                          [--early-drain on|off] [--prefetch on|off]
 *
 * TREES fully threaded trees (default 1024) have cell counts drawn from a
 * normal distribution (mean CELLS, default 2048; sigma CELLS/16, i.e. 128;
 * seed 5) and are dealt round-robin to the ranks.  The file holds the trees
 * in global order.  Each tree is serialised as 129 arrays of different types
 * and lengths: three tree-structure arrays (level sizes, child links,
 * refinement flags), then level by level, for each of the 63 octree nodes of
 * a depth-6 tree ({1,2,4,8,16,32} nodes per level), the node's cells of two
 * variables (density as double, temperature as float).
 * METHOD 0 = OCIO (pack every tree of the rank into one buffer, hindexed file
 * view, MPI_File_write_all), 1 = TCIO (one tcio_write_at per array), 2 =
 * MPI-IO (one MPI_File_write_at per array).  Dump, then restart (read back
 * with the same method), every byte verified.  With --prefetch on, the
 * TCIO restart first declares each rank's span of the file as a read
 * session (tcio_read_session). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "tcio.h"
#include "bench_common.h"

#define LEVELS 6
#define NODES 63                          /* 1+2+4+8+16+32 */
#define STRUCT_ARRAYS 3
#define ARRAYS (STRUCT_ARRAYS + 2 * NODES) /* 129 */

typedef struct tree {
    MPI_Offset offset;                     /* where the tree starts in the file */
    int        id;
    int        nbytes;                     /* all its arrays */
    int        len[ARRAYS];                /* bytes of each array */
    char      *data[ARRAYS];
} tree;

typedef struct forest {
    int    rank, nprocs;
    int    ntrees;                         /* this rank's trees */
    tree  *trees;
    double total_bytes;                    /* of all ranks */
} forest;

/* ---- the trees ----------------------------------------------------------- */

/* Deterministic normal numbers (Box-Muller over a 64-bit LCG). */
static double normal(uint64_t *state, double mu, double sigma)
{
    double u[2];
    for (int i = 0; i < 2; i++) {
        *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
        u[i] = ((*state >> 11) + 0.5) / 9007199254740992.0;
    }
    return mu + sigma * sqrt(-2.0 * log(u[0])) * cos(2.0 * 3.14159265358979323846 * u[1]);
}

/* Array lengths of a tree with CELLS cells spread over its 63 nodes. */
static void tree_shape(tree *t, int cells)
{
    t->len[0] = (1 + LEVELS) * (int)sizeof(int32_t);   /* levels, nodes per level */
    t->len[1] = NODES * (int)sizeof(int32_t);          /* child links */
    t->len[2] = NODES;                                 /* refinement flags */
    for (int n = 0; n < NODES; n++) {
        int node_cells = cells / NODES + (n < cells % NODES);
        t->len[STRUCT_ARRAYS + 2 * n] = node_cells * (int)sizeof(double);
        t->len[STRUCT_ARRAYS + 2 * n + 1] = node_cells * (int)sizeof(float);
    }
    t->nbytes = 0;
    for (int a = 0; a < ARRAYS; a++)
        t->nbytes += t->len[a];
}

static unsigned char tree_byte(int id, int array, int i)
{
    return (unsigned char)(id * 131 + array * 17 + i * 7 + (i >> 8));
}

static void tree_fill(tree *t, bool with_values)
{
    for (int a = 0; a < ARRAYS; a++) {
        t->data[a] = malloc(t->len[a] ? (size_t)t->len[a] : 1);
        for (int i = 0; i < t->len[a]; i++)
            t->data[a][i] = with_values ? (char)tree_byte(t->id, a, i) : 0;
    }
}

static void forest_build(forest *f, int trees, double mu, bool with_values)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &f->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &f->nprocs);
    f->ntrees = trees / f->nprocs + (f->rank < trees % f->nprocs);
    f->trees = calloc((size_t)f->ntrees, sizeof *f->trees);
    uint64_t state = 5;                    /* Table IV's seed */
    MPI_Offset offset = 0;
    for (int id = 0; id < trees; id++) {
        int cells = (int)lround(normal(&state, mu, mu / 16.0));
        tree shape;
        tree_shape(&shape, cells < NODES ? NODES : cells);
        if (id % f->nprocs == f->rank) {
            tree *t = &f->trees[id / f->nprocs];
            *t = shape;
            t->id = id;
            t->offset = offset;
            tree_fill(t, with_values);
        }
        offset += shape.nbytes;
    }
    f->total_bytes = (double)offset;
}

static void forest_free(forest *f)
{
    for (int i = 0; i < f->ntrees; i++)
        for (int a = 0; a < ARRAYS; a++)
            free(f->trees[i].data[a]);
    free(f->trees);
}

/* ---- TCIO: one call per array -------------------------------------------- */

static bool read_session;      /* --prefetch on */
static double close_seconds;   /* this rank's tcio_close of the dump */

/* The bytes this rank's trees span (they are dealt round-robin, so nearly
 * the whole file). */
static void forest_span(const forest *f, MPI_Offset *start, MPI_Offset *length)
{
    *start = *length = 0;
    if (f->ntrees == 0)
        return;
    const tree *last = &f->trees[f->ntrees - 1];
    *start = f->trees[0].offset;
    *length = last->offset + last->nbytes - *start;
}

static int tcio_access(const char *fname, forest *f, bool writing)
{
    int mode = writing ? MPI_MODE_WRONLY | MPI_MODE_CREATE | TCIO_MODE_TRUNC : MPI_MODE_RDONLY;
    tcio_file *fh = tcio_open(fname, mode);
    if (!fh)
        return TCIO_ERR_OPEN;
    int rc = TCIO_SUCCESS;
    if (!writing && read_session) {
        MPI_Offset start, length;
        forest_span(f, &start, &length);
        rc = tcio_read_session(fh, start, length);
    }
    for (int i = 0; i < f->ntrees && rc == TCIO_SUCCESS; i++) {
        MPI_Offset pos = f->trees[i].offset;
        for (int a = 0; a < ARRAYS && rc == TCIO_SUCCESS; a++) {
            tree *t = &f->trees[i];
            rc = writing ? tcio_write_at(fh, pos, t->data[a], t->len[a], MPI_BYTE)
                         : tcio_read_at(fh, pos, t->data[a], t->len[a], MPI_BYTE);
            pos += t->len[a];
        }
    }
    double t0 = MPI_Wtime();
    int close_rc = tcio_close(fh);   /* completes the lazy reads */
    if (writing)
        close_seconds = MPI_Wtime() - t0;
    return rc != TCIO_SUCCESS ? rc : close_rc;
}

static int tcio_dump(const char *fname, forest *f) { return tcio_access(fname, f, true); }
static int tcio_restart(const char *fname, forest *f) { return tcio_access(fname, f, false); }

/* ---- MPI-IO: one independent call per array ------------------------------ */

static int mpiio_access(const char *fname, forest *f, bool writing)
{
    MPI_File fh;
    int mode = writing ? MPI_MODE_WRONLY | MPI_MODE_CREATE : MPI_MODE_RDONLY;
    int err = MPI_File_open(MPI_COMM_WORLD, fname, mode, MPI_INFO_NULL, &fh);
    if (err != MPI_SUCCESS)
        return err;
    if (writing)
        MPI_File_set_size(fh, 0);
    for (int i = 0; i < f->ntrees && err == MPI_SUCCESS; i++) {
        MPI_Offset pos = f->trees[i].offset;
        for (int a = 0; a < ARRAYS && err == MPI_SUCCESS; a++) {
            tree *t = &f->trees[i];
            err = writing
                ? MPI_File_write_at(fh, pos, t->data[a], t->len[a], MPI_BYTE, MPI_STATUS_IGNORE)
                : MPI_File_read_at(fh, pos, t->data[a], t->len[a], MPI_BYTE, MPI_STATUS_IGNORE);
            pos += t->len[a];
        }
    }
    MPI_File_close(&fh);
    return err;
}

static int mpiio_dump(const char *fname, forest *f) { return mpiio_access(fname, f, true); }
static int mpiio_restart(const char *fname, forest *f) { return mpiio_access(fname, f, false); }

/* ---- OCIO: application buffer, hindexed file view, one collective call ---- */

static int ocio_access(const char *fname, forest *f, bool writing)
{
    int *blocklens = calloc((size_t)f->ntrees + 1, sizeof *blocklens);
    MPI_Aint *displs = calloc((size_t)f->ntrees + 1, sizeof *displs);
    size_t bytes = 0;
    for (int i = 0; i < f->ntrees; i++) {
        blocklens[i] = f->trees[i].nbytes;
        displs[i] = (MPI_Aint)f->trees[i].offset;
        bytes += (size_t)f->trees[i].nbytes;
    }
    char *buffer = malloc(bytes ? bytes : 1), *p = buffer;
    if (writing)
        for (int i = 0; i < f->ntrees; i++)
            for (int a = 0; a < ARRAYS; a++) {
                memcpy(p, f->trees[i].data[a], (size_t)f->trees[i].len[a]);
                p += f->trees[i].len[a];
            }
    MPI_Datatype filetype;
    MPI_Type_create_hindexed(f->ntrees, blocklens, displs, MPI_BYTE, &filetype);
    MPI_Type_commit(&filetype);
    MPI_File fh;
    int mode = writing ? MPI_MODE_WRONLY | MPI_MODE_CREATE : MPI_MODE_RDONLY;
    int err = MPI_File_open(MPI_COMM_WORLD, fname, mode, MPI_INFO_NULL, &fh);
    if (err == MPI_SUCCESS) {
        if (writing)
            MPI_File_set_size(fh, 0);
        err = MPI_File_set_view(fh, 0, MPI_BYTE, filetype, "native", MPI_INFO_NULL);
        if (err == MPI_SUCCESS)
            err = writing ? MPI_File_write_all(fh, buffer, (int)bytes, MPI_BYTE, MPI_STATUS_IGNORE)
                          : MPI_File_read_all(fh, buffer, (int)bytes, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_File_close(&fh);
    }
    if (!writing)
        for (int i = 0; i < f->ntrees; i++)
            for (int a = 0; a < ARRAYS; a++) {
                memcpy(f->trees[i].data[a], p, (size_t)f->trees[i].len[a]);
                p += f->trees[i].len[a];
            }
    MPI_Type_free(&filetype);
    free(buffer);
    free(blocklens);
    free(displs);
    return err;
}

static int ocio_dump(const char *fname, forest *f) { return ocio_access(fname, f, true); }
static int ocio_restart(const char *fname, forest *f) { return ocio_access(fname, f, false); }

/* ---- driver -------------------------------------------------------------- */

static const struct method {
    const char *name;
    int (*dump)(const char *, forest *);
    int (*restart)(const char *, forest *);
} methods[] = {
    { "ocio", ocio_dump, ocio_restart },
    { "tcio", tcio_dump, tcio_restart },
    { "mpiio", mpiio_dump, mpiio_restart },
};

static const char usage[] =
    "usage: mpiexec -n P tcio-art-bench -m METHOD -o FILE [-T TREES] [-c CELLS] [--csv]\n"
    "                                   [tuning options]\n"
    "(bench/art_bench in the build tree)\n"
    "  -m METHOD  0 = OCIO (buffer + hindexed view + write_all), 1 = TCIO (one\n"
    "             tcio_write_at per array), 2 = MPI-IO (one MPI_File_write_at per array)\n"
    "  -o FILE    the shared file (dumped, read back, left in place)\n"
    "  -T TREES   number of fully threaded trees (default 1024)\n"
    "  -c CELLS   mean cells per tree (default 2048; sigma is CELLS/16)\n"
    "  --csv      print a CSV header and one row instead of a table\n"
    "  -h, --help print this help\n"
    "Tuning options (METHOD 1; --prefetch declares the restart's read session):\n"
    BENCH_TUNING_USAGE;

static bool verify(const forest *f)
{
    for (int i = 0; i < f->ntrees; i++)
        for (int a = 0; a < ARRAYS; a++)
            for (int k = 0; k < f->trees[i].len[a]; k++)
                if ((unsigned char)f->trees[i].data[a][k] != tree_byte(f->trees[i].id, a, k))
                    return false;
    return true;
}

/* Parse the options with getopt_long; NULL when valid (or *HELP), else
 * what is wrong. */
static const char *parse(int argc, char **argv, int *method, const char **file, long *trees,
                         long *cells, bool *csv, bool *help, bench_tuning *tuning)
{
    static const struct option longopts[] = {
        { "csv", no_argument, NULL, BENCH_OPT_CSV },
        { "help", no_argument, NULL, 'h' },
        BENCH_TUNING_LONGOPTS,
        { NULL, 0, NULL, 0 }
    };
    *tuning = (bench_tuning){ NULL, NULL, NULL, false };
    *method = -1;
    *file = NULL;
    *trees = 1024;
    *cells = 2048;
    *csv = *help = false;
    int c;
    opterr = 0;                     /* rank 0 alone reports problems */
    while ((c = getopt_long(argc, argv, "hm:o:T:c:", longopts, NULL)) != -1) {
        const char *v = optarg, *problem = NULL;
        int tuned = bench_tuning_option(c, v, tuning, &problem);
        if (tuned < 0)
            return problem;
        if (tuned > 0)
            continue;
        char *end;
        long n = v ? strtol(v, &end, 10) : 0;
        bool number = v && end != v && *end == '\0';
        switch (c) {
        case 'h': *help = true; break;
        case BENCH_OPT_CSV: *csv = true; break;
        case 'm':
            if (!number || n < 0 || n > 2)
                return "METHOD must be 0, 1 or 2";
            *method = (int)n;
            break;
        case 'o': *file = v; break;
        case 'T':
            if (!number || n <= 0 || n > 1 << 20)
                return "TREES must be a positive number";
            *trees = n;
            break;
        case 'c':
            if (!number || n < NODES || n > 1 << 20)
                return "CELLS must be at least 63";
            *cells = n;
            break;
        default: return bench_getopt_problem(argc, argv);
        }
    }
    if (*help)
        return NULL;
    if (optind < argc)
        return "unexpected argument (all arguments are options)";
    if (*method < 0 || !*file)
        return "options -m and -o are required";
    return NULL;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int method;
    const char *file;
    long trees, cells;
    bool csv, help;
    bench_tuning tuning;
    const char *problem = parse(argc, argv, &method, &file, &trees, &cells, &csv, &help,
                                &tuning);
    int status = bench_usage_exit(help, "tcio-art-bench", problem, usage);
    if (status >= 0)
        return status;
    bench_apply_tuning(&tuning);
    read_session = tuning.prefetch;
    const struct method *m = &methods[method];
    forest dumped, restarted;
    forest_build(&dumped, (int)trees, (double)cells, true);
    forest_build(&restarted, (int)trees, (double)cells, false);

    bench_result r = { .bytes = dumped.total_bytes };
    double t0 = bench_start();
    r.write_rc = m->dump(file, &dumped);
    r.write_s = bench_stop(t0);
    r.close_s = bench_max(close_seconds);
    t0 = bench_start();
    r.read_rc = m->restart(file, &restarted);
    r.read_s = bench_stop(t0);
    r.verified = bench_all_true(r.write_rc == 0 && r.read_rc == 0 && verify(&restarted));
    r.peak_rss_mib = bench_max_peak_rss_mib();
    /* The CSV keeps tcio_bench's columns (doc/benchmarks.md says what
     * they hold here); the text says it in words. */
    char shape[160];
    snprintf(shape, sizeof shape, "%ld trees of %ld cells on average, %d arrays per tree",
             trees, cells, ARRAYS);
    if (rank == 0)
        bench_report(stdout, csv, &(bench_row){ .method = m->name, .nprocs = dumped.nprocs,
                     .num_array = ARRAYS, .types = "ftt", .len_array = trees,
                     .size_access = cells, .tuning = &tuning, .shape = shape }, &r);
    forest_free(&dumped);
    forest_free(&restarted);
    MPI_Finalize();
    return r.verified ? 0 : 1;
}
