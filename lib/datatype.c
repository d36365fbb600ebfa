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
#include "finalize.h"

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
 * tries afresh. */
static int ensure_keyval(void)
{
    if (type_keyval != MPI_KEYVAL_INVALID)
        return 0;
    if (MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, free_cached_info, &type_keyval, NULL)
        != MPI_SUCCESS) {
        type_keyval = MPI_KEYVAL_INVALID;
        return -1;
    }
    if (MPI_Comm_dup(MPI_COMM_SELF, &check_comm) != MPI_SUCCESS) {
        check_comm = MPI_COMM_NULL;
        free_keyval();
        return -1;
    }
    MPI_Comm_set_errhandler(check_comm, MPI_ERRORS_RETURN);
    if (tci_at_finalize(free_keyval) != 0) {
        free_keyval();
        return -1;
    }
    return 0;
}

static bool is_predefined(MPI_Datatype type)
{
    int ni, na, nd, combiner;
    MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    return combiner == MPI_COMBINER_NAMED;
}

static bool is_committed(MPI_Datatype type)
{
    if (is_predefined(type))
        return true;
    char out;
    int position = 0;
    return MPI_Pack(NULL, 0, type, &out, 0, &position, check_comm) == MPI_SUCCESS;
}

static int describe(MPI_Datatype type, tci_type_info *info)
{
    MPI_Count size, lb, extent;
    if (MPI_Type_size_x(type, &size) != MPI_SUCCESS ||
        MPI_Type_get_extent_x(type, &lb, &extent) != MPI_SUCCESS)
        return TCIO_ERR_BAD_TYPE;
    info->size = (int64_t)size;
    /* Predefined types with no padding are plain bytes; anything else goes
     * through MPI_Pack, which also gets typemap order right. */
    info->contiguous = is_predefined(type) && lb == 0 && extent == size;
    return TCIO_SUCCESS;
}

/* Recently seen predefined types.  Predefined types are never freed, so
 * this cache cannot go stale; it keeps the per-access path of a code that
 * writes a few basic types over and over free of MPI calls. */
#define PREDEFINED_CACHE 8
static MPI_Datatype cached_type[PREDEFINED_CACHE];
static tci_type_info cached_info[PREDEFINED_CACHE];
static int cached_count, cached_next;

MPI_Datatype tci_last_predefined = MPI_DATATYPE_NULL;
tci_type_info tci_last_predefined_info;

static bool cache_lookup(MPI_Datatype type, tci_type_info *info)
{
    for (int i = 0; i < cached_count; i++)
        if (cached_type[i] == type) {
            *info = cached_info[i];
            tci_last_predefined = type;
            tci_last_predefined_info = *info;
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
    if (type == MPI_DATATYPE_NULL || ensure_keyval() != 0)
        return TCIO_ERR_BAD_TYPE;
    if (is_predefined(type)) {
        if (describe(type, info) != TCIO_SUCCESS)
            return TCIO_ERR_BAD_TYPE;
        cache_insert(type, info);
        return TCIO_SUCCESS;
    }
    void *cached;
    int found = 0;
    if (MPI_Type_get_attr(type, type_keyval, &cached, &found) == MPI_SUCCESS && found) {
        *info = *(tci_type_info *)cached;
        return TCIO_SUCCESS;
    }
    if (!is_committed(type) || describe(type, info) != TCIO_SUCCESS)
        return TCIO_ERR_BAD_TYPE;
    tci_type_info *copy = malloc(sizeof *copy);
    if (copy) {
        *copy = *info;
        if (MPI_Type_set_attr(type, type_keyval, copy) != MPI_SUCCESS)
            free(copy);
    }
    return TCIO_SUCCESS;
}

int tci_type_pack(const void *src, int count, MPI_Datatype type, void *out, int64_t bytes)
{
    int position = 0;
    if (bytes > INT32_MAX)
        return TCIO_ERR_BAD_ARG;
    if (MPI_Pack(src, count, type, out, (int)bytes, &position, check_comm) != MPI_SUCCESS)
        return TCIO_ERR_MPI;
    return TCIO_SUCCESS;
}

tci_staged_read *tci_staged_new(void *dst, int count, MPI_Datatype type, int64_t bytes)
{
    tci_staged_read *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->staging = malloc(bytes > 0 ? (size_t)bytes : 1);
    if (!s->staging || bytes > INT32_MAX || MPI_Type_dup(type, &s->type) != MPI_SUCCESS) {
        free(s->staging);
        free(s);
        return NULL;
    }
    s->dst = dst;
    s->count = count;
    s->bytes = bytes;
    return s;
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
        int position = 0;
        if (MPI_Unpack(s->staging, (int)s->bytes, &position, s->dst, s->count, s->type,
                       check_comm) != MPI_SUCCESS)
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
