/* datatype.c - user datatypes: validation, cached sizes, pack and unpack.
 *
 * MPI cannot be asked whether a datatype is committed.  A zero-count
 * MPI_Pack on MPI_COMM_SELF (errors returned) does that check without
 * touching memory; the answer is cached in an attribute on the type, which
 * MPI deletes with the type, so a later type reusing the handle is checked
 * anew.  Bytes move with MPI_Pack/MPI_Unpack, whose format on a homogeneous
 * system is the typemap's bytes in order: what the file must hold. */
#include <stdlib.h>
#include "tcio.h"
#include "datatype.h"
#include "error.h"
#include "finalize.h"
#include "predefined_type.h"

static int type_keyval = MPI_KEYVAL_INVALID;
static MPI_Comm check_comm = MPI_COMM_NULL;

static int free_cached_info(MPI_Datatype type, int keyval, void *value, void *extra)
{
    (void)type; (void)keyval; (void)extra;
    free(value);
    return MPI_SUCCESS;
}

static void free_keyval(void)
{
    if (check_comm != MPI_COMM_NULL)
        MPI_Comm_free(&check_comm);
    if (type_keyval != MPI_KEYVAL_INVALID)
        MPI_Type_free_keyval(&type_keyval);
}

/* The keyval and the private communicator, made once for the process and
 * freed at MPI_Finalize; a failure leaves neither behind, so the next call
 * tries afresh.  TCIO_SUCCESS, or TCIO_ERR_MPI or TCIO_ERR_NO_MEMORY: the
 * library's resources failed, not the caller's datatype. */
static int ensure_keyval(void)
{
    if (type_keyval != MPI_KEYVAL_INVALID)
        return TCIO_SUCCESS;
    int err = MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, free_cached_info, &type_keyval,
                                     NULL);
    if (err != MPI_SUCCESS) {
        type_keyval = MPI_KEYVAL_INVALID;
        return tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Type_create_keyval (for the datatype "
                                 "cache)", err);
    }
    if ((err = MPI_Comm_dup(MPI_COMM_SELF, &check_comm)) != MPI_SUCCESS) {
        check_comm = MPI_COMM_NULL;
        free_keyval();
        return tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Comm_dup(MPI_COMM_SELF) (for the "
                                 "datatype checks)", err);
    }
    MPI_Comm_set_errhandler(check_comm, MPI_ERRORS_RETURN);
    if (tci_at_finalize(free_keyval) != 0) {
        free_keyval();
        return tci_error_set(TCIO_ERR_NO_MEMORY, "no memory to register the datatype cache "
                             "for MPI_Finalize");
    }
    return TCIO_SUCCESS;
}


static bool is_committed(MPI_Datatype type)
{
    if (tci_type_is_predefined(type))
        return true;
    char out;
    int position = 0;
    return MPI_Pack(NULL, 0, type, &out, 0, &position, check_comm) == MPI_SUCCESS;
}

/* ---- memory-contiguous derived types ------------------------------------- */

static bool walks_in_order(MPI_Datatype type, int depth);

/* Whether TYPE has lb 0, extent = size and walks memory in order: its
 * elements then follow one another with no gap. */
static bool dense(MPI_Datatype type, int depth)
{
    MPI_Count size, lb, extent;
    if (MPI_Type_size_x(type, &size) != MPI_SUCCESS ||
        MPI_Type_get_extent_x(type, &lb, &extent) != MPI_SUCCESS)
        return false;
    return lb == 0 && extent == size && walks_in_order(type, depth);
}

static MPI_Count extent_of(MPI_Datatype type)
{
    MPI_Count lb, extent;
    return MPI_Type_get_extent_x(type, &lb, &extent) == MPI_SUCCESS ? extent : -1;
}

/* Blocks of LEN[i] elements of OLD at DISP[i] (in bytes) follow each other
 * from 0 with no gap. */
static bool adjacent_blocks(int n, const int *len, const MPI_Aint *disp, MPI_Count old_extent)
{
    MPI_Aint next = 0;
    for (int i = 0; i < n; i++) {
        if (len[i] == 0)
            continue;
        if (disp[i] != next)
            return false;
        next += (MPI_Aint)len[i] * old_extent;
    }
    return true;
}

static void free_contents(MPI_Datatype *types, int n)
{
    for (int i = 0; i < n; i++)
        if (!tci_type_is_predefined(types[i]))
            MPI_Type_free(&types[i]);
}

/* Whether the typemap of TYPE visits its bytes in memory order without
 * gaps, from its combiner (conservative: an unknown combiner says no). */
