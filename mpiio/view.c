/* view.c - a file view as libtcio can serve it: the displacement, the
 * etype's size and the filetype flattened into (offset, length) runs.
 *
 * The filetype is flattened at MPI_File_set_view (the program may free
 * it right after) by recursion over MPI_Type_get_envelope/contents:
 * named, dup, contiguous, vector, hvector, indexed, hindexed, the block
 * forms, struct, subarray and resized.  Each constructor flattens its
 * child once and replicates the child's runs, merging runs that touch,
 * so a dense block of a vector costs one run however many elements it
 * has.  Anything else (darray, a named pair type with a gap), or more
 * than TMI_MAX_RUNS runs, is not cheap: the file is handed over. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "predefined_type.h"
#include "tmi.h"

enum { TMI_MAX_RUNS = 1 << 22 };

typedef struct runlist {
    tmi_run *r;
    size_t   n, cap;
    int      failed;        /* out of memory or over TMI_MAX_RUNS */
} runlist;

static void add_run(runlist *l, MPI_Aint off, MPI_Aint len)
{
    if (len <= 0 || l->failed)
        return;
    if (l->n && l->r[l->n - 1].off + l->r[l->n - 1].len == off) {
        l->r[l->n - 1].len += len;
        return;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        tmi_run *p = cap > TMI_MAX_RUNS ? NULL : realloc(l->r, cap * sizeof *p);
        if (!p) {
            l->failed = 1;
            return;
        }
        l->r = p;
        l->cap = cap;
    }
    l->r[l->n++] = (tmi_run){ off, len };
}

static void add_shifted(runlist *l, const runlist *child, MPI_Aint shift)
{
    for (size_t i = 0; i < child->n && !l->failed; i++)
        add_run(l, child->r[i].off + shift, child->r[i].len);
}

static void free_contents_types(MPI_Datatype *types, int n)
{
    for (int i = 0; i < n; i++)
        if (!tci_type_is_predefined(types[i]))
            MPI_Type_free(&types[i]);
}

static int flatten(MPI_Datatype t, runlist *out, char *why, size_t whylen);

/* The runs of one instance of T (relative to its own origin) and its
 * extent. */
static int child(MPI_Datatype t, runlist *l, MPI_Aint *extent, char *why, size_t whylen)
{
    MPI_Aint lb;
    memset(l, 0, sizeof *l);
    MPI_Type_get_extent(t, &lb, extent);
    return flatten(t, l, why, whylen);
}

/* Subarray: every element of the subarray in memory order. */
static void subarray(runlist *out, int nd, const int *sizes, const int *subsizes,
                     const int *starts, int order, const runlist *c, MPI_Aint ext)
{
    int idx[32] = { 0 };
    MPI_Aint stride[32];
    /* stride[d]: elements between neighbours along dimension d */
    for (int d = 0; d < nd; d++) {
        stride[d] = 1;
        if (order == MPI_ORDER_C)
            for (int k = d + 1; k < nd; k++)
                stride[d] *= sizes[k];
        else
            for (int k = 0; k < d; k++)
                stride[d] *= sizes[k];
    }
    for (int d = 0; d < nd; d++)
        if (subsizes[d] == 0)
            return;
    for (;;) {
        MPI_Aint el = 0;
        for (int d = 0; d < nd; d++)
            el += (MPI_Aint)(starts[d] + idx[d]) * stride[d];
        add_shifted(out, c, el * ext);
        if (out->failed)
            return;
        /* advance the fastest dimension first */
        int d = order == MPI_ORDER_C ? nd - 1 : 0;
        for (;;) {
            if (++idx[d] < subsizes[d])
                break;
            idx[d] = 0;
            d += order == MPI_ORDER_C ? -1 : 1;
            if (d < 0 || d >= nd)
                return;
        }
    }
}

