/* soak.c - one randomized round trip for tests/soak.sh (make soak).
 *
 *   soak SEED SEGMENT_SIZE SLOTS PREFETCH BYTES
 *
 * A random plan of about BYTES bytes (pieces of 1 byte to two segments,
 * owned by random ranks, with holes) is written through libtcio in a
 * shuffled order with mixed calls (tcio_write_at, tcio_seek + tcio_write),
 * closed, and compared byte for byte with the same plan written with
 * pwrite; then the file is opened again, PREFETCH (off, local or session)
 * declares ranges, and 200 random reads per rank (some past the end) are
 * compared with the reference.  Aggregators, placement and early drain
 * come from the TCIO_* environment.  SOAK_EXPECT_NODES=N (soak.sh's
 * two-node leg) fails the run unless the ranks span N nodes as libtcio
 * sees them (MPICH's cliques, TCIO_TEST_NODES).  Exit 0 when everything
 * matched. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <mpi.h>
#include "tcio.h"
#include "testutil.h"

static int write_own_chunks(tcio_file *fh, const tu_plan *p, uint64_t seed, char *why, size_t n)
{
    tu_rng r;
    tu_rng_seed(&r, tu_mix(seed, 77 + (uint64_t)tu_rank));
    size_t *idx = malloc((p->n ? p->n : 1) * sizeof *idx), mine = 0;
    if (!idx)
        return snprintf(why, n, "out of memory"), -1;
    for (size_t i = 0; i < p->n; i++)
        if (p->chunks[i].owner == tu_rank)
            idx[mine++] = i;
    tu_shuffle(&r, idx, mine);
    int rc = TCIO_SUCCESS;
    for (size_t k = 0; k < mine && rc == TCIO_SUCCESS; k++) {
        const tu_chunk *c = &p->chunks[idx[k]];
        unsigned char *buf = malloc((size_t)c->len);
        if (!buf) {
            rc = TCIO_ERR_NO_MEMORY;
            break;
        }
        tu_fill_pattern(buf, (size_t)c->len, c->seed);
        if (tu_rng_below(&r, 2) == 0) {
            rc = tcio_write_at(fh, c->off, buf, (int)c->len, MPI_BYTE);
        } else {
            rc = tcio_seek(fh, c->off, MPI_SEEK_SET);
            if (rc == TCIO_SUCCESS)
                rc = tcio_write(fh, buf, (int)c->len, MPI_BYTE);
        }
        free(buf);
        if (rc != TCIO_SUCCESS)
            snprintf(why, n, "writing chunk %zu [%lld, +%lld): %s", idx[k], (long long)c->off,
                     (long long)c->len, tcio_error_string(rc));
    }
    free(idx);
    return rc == TCIO_SUCCESS ? 0 : -1;
}

/* 200 random reads of up to MAXLEN bytes (some past the end), checked
 * against the reference image. */