static bool walks_in_order(MPI_Datatype type, int depth)
{
    int ni, na, nd, combiner;
    if (MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return false;
    if (tci_combiner_is_predefined(combiner))
        return true;                  /* dense() checked lb and extent */
    if (depth > 16 || nd > 64 || ni > 1 + 3 * 64 || na > 64)
        return false;                 /* deep or wide: not worth it */
    int ints[1 + 3 * 64];
    MPI_Aint addrs[64];
    MPI_Datatype types[64];
    if (MPI_Type_get_contents(type, ni, na, nd, ints, addrs, types) != MPI_SUCCESS)
        return false;
    bool in_order = false;
    MPI_Count old_extent = nd > 0 ? extent_of(types[0]) : -1;
    MPI_Aint disp[64];
    switch (combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_CONTIGUOUS:
        in_order = dense(types[0], depth + 1);
        break;
    case MPI_COMBINER_VECTOR:          /* count, blocklength, stride */
        in_order = dense(types[0], depth + 1) && (ints[0] <= 1 || ints[1] == ints[2]);
        break;
    case MPI_COMBINER_HVECTOR:         /* count, blocklength; stride in bytes */
        in_order = dense(types[0], depth + 1) &&
                   (ints[0] <= 1 || addrs[0] == (MPI_Aint)ints[1] * old_extent);
        break;
    case MPI_COMBINER_INDEXED:         /* count, lengths, displacements */
        if (ints[0] <= 64) {
            for (int i = 0; i < ints[0]; i++)
                disp[i] = (MPI_Aint)ints[1 + ints[0] + i] * old_extent;
            in_order = dense(types[0], depth + 1) &&
                       adjacent_blocks(ints[0], ints + 1, disp, old_extent);
        }
        break;
    case MPI_COMBINER_HINDEXED:        /* count, lengths; displacements in bytes */
        in_order = ints[0] <= 64 && dense(types[0], depth + 1) &&
                   adjacent_blocks(ints[0], ints + 1, addrs, old_extent);
        break;
    case MPI_COMBINER_STRUCT: {        /* count, lengths; displacements; types */
        MPI_Aint next = 0;
        in_order = ints[0] <= 64;
        for (int i = 0; in_order && i < ints[0]; i++) {
            if (ints[1 + i] == 0)
                continue;
            in_order = addrs[i] == next && dense(types[i], depth + 1);
            next += (MPI_Aint)ints[1 + i] * extent_of(types[i]);
        }
        break;
    }
    case MPI_COMBINER_RESIZED:         /* dense() checks the new bounds */
        in_order = dense(types[0], depth + 1);
        break;
    default:
        in_order = false;
    }
    free_contents(types, nd);
    return in_order;
}

static int describe(MPI_Datatype type, tci_type_info *info)
{
    MPI_Count size, lb, extent;
    if (MPI_Type_size_x(type, &size) != MPI_SUCCESS ||
        MPI_Type_get_extent_x(type, &lb, &extent) != MPI_SUCCESS)
        return TCIO_ERR_BAD_TYPE;
    info->size = (int64_t)size;
    info->extent = (int64_t)extent;
    /* Types whose bytes lie in memory as in the file (predefined types with
     * no padding, derived types that walk memory in order with no gap) are
     * copied as plain bytes, at any size; anything else goes through
     * MPI_Pack, which gets typemap order right. */
    info->contiguous = lb == 0 && extent == size &&
                       (tci_type_is_predefined(type) || walks_in_order(type, 0));
    return TCIO_SUCCESS;
}

/* Recently seen predefined types.  Predefined types are never freed, so
 * this cache cannot go stale; it keeps the per-access path of a code that
 * writes a few basic types over and over free of MPI calls. */
#define PREDEFINED_CACHE 8
static MPI_Datatype cached_type[PREDEFINED_CACHE];
static tci_type_info cached_info[PREDEFINED_CACHE];
static int cached_count, cached_next;

MPI_Datatype tci_recent_type[2] = { MPI_DATATYPE_NULL, MPI_DATATYPE_NULL };
tci_type_info tci_recent_info[2];
int64_t tci_recent_contiguous_size[2];

/* TYPE (predefined, described by INFO) becomes the most recent type. */
static void note_recent(MPI_Datatype type, const tci_type_info *info)
{
    if (type == tci_recent_type[0])
        return;
    tci_recent_type[1] = tci_recent_type[0];
    tci_recent_info[1] = tci_recent_info[0];
    tci_recent_contiguous_size[1] = tci_recent_contiguous_size[0];
    tci_recent_type[0] = type;
    tci_recent_info[0] = *info;
    tci_recent_contiguous_size[0] = info->contiguous ? info->size : 0;
}

static bool cache_lookup(MPI_Datatype type, tci_type_info *info)
{
    for (int i = 0; i < cached_count; i++)
        if (cached_type[i] == type) {
            *info = cached_info[i];
            note_recent(type, info);
            return true;
        }
    return false;
}

static void cache_insert(MPI_Datatype type, const tci_type_info *info)
{
    cached_type[cached_next] = type;
    cached_info[cached_next] = *info;
    cached_next = (cached_next + 1) % PREDEFINED_CACHE;
    if (cached_count < PREDEFINED_CACHE)
        cached_count++;
}

int tci_type_inspect_slow(MPI_Datatype type, tci_type_info *info)
{
    if (type != MPI_DATATYPE_NULL && cache_lookup(type, info))
        return TCIO_SUCCESS;
    if (type == MPI_DATATYPE_NULL)
        return tci_error_set(TCIO_ERR_BAD_TYPE, "the datatype is MPI_DATATYPE_NULL");
    int rc = ensure_keyval();
    if (rc != TCIO_SUCCESS)
        return rc;
    if (tci_type_is_predefined(type)) {
        if (describe(type, info) != TCIO_SUCCESS)
            return tci_error_set(TCIO_ERR_BAD_TYPE, "MPI cannot tell the size and extent of "
                                 "the predefined datatype");
        cache_insert(type, info);
        return TCIO_SUCCESS;
    }
    void *cached;
    int found = 0;
    if (MPI_Type_get_attr(type, type_keyval, &cached, &found) == MPI_SUCCESS && found) {
        *info = *(tci_type_info *)cached;
        return TCIO_SUCCESS;
    }
    if (!is_committed(type))
        return tci_error_set(TCIO_ERR_BAD_TYPE, "the datatype is not committed "
                             "(MPI_Type_commit) or not a datatype");
    if (describe(type, info) != TCIO_SUCCESS)
        return tci_error_set(TCIO_ERR_BAD_TYPE, "MPI cannot tell the size and extent of the "
                             "datatype");
    tci_type_info *copy = malloc(sizeof *copy);
    if (copy) {
        *copy = *info;
        if (MPI_Type_set_attr(type, type_keyval, copy) != MPI_SUCCESS)
            free(copy);
    }
    return TCIO_SUCCESS;
}

int64_t tci_pack_piece_bytes = INT64_C(1) << 30;

/* Elements of INFO per MPI_Pack/MPI_Unpack call: at least one. */
static int elements_per_piece(const tci_type_info *info)
{
    int64_t n = info->size > 0 ? tci_pack_piece_bytes / info->size : INT32_MAX;
    return n < 1 ? 1 : n > INT32_MAX ? INT32_MAX : (int)n;
}

int tci_type_pack(const void *src, int count, MPI_Datatype type, const tci_type_info *info,
                  void *out)
{
    if (!tci_type_fits_pack(info))
        return TCIO_ERR_BAD_ARG;
    const int per_piece = elements_per_piece(info);
    const char *in = src;
    char *to = out;
    for (int done = 0; done < count;) {
        int n = count - done < per_piece ? count - done : per_piece, position = 0;
        int64_t bytes = (int64_t)n * info->size;
        int err = MPI_Pack(in, n, type, to, (int)bytes, &position, check_comm);
        if (err != MPI_SUCCESS)
            return tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Pack", err);
        in += (int64_t)n * info->extent;
        to += bytes;
        done += n;
    }
    return TCIO_SUCCESS;
}

tci_staged_read *tci_staged_new(void *dst, int count, MPI_Datatype type,
                                const tci_type_info *info)
{
    int64_t bytes = (int64_t)count * info->size;
    tci_staged_read *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->staging = malloc(bytes > 0 ? (size_t)bytes : 1);
    if (!s->staging || !tci_type_fits_pack(info) ||
        MPI_Type_dup(type, &s->type) != MPI_SUCCESS) {
        free(s->staging);
        free(s);
        return NULL;
    }
    s->dst = dst;
    s->count = count;
    s->info = *info;
    s->bytes = bytes;
    return s;
}

/* Unpack the staged bytes of S into its destination, in pieces. */
static int unpack(const tci_staged_read *s)
{
    const int per_piece = elements_per_piece(&s->info);
    const char *from = s->staging;
    char *to = s->dst;
    for (int done = 0; done < s->count;) {
        int n = s->count - done < per_piece ? s->count - done : per_piece, position = 0;
        int64_t bytes = (int64_t)n * s->info.size;
        int err = MPI_Unpack(from, (int)bytes, &position, to, n, s->type, check_comm);
        if (err != MPI_SUCCESS)
            return tci_error_set_mpi(TCIO_ERR_MPI, "MPI_Unpack", err);
        from += bytes;
        to += (int64_t)n * s->info.extent;
        done += n;
    }
    return TCIO_SUCCESS;
}

static void staged_free(tci_staged_read *s)
{
    MPI_Type_free(&s->type);
    free(s->staging);
    free(s);
}

int tci_staged_complete(tci_staged_read **list)
{
    int err = TCIO_SUCCESS;
    while (*list) {
        tci_staged_read *s = *list;
        if (unpack(s) != TCIO_SUCCESS)
            err = TCIO_ERR_MPI;
        *list = s->next;
        staged_free(s);
    }
    return err;
}

void tci_staged_discard(tci_staged_read **list)
{
    while (*list) {
        tci_staged_read *s = *list;
        *list = s->next;
        staged_free(s);
    }
}