static int flatten(MPI_Datatype t, runlist *out, char *why, size_t whylen)
{
    int ni, na, nd, comb;
    if (MPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS) {
        snprintf(why, whylen, "MPI_Type_get_envelope failed");
        return -1;
    }
    if (tci_combiner_is_predefined(comb)) {
        int size;
        MPI_Aint lb, ext;
        MPI_Type_size(t, &size);
        MPI_Type_get_extent(t, &lb, &ext);
        if (size != ext || lb != 0) {
            snprintf(why, whylen, "a named datatype with gaps");
            return -1;
        }
        add_run(out, 0, size);
        return 0;
    }
    int *ints = malloc((size_t)(ni + 1) * sizeof *ints);
    MPI_Aint *aints = malloc((size_t)(na + 1) * sizeof *aints);
    MPI_Datatype *types = malloc((size_t)(nd + 1) * sizeof *types);
    int rc = -1;
    runlist c = { 0 };
    if (!ints || !aints || !types) {
        snprintf(why, whylen, "out of memory");
        goto done;
    }
    MPI_Type_get_contents(t, ni, na, nd, ints, aints, types);
    MPI_Aint ext = 0;
    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:   /* the runs stay; the extent tiles */
        rc = flatten(types[0], out, why, whylen);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        if ((rc = child(types[0], &c, &ext, why, whylen)) == 0)
            for (int i = 0; i < ints[0]; i++)
                add_shifted(out, &c, i * ext);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
        if ((rc = child(types[0], &c, &ext, why, whylen)) == 0)
            for (int i = 0; i < ints[0]; i++) {
                MPI_Aint base = comb == MPI_COMBINER_VECTOR ? (MPI_Aint)i * ints[2] * ext
                                                            : i * aints[0];
                for (int j = 0; j < ints[1]; j++)
                    add_shifted(out, &c, base + j * ext);
            }
        break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
        if ((rc = child(types[0], &c, &ext, why, whylen)) == 0)
            for (int i = 0; i < ints[0]; i++) {
                MPI_Aint base = comb == MPI_COMBINER_INDEXED
                                    ? (MPI_Aint)ints[1 + ints[0] + i] * ext : aints[i];
                for (int j = 0; j < ints[1 + i]; j++)
                    add_shifted(out, &c, base + j * ext);
            }
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        if ((rc = child(types[0], &c, &ext, why, whylen)) == 0)
            for (int i = 0; i < ints[0]; i++) {
                MPI_Aint base = comb == MPI_COMBINER_INDEXED_BLOCK
                                    ? (MPI_Aint)ints[2 + i] * ext : aints[i];
                for (int j = 0; j < ints[1]; j++)
                    add_shifted(out, &c, base + j * ext);
            }
        break;
    case MPI_COMBINER_STRUCT:
        rc = 0;
        for (int i = 0; i < ints[0] && rc == 0; i++) {
            if ((rc = child(types[i], &c, &ext, why, whylen)) == 0)
                for (int j = 0; j < ints[1 + i]; j++)
                    add_shifted(out, &c, aints[i] + j * ext);
            free(c.r);
            memset(&c, 0, sizeof c);
        }
        break;
    case MPI_COMBINER_SUBARRAY:
        if (ints[0] > 32) {
            snprintf(why, whylen, "a subarray of more than 32 dimensions");
            break;
        }
        if ((rc = child(types[0], &c, &ext, why, whylen)) == 0)
            subarray(out, ints[0], ints + 1, ints + 1 + ints[0], ints + 1 + 2 * ints[0],
                     ints[1 + 3 * ints[0]], &c, ext);
        break;
    default:
        snprintf(why, whylen, "a filetype built with a constructor the interposer does not "
                              "flatten (combiner %d)", comb);
        break;
    }
    if (rc == 0 && (out->failed || c.failed)) {
        snprintf(why, whylen, "the filetype has more than %d runs", TMI_MAX_RUNS);
        rc = -1;
    }
done:
    if (types)
        free_contents_types(types, nd);
    free(c.r);
    free(ints);
    free(aints);
    free(types);
    return rc;
}

void tmi_view_default(tmi_view *v)
{
    memset(v, 0, sizeof *v);
    v->esize = 1;
    v->contiguous = 1;
    v->ft_size = v->ft_extent = 1;
}

void tmi_view_free(tmi_view *v)
{
    free(v->runs);
    free(v->cum);
    tmi_view_default(v);
}