static int read_back(tcio_file *fh, const unsigned char *img, int64_t size, int64_t maxlen,
                     uint64_t seed, char *why, size_t n)
{
    enum { READS = 200 };
    tu_rng r;
    tu_rng_seed(&r, tu_mix(seed, 991 + (uint64_t)tu_rank));
    int64_t off[READS], len[READS];
    unsigned char *buf[READS];
    int ok = 0, rc = TCIO_SUCCESS;
    for (int i = 0; i < READS; i++) {
        len[i] = tu_rng_range(&r, 1, maxlen);
        off[i] = tu_rng_range(&r, 0, size + maxlen / 2);
        buf[i] = malloc((size_t)len[i]);
        if (buf[i])
            memset(buf[i], 0xAA, (size_t)len[i]);
        if (rc == TCIO_SUCCESS)
            rc = buf[i] ? tcio_read_at(fh, off[i], buf[i], (int)len[i], MPI_BYTE)
                        : TCIO_ERR_NO_MEMORY;
    }
    if (rc == TCIO_SUCCESS)
        rc = tcio_fetch(fh);
    if (rc != TCIO_SUCCESS)
        snprintf(why, n, "reads: %s", tcio_error_string(rc));
    for (int i = 0; i < READS; i++) {
        for (int64_t b = 0; rc == TCIO_SUCCESS && ok == 0 && b < len[i]; b++) {
            unsigned char want = off[i] + b < size ? img[off[i] + b] : 0;
            if (buf[i][b] != want) {
                snprintf(why, n, "read %d [%lld, +%lld): byte %lld is %d, expected %d", i,
                         (long long)off[i], (long long)len[i], (long long)(off[i] + b),
                         buf[i][b], want);
                ok = -1;
            }
        }
        free(buf[i]);
    }
    return rc == TCIO_SUCCESS ? ok : -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tu_init();
    if (argc != 6) {
        if (tu_rank == 0)
            fprintf(stderr, "usage: soak SEED SEGMENT_SIZE SLOTS off|local|session BYTES\n");
        MPI_Finalize();
        return 2;
    }
    uint64_t seed = strtoull(argv[1], NULL, 10);
    int64_t seg = atoll(argv[2]), bytes = atoll(argv[5]);
    const char *seg_text = argv[2], *slots = argv[3], *prefetch = argv[4];
    char why[512] = "";
    int ok = 1;
    const char *expect_nodes = getenv("SOAK_EXPECT_NODES");
    int nodes = tu_count_nodes();
    if (expect_nodes && nodes != atoi(expect_nodes)) {
        ok = 0;
        snprintf(why, sizeof why, "the ranks span %d node(s), not SOAK_EXPECT_NODES=%s: the "
                 "run would not test what it should", nodes, expect_nodes);
    }
    const char *path = tu_path("soak"), *ref = tu_path("soak-ref");
    tu_plan plan;
    tu_plan_random(&plan, seed, bytes, 2 * seg, 64, tu_nprocs);
    if (ok && tu_plan_write_reference(&plan, ref) != 0) {
        ok = 0;
        snprintf(why, sizeof why, "cannot write the reference %s", ref);
    }
    tcio_file *fh = NULL;
    int rc = tu_min_int(ok) ? tu_open(path, MPI_MODE_WRONLY | MPI_MODE_CREATE | TCIO_MODE_TRUNC,
                                      seg_text, slots, &fh) : -1;
    if (rc == TCIO_SUCCESS) {
        if (write_own_chunks(fh, &plan, seed, why, sizeof why) != 0)
            ok = 0;
        rc = tu_close(fh);
    }
    if (rc != TCIO_SUCCESS && ok) {
        ok = 0;
        snprintf(why, sizeof why, "open or close for writing: %d (%s)", rc, tcio_error_string(rc));
    }
    if (tu_min_int(ok) && tu_rank == 0 && tu_compare_files(path, ref, why, sizeof why) != 0)
        ok = 0;
    if (tu_min_int(ok)) {
        int64_t size = 0;
        unsigned char *img = tu_read_file(ref, &size);
        rc = tu_open(path, MPI_MODE_RDONLY, seg_text, slots, &fh);
        if (rc == TCIO_SUCCESS) {
            int64_t from = (int64_t)tu_rank * size / tu_nprocs, len = size / tu_nprocs + seg;
            if (strcmp(prefetch, "local") == 0)
                rc = tcio_prefetch(fh, from, len);
            else if (strcmp(prefetch, "session") == 0)
                rc = tcio_read_session(fh, from, len);
            if (rc != TCIO_SUCCESS)
                snprintf(why, sizeof why, "prefetch: %s", tcio_error_string(rc));
            if (rc != TCIO_SUCCESS || !img ||
                read_back(fh, img, size, 2 * seg, seed, why, sizeof why) != 0)
                ok = 0;
            rc = tu_close(fh);
        }
        if (rc != TCIO_SUCCESS && ok) {
            ok = 0;
            snprintf(why, sizeof why, "reading: %d (%s)", rc, tcio_error_string(rc));
        }
        free(img);
    }
    int all = tu_min_int(ok);
    if (!ok)
        fprintf(stderr, "soak: rank %d: %s\n", tu_rank, why);
    if (tu_rank == 0) {
        unlink(path);
        unlink(ref);
    }
    tu_plan_free(&plan);
    MPI_Finalize();
    return all ? 0 : 1;
}