int tmi_view_make(tmi_view *v, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                  char *why, size_t whylen)
{
    MPI_Count esize, fsize;
    MPI_Count lb, extent;
    tmi_view_default(v);
    MPI_Type_size_x(etype, &esize);
    MPI_Type_size_x(filetype, &fsize);
    MPI_Type_get_extent_x(filetype, &lb, &extent);
    if (esize <= 0 || fsize <= 0 || extent <= 0) {
        snprintf(why, whylen, "an etype or filetype without data");
        return -1;
    }
    runlist l = { 0 };
    if (flatten(filetype, &l, why, whylen) != 0) {
        free(l.r);
        return -1;
    }
    v->disp = disp;
    v->esize = esize;
    v->ft_size = fsize;
    v->ft_extent = extent;
    if (l.n == 1 && l.r[0].off == 0 && l.r[0].len == extent) {
        free(l.r);   /* a dense filetype: the stream is the file from disp */
        return 0;
    }
    v->contiguous = 0;
    v->runs = l.r;
    v->nruns = l.n;
    v->cum = malloc(l.n * sizeof *v->cum);
    if (!v->cum) {
        snprintf(why, whylen, "out of memory");
        tmi_view_free(v);
        return -1;
    }
    MPI_Offset s = 0;
    for (size_t i = 0; i < l.n; i++) {
        v->cum[i] = s;
        s += l.r[i].len;
        if (l.r[i].off + l.r[i].len > v->run_end)
            v->run_end = l.r[i].off + l.r[i].len;
    }
    return 0;
}

/* The run holding byte R (0 <= R < ft_size) of an instance. */
static size_t run_of(const tmi_view *v, MPI_Offset r)
{
    size_t lo = 0, hi = v->nruns - 1;
    while (lo < hi) {
        size_t mid = (lo + hi + 1) / 2;
        if (v->cum[mid] <= r)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int tmi_view_pieces(const tmi_view *v, MPI_Offset start, MPI_Offset len, tmi_piece_fn fn,
                    void *arg)
{
    if (len <= 0)
        return 0;
    if (v->contiguous)
        return fn(arg, v->disp + start, len, start);
    MPI_Offset tile = start / v->ft_size, r = start % v->ft_size, s = start;
    size_t i = run_of(v, r);
    while (len > 0) {
        MPI_Offset into = r - v->cum[i];
        MPI_Offset take = v->runs[i].len - into;
        if (take > len)
            take = len;
        int rc = fn(arg, v->disp + tile * v->ft_extent + v->runs[i].off + into, take, s);
        if (rc)
            return rc;
        s += take;
        len -= take;
        r += take;
        if (++i == v->nruns) {
            i = 0;
            r = 0;
            tile++;
        }
    }
    return 0;
}

bool tmi_view_reaches(const tmi_view *v, MPI_Offset start, MPI_Offset len)
{
    if (start < 0 || len < 0 || start > INT64_MAX - len || v->disp < 0)
        return false;
    MPI_Offset last = len > 0 ? start + len - 1 : start;
    if (v->contiguous)
        return last <= INT64_MAX - v->disp;
    /* LAST's byte lies below disp + tile * extent + run_end, its tile's
     * farthest run's end. */
    if (v->run_end > INT64_MAX - v->disp)
        return false;
    return last / v->ft_size <= (INT64_MAX - v->disp - v->run_end) / v->ft_extent;
}

bool tmi_view_locate(const tmi_view *v, MPI_Offset etypes, MPI_Offset len, MPI_Offset *start)
{
    if (etypes < 0 || etypes > INT64_MAX / v->esize)
        return false;
    *start = etypes * v->esize;
    return tmi_view_reaches(v, *start, len);
}

MPI_Offset tmi_view_byte(const tmi_view *v, MPI_Offset s)
{
    if (v->contiguous)
        return v->disp + s;
    MPI_Offset r = s % v->ft_size;
    size_t i = run_of(v, r);
    return v->disp + s / v->ft_size * v->ft_extent + v->runs[i].off + (r - v->cum[i]);
}

MPI_Offset tmi_view_stream_end(const tmi_view *v, MPI_Offset size)
{
    if (size <= v->disp)
        return 0;
    if (v->contiguous)
        return size - v->disp;
    /* Per run, over the tiles: a run may lie past the filetype's extent
     * (a positive lower bound, or an hindexed block beyond a resized
     * extent), so the tiles below SIZE are counted for each run, not once.
     * MPI makes a filetype's displacements non-negative and monotone, so
     * the bytes below SIZE are a prefix of the stream, unless the tiles
     * interleave (data past the extent followed by the next tile's, which
     * MPI does not forbid): the count is then only approximate. */
    MPI_Offset s = 0;
    for (size_t i = 0; i < v->nruns; i++) {
        MPI_Offset len = v->runs[i].len;
        MPI_Offset avail = size - v->disp - v->runs[i].off;   /* from tile 0's run on */
        if (avail <= 0)
            continue;
        MPI_Offset whole = avail >= len ? (avail - len) / v->ft_extent + 1 : 0;
        MPI_Offset rest = avail - whole * v->ft_extent;       /* < len: the tile cut */
        s += whole * len + (rest > 0 ? rest : 0);
    }
    return s;
}
