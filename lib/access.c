/* access.c - the per-access path: tcio_write, tcio_write_at, tcio_read,
 * tcio_read_at (argument checks, the file position, splitting a request
 * at segment boundaries, the fast path), tcio_seek, tcio_fetch and
 * tcio_progress, all local.  The data movement itself lives in level1.c
 * and level2.c, the owner's drains in owner.c. */
#include <stdlib.h>
#include <string.h>
#include "file.h"
#include "access.h"
#include "collective.h"
#include "error.h"
#include "handle.h"
#include "owner.h"
#include "progress.h"
#include "size.h"

/* ---- argument checks shared by reads and writes ------------------------ */

typedef struct request {
    tci_type_info type;
    int64_t       bytes;
} request;

/* Arguments of a read or write on an open handle FH; OFFSET is the
 * position for tcio_write and tcio_read (AT false).  Each refusal names
 * the argument and its value (the public call adds its own name). */
static int check_request(tcio_file *fh, bool writing, bool at, MPI_Offset offset,
                         const void *data, int count, MPI_Datatype type, request *req)
{
    if (fh->failure != TCIO_SUCCESS)
        return tci_failed_earlier(fh);      /* sticky: data was lost already */
    if (writing && !fh->can_write)
        return tci_error_set(TCIO_ERR_READ_ONLY, "the file was opened MPI_MODE_RDONLY");
    if (!writing && !fh->can_read)
        return tci_error_set(TCIO_ERR_WRITE_ONLY, "the file was opened MPI_MODE_WRONLY");
    if (count < 0)
        return tci_error_set(TCIO_ERR_BAD_ARG, "count %d is negative", count);
    if (offset < 0)
        return tci_error_set(TCIO_ERR_BAD_ARG, "%s %lld is negative",
                             at ? "offset" : "the file position", (long long)offset);
    int rc = tci_type_inspect(type, &req->type);
    if (rc != TCIO_SUCCESS)                 /* datatype.c says why */
        return tci_error_explain(rc, "the datatype is not valid");
    /* count < 2^31: the product cannot overflow while size < 2^32, which
     * spares the common case a 64-bit division. */
    if (req->type.size >= (INT64_C(1) << 32) && count > INT64_MAX / req->type.size)
        return tci_error_set(TCIO_ERR_BAD_ARG, "count %d of a %lld-byte datatype is more "
                             "than 2^63 bytes", count, (long long)req->type.size);
    req->bytes = (int64_t)count * req->type.size;
    if (req->bytes > 0 && !data)
        return tci_error_set(TCIO_ERR_BAD_ARG, "the buffer is NULL (count %d)", count);
    if (offset > fh->max_end - req->bytes)
        return tci_error_set(TCIO_ERR_BAD_ARG, "%s %lld plus %lld bytes ends past the largest "
                             "addressable offset %lld", at ? "offset" : "the file position",
                             (long long)offset, (long long)req->bytes,
                             (long long)fh->max_end);
    /* Non-contiguous types go through MPI_Pack, whose sizes are int: any
     * count is packed in pieces, but one element must fit. */
    if (!tci_type_fits_pack(&req->type))
        return tci_error_set(TCIO_ERR_BAD_ARG, "one element of the non-contiguous datatype "
                             "holds %lld bytes, more than MPI_Pack's 2 GiB",
                             (long long)req->type.size);
    return TCIO_SUCCESS;
}

/* ---- moves: the owner's duties first ------------------------------------ */

/* A rank about to move first merges the forwards that reached it as an
 * aggregator and frees its acknowledged staged copies (forward.c), and an
 * aggregator does its early drains (owner.c), so that slots other ranks
 * filled are freed while it is inside the library anyway.  Level 2 itself
 * calls into the owner's duties in one place only: a node's tier spilling a
 * segment forwards it (combiner.c), and a forward that completes the segment
 * in the file's level 2 has it written (tci_owner_filled), as this function
 * does after a write move that completes one. */
static int move_writes(tcio_file *fh)
{
    if (tci_level1_has_writes(&fh->l1)) {
        tci_forward_serve(fh);
        tci_owner_early_drains(fh);
    }
    int64_t segment = fh->l1.segment;     /* for the reason: put_writes resets it */
    int rc = tci_level2_put_writes(fh);
    if (rc != TCIO_SUCCESS)
        tci_error_explain(rc, "moving the buffered bytes of segment %lld to level 2",
                          (long long)segment);
    /* The node's combining tier forwards a segment its node completed;
     * the file's level 2's owner hears of a segment completed there. */
    int filled_rc = tci_combiner_filled(fh);
    if (filled_rc == TCIO_SUCCESS)
        filled_rc = tci_owner_filled(fh);
    if (filled_rc != TCIO_SUCCESS)
        tci_error_explain(filled_rc, "writing the segments this aggregator holds full");
    return rc != TCIO_SUCCESS ? rc : filled_rc;
}

/* Forget every pending read, the current segment's and the staged ones:
 * after a failed completion their buffers are the caller's again (tcio.h,
 * Errors), and a later completion must not write into them (they may be
 * freed) nor fail again on the same bytes (which refused every later
 * write of a read-write file). */
static void drop_pending_reads(tcio_file *fh)
{
    if (fh->l1.mode == TCI_L1_READING)
        tci_level1_reset(&fh->l1);
    tci_staged_discard(&fh->staged);
    fh->staged_tail = &fh->staged;
}

/* Whether RC is a refusal of a call's arguments (check_request's), which
 * changes nothing. */
static bool is_argument_error(int rc)
{
    return rc == TCIO_ERR_BAD_ARG || rc == TCIO_ERR_BAD_TYPE || rc == TCIO_ERR_READ_ONLY ||
           rc == TCIO_ERR_WRITE_ONLY;
}

/* A read or write call's result RC: one that failed (refused for a
 * failure that stuck, or failing in a move or for memory; not one
 * rejected for its arguments, which changes nothing) drops the pending
 * reads (tcio.h, Errors).  A failed completion inside it dropped them
 * already. */
static int data_call_result(tcio_file *fh, int rc)
{
    if (rc != TCIO_SUCCESS && (fh->failure != TCIO_SUCCESS || !is_argument_error(rc)))
        drop_pending_reads(fh);
    return rc;
}

static int move_reads(tcio_file *fh)
{
    if (tci_level1_has_reads(&fh->l1)) {
        tci_forward_serve(fh);
        tci_owner_early_drains(fh);
    }
    int64_t segment = fh->l1.segment;
    int rc = tci_level2_get_reads(fh);
    if (rc != TCIO_SUCCESS) {
        tci_error_explain(rc, "reading the bytes of segment %lld from level 2",
                          (long long)segment);
        drop_pending_reads(fh);
    }
    return rc;
}

/* ---- reads --------------------------------------------------------------- */

/* Level 1's list of pending reads could not grow (writes only set bits of
 * a bitmap and cannot fail). */
static int no_memory_for_pieces(const tcio_file *fh)
{
    return tci_error_set(TCIO_ERR_NO_MEMORY, "no memory to grow level 1's list of pending "
                         "reads in segment %lld", (long long)fh->l1.segment);
}

/* Deliver every pending read, the current segment's and the staged ones. */
static int complete_reads(tcio_file *fh)
{
    int rc = move_reads(fh);
    if (rc != TCIO_SUCCESS)
        return rc;
    rc = tci_staged_complete(&fh->staged);
    if (rc != TCIO_SUCCESS)
        tci_error_explain(rc, "unpacking reads into non-contiguous datatypes");
    fh->staged_tail = &fh->staged;
    return rc;
}

/* Point the level-1 buffer at SEGMENT for reading, fetching what it held. */
static int level1_for_reading(tcio_file *fh, int64_t segment)
{
    tci_level1 *l1 = &fh->l1;
    if (l1->mode == TCI_L1_READING && l1->segment == segment)
        return TCIO_SUCCESS;
    int rc = l1->mode == TCI_L1_WRITING ? move_writes(fh)   /* read-your-writes */
                                        : move_reads(fh);
    if (rc != TCIO_SUCCESS)
        return rc;
    tci_level1_aim(l1, TCI_L1_READING, segment, fh->map.segment_size);
    return TCIO_SUCCESS;
}

/* A read of BYTES at OFFSET that lies inside the segment level 1 holds
 * for reading: no division and no move (the fast path's and read_bytes'
 * common case). */
static inline int read_in_level1(tcio_file *fh, MPI_Offset offset, void *dst, int64_t bytes)
{
    tci_progress_tick(fh);
    return tci_level1_add_read(&fh->l1, (int)(offset - fh->l1.start), dst, (int)bytes) == 0
               ? TCIO_SUCCESS : no_memory_for_pieces(fh);
}

static int read_bytes(tcio_file *fh, MPI_Offset offset, char *dst, int64_t bytes)
{
    if (tci_level1_holds(&fh->l1, TCI_L1_READING, offset, bytes))
        return read_in_level1(fh, offset, dst, bytes);
    while (bytes > 0) {
        int64_t segment;
        int disp, chunk = tci_segment_piece(&fh->map, offset, bytes, &segment, &disp);
        int rc = level1_for_reading(fh, segment);
        if (rc != TCIO_SUCCESS)
            return rc;
        if (tci_level1_add_read(&fh->l1, disp, dst, chunk) != 0)
            return no_memory_for_pieces(fh);
        offset += chunk;
        dst += chunk;
        bytes -= chunk;
    }
    return TCIO_SUCCESS;
}

static int read_typed(tcio_file *fh, MPI_Offset offset, void *data, int count,
                      MPI_Datatype type, const request *req)
{
    if (req->bytes == 0)
        return TCIO_SUCCESS;
    fh->stats.count[TCI_C_BYTES_READ] += req->bytes;
    if (req->type.contiguous)
        return read_bytes(fh, offset, data, req->bytes);
    tci_staged_read *staged = tci_staged_new(data, count, type, &req->type);
    if (!staged)
        return tci_error_set(TCIO_ERR_NO_MEMORY, "no memory for a %lld-byte staging buffer "
                             "(a read into a non-contiguous datatype)", (long long)req->bytes);
    /* Queued first: the pieces recorded point into its staging (a failure
     * drops it with them: data_call_result). */
    *fh->staged_tail = staged;
    fh->staged_tail = &staged->next;
    return read_bytes(fh, offset, staged->staging, req->bytes);
}

static int read_at_call(tcio_file *fh, MPI_Offset offset, void *data, int count,
                        MPI_Datatype type)
{
    if (!fh || !tci_handle_is_open(fh))
        return tci_error_bad_handle(fh);
    request req;
    int rc = check_request(fh, false, true, offset, data, count, type, &req);
    if (rc == TCIO_SUCCESS)
        rc = read_typed(fh, offset, data, count, type, &req);
    return data_call_result(fh, rc);
}

static int read_call(tcio_file *fh, void *data, int count, MPI_Datatype type)
{
    if (!fh || !tci_handle_is_open(fh))
        return tci_error_bad_handle(fh);
    request req;
    int rc = check_request(fh, false, false, fh->position, data, count, type, &req);
    if (rc == TCIO_SUCCESS)
        rc = read_typed(fh, fh->position, data, count, type, &req);
    if (rc == TCIO_SUCCESS)
        fh->position += req.bytes;
    return data_call_result(fh, rc);
}

/* ---- writes -------------------------------------------------------------- */

/* Point the level-1 buffer at SEGMENT for writing, moving what it held. */
static int level1_for_writing(tcio_file *fh, int64_t segment)
{
    tci_level1 *l1 = &fh->l1;
    if (l1->mode == TCI_L1_WRITING && l1->segment == segment)
        return TCIO_SUCCESS;
    /* Reads recorded earlier must not see this write: complete them. */
    int rc = l1->mode == TCI_L1_READING ? complete_reads(fh) : move_writes(fh);
    if (rc != TCIO_SUCCESS)
        return rc;
    tci_level1_aim(l1, TCI_L1_WRITING, segment, fh->map.segment_size);
    return TCIO_SUCCESS;
}

/* A write of BYTES at OFFSET that lies inside the segment level 1 holds
 * for writing: no division and no move (the fast path's and write_bytes'
 * common case).  Where this rank's writes end is found when it is asked
 * for (tcio_seek), not kept per write. */
static inline void write_in_level1(tcio_file *fh, MPI_Offset offset, const void *src,
                                   int64_t bytes)
{
    tci_progress_tick(fh);
    tci_level1_write(&fh->l1, (int)(offset - fh->l1.start), src, (int)bytes);
}

static int write_bytes(tcio_file *fh, MPI_Offset offset, const char *src, int64_t bytes)
{
    if (tci_level1_holds(&fh->l1, TCI_L1_WRITING, offset, bytes)) {
        write_in_level1(fh, offset, src, bytes);
        return TCIO_SUCCESS;
    }
    while (bytes > 0) {
        int64_t segment;
        int disp, chunk = tci_segment_piece(&fh->map, offset, bytes, &segment, &disp);
        int rc = level1_for_writing(fh, segment);
        if (rc != TCIO_SUCCESS)
            return rc;
        tci_level1_write(&fh->l1, disp, src, chunk);
        offset += chunk;
        src += chunk;
        bytes -= chunk;
    }
    return TCIO_SUCCESS;
}

/* A non-contiguous type is packed straight into the level-1 buffer when it
 * fits in one segment, else through a temporary buffer of at most
 * tci_pack_piece_bytes (or one element), a piece of whole elements at a
 * time. */
static int write_packed(tcio_file *fh, MPI_Offset offset, const void *data, int count,
                        MPI_Datatype type, const tci_type_info *info)
{
    int64_t bytes = (int64_t)count * info->size;
    int disp = (int)tci_disp_of(&fh->map, offset);
    if (disp + bytes <= fh->map.segment_size) {
        int rc = level1_for_writing(fh, tci_segment_of(&fh->map, offset));
        /* The bytes are marked written only once they are packed (a
         * failed pack must not send stale buffer bytes to the file). */
        if (rc == TCIO_SUCCESS)
            rc = tci_type_pack(data, count, type, info, fh->l1.buf + disp);
        if (rc == TCIO_SUCCESS && bytes > 0)
            tci_level1_mark(&fh->l1, disp, (int)bytes);
        return rc;
    }
    int64_t per_piece = info->size > 0 ? tci_pack_piece_bytes / info->size : count;
    if (per_piece < 1)
        per_piece = 1;
    if (per_piece > count)
        per_piece = count;
    char *packed = malloc((size_t)(per_piece * info->size));
    if (!packed)
        return tci_error_set(TCIO_ERR_NO_MEMORY, "no memory for a %lld-byte packing buffer (a "
                             "write of a non-contiguous datatype)",
                             (long long)(per_piece * info->size));
    int rc = TCIO_SUCCESS;
    const char *in = data;
    for (int done = 0; done < count && rc == TCIO_SUCCESS;) {
        int n = count - done < per_piece ? count - done : (int)per_piece;
        rc = tci_type_pack(in, n, type, info, packed);
        if (rc == TCIO_SUCCESS)
            rc = write_bytes(fh, offset, packed, (int64_t)n * info->size);
        offset += (int64_t)n * info->size;
        in += (int64_t)n * info->extent;
        done += n;
    }
    free(packed);
    return rc;
}

static int write_typed(tcio_file *fh, MPI_Offset offset, const void *data, int count,
                       MPI_Datatype type, const request *req)
{
    if (req->bytes == 0)
        return TCIO_SUCCESS;
    fh->stats.count[TCI_C_BYTES_WRITTEN] += req->bytes;
    if (req->type.contiguous)
        return write_bytes(fh, offset, data, req->bytes);
    return write_packed(fh, offset, data, count, type, &req->type);
}

static int write_at_call(tcio_file *fh, MPI_Offset offset, const void *data, int count,
                         MPI_Datatype type)
{
    if (!fh || !tci_handle_is_open(fh))
        return tci_error_bad_handle(fh);
    request req;
    int rc = check_request(fh, true, true, offset, data, count, type, &req);
    if (rc == TCIO_SUCCESS)
        rc = write_typed(fh, offset, data, count, type, &req);
    return data_call_result(fh, rc);
}

static int write_call(tcio_file *fh, const void *data, int count, MPI_Datatype type)
{
    if (!fh || !tci_handle_is_open(fh))
        return tci_error_bad_handle(fh);
    request req;
    int rc = check_request(fh, true, false, fh->position, data, count, type, &req);
    if (rc == TCIO_SUCCESS)
        rc = write_typed(fh, fh->position, data, count, type, &req);
    if (rc == TCIO_SUCCESS)
        fh->position += req.bytes;
    return data_call_result(fh, rc);
}

/* ---- position, fetch, progress ------------------------------------------ */

static int seek_call(tcio_file *fh, MPI_Offset offset, int whence)
{
    if (!fh || !tci_handle_is_open(fh))
        return tci_error_bad_handle(fh);
    MPI_Offset base;
    const char *from;
    switch (whence) {
    case MPI_SEEK_SET: base = 0; from = "MPI_SEEK_SET"; break;
    case MPI_SEEK_CUR: base = fh->position; from = "MPI_SEEK_CUR"; break;
    case MPI_SEEK_END:
        base = tci_size_rank_end(fh);
        from = "MPI_SEEK_END";
        break;
    default:
        return tci_error_set(TCIO_ERR_BAD_ARG, "whence %d is none of MPI_SEEK_SET, "
                             "MPI_SEEK_CUR and MPI_SEEK_END", whence);
    }
    if (offset > 0 && base > INT64_MAX - offset)
        return tci_error_set(TCIO_ERR_BAD_ARG, "offset %lld from %s (at %lld) overflows "
                             "MPI_Offset", (long long)offset, from, (long long)base);
    if (base + offset < 0)
        return tci_error_set(TCIO_ERR_BAD_ARG, "offset %lld from %s (at %lld) gives the "
                             "negative position %lld", (long long)offset, from,
                             (long long)base, (long long)(base + offset));
    if (base + offset > fh->max_end)        /* no byte there is addressable */
        return tci_error_set(TCIO_ERR_BAD_ARG, "offset %lld from %s (at %lld) is past the "
                             "largest addressable offset %lld", (long long)offset, from,
                             (long long)base, (long long)fh->max_end);
    fh->position = base + offset;
    return TCIO_SUCCESS;
}

static int fetch_call(tcio_file *fh)
{
    if (!fh || !tci_handle_is_open(fh))
        return tci_error_bad_handle(fh);
    bool failed_before = fh->failure != TCIO_SUCCESS;
    return tci_result_after(fh, failed_before, complete_reads(fh));
}

static int progress_call(tcio_file *fh)
{
    if (!fh || !tci_handle_is_open(fh))
        return tci_error_bad_handle(fh);
    tci_progress(fh);
    return fh->failure != TCIO_SUCCESS ? tci_failed_earlier(fh) : TCIO_SUCCESS;
}

int tci_access_settle(tcio_file *fh)
{
    tci_first_failure first = { 0 };
    tci_first_failure_note(&first, complete_reads(fh));
    tci_first_failure_note(&first, move_writes(fh));
    if (fh->node.t.ops)
        tci_first_failure_note(&first, tci_level2_complete_all(&fh->node));
    tci_first_failure_note(&first, tci_error_explain(tci_level2_complete_all(&fh->l2),
                                                     "completing this rank's moves to level "
                                                     "2"));
    return tci_first_failure_result(&first);
}

/* ---- the per-access fast path -------------------------------------------- */

/* Most calls of an fwrite-style code move a few bytes of a predefined type
 * inside the segment that level 1 holds already.  Such a call needs none of
 * check_request's questions beyond these: the handle is the one last found
 * open and without a sticky failure (handle.c clears it at a failure), the
 * type is one of the two recent predefined types and contiguous, the count
 * positive and the data not NULL, and the bytes lie inside level 1's
 * segment in MODE (which implies the access mode: level 1 is aimed only at
 * segments that passed it, and max_end is a segment boundary, so the bytes
 * are addressable too).  Returns the byte count, or 0 to take the full
 * path, which checks and reports everything.  Nothing here can fail, and
 * nothing records a reason: the error state stays as the previous call
 * left it (cleared).  Callgrind, 1 rank, Table II at LEN 64K,
 * instructions per tcio_write_at: 222 before the fast path, 114 with the
 * first one. */
static inline int64_t fast_bytes(const tcio_file *fh, tci_l1_mode mode, MPI_Offset offset,
                                 const void *data, int count, MPI_Datatype type)
{
    if (fh != tci_last_found_open || !fh || !data)
        return 0;
    int64_t bytes = count * tci_type_recent_size(type);
    return bytes > 0 && tci_level1_holds(&fh->l1, mode, offset, bytes) ? bytes : 0;
}

/* A fast-path write of BYTES that level 1 holds, of any length (the
 * inline case, element_write, takes 4 and 8 bytes within a word). */
static __attribute__((noinline)) int write_held(tcio_file *fh, MPI_Offset offset,
                                                const void *data, int64_t bytes)
{
    write_in_level1(fh, offset, data, bytes);
    fh->stats.count[TCI_C_BYTES_WRITTEN] += bytes;
    return TCIO_SUCCESS;
}

/* The common fast-path write, done here without a call: 4 or 8 bytes
 * that level 1 holds, inside one bitmap word, no poll due.  Returns
 * false, having done nothing, for any other write that level 1 holds
 * (write_held's).  With every other way out of the public calls a jump to
 * a function of its own, the compiler saves no registers for them. */
static inline bool element_write(tcio_file *fh, MPI_Offset offset, const void *data,
                                 int64_t bytes)
{
    tci_level1 *l1 = &fh->l1;
    int disp = (int)(offset - l1->start), word = disp >> 6, bit = disp & 63;
    if ((bytes != 4 && bytes != 8) || bit + bytes > 64 || fh->poll_countdown <= 0)
        return false;
    fh->poll_countdown--;
    if (bytes == 8)
        memcpy(l1->buf + disp, data, 8);
    else
        memcpy(l1->buf + disp, data, 4);
    tci_level1_mark_word(l1, word, ((UINT64_C(1) << bytes) - 1) << bit);
    fh->stats.count[TCI_C_BYTES_WRITTEN] += bytes;
    return true;
}

/* A fast-path read of BYTES that level 1 holds, of any length (the
 * inline case, element_read, takes 4 and 8 bytes within a word). */
static __attribute__((noinline)) int read_held(const char *call, tcio_file *fh,
                                               MPI_Offset offset, void *data, int64_t bytes)
{
    int rc = read_in_level1(fh, offset, data, bytes);
    if (rc == TCIO_SUCCESS)
        fh->stats.count[TCI_C_BYTES_READ] += bytes;
    else
        drop_pending_reads(fh);
    return tci_error_note(call, rc);
}

/* As element_write, for reads: record the read of 4 or 8 bytes inside one
 * bitmap word when the pending reads have room and no poll is due. */
static inline bool element_read(tcio_file *fh, MPI_Offset offset, void *data, int64_t bytes)
{
    tci_level1 *l1 = &fh->l1;
    int disp = (int)(offset - l1->start), word = disp >> 6, bit = disp & 63;
    if ((bytes != 4 && bytes != 8) || bit + bytes > 64 || fh->poll_countdown <= 0 ||
        l1->nreads == l1->reads_capacity)
        return false;
    fh->poll_countdown--;
    l1->reads[l1->nreads++] = (tci_read_piece){ .dst = data, .disp = disp, .len = (int)bytes };
    tci_level1_mark_word(l1, word, ((UINT64_C(1) << bytes) - 1) << bit);
    fh->stats.count[TCI_C_BYTES_READ] += bytes;
    return true;
}

/* ---- the public calls: each result passes tci_error_note, which keeps
 * the last failure for tcio_last_error; the full paths are functions of
 * their own, so that the fast path saves no registers for them -------- */

static __attribute__((noinline)) int write_full(tcio_file *fh, const void *data, int count,
                                                MPI_Datatype type)
{
    return tci_error_note("tcio_write", write_call(fh, data, count, type));
}

static __attribute__((noinline)) int write_at_full(tcio_file *fh, MPI_Offset offset,
                                                   const void *data, int count,
                                                   MPI_Datatype type)
{
    return tci_error_note("tcio_write_at", write_at_call(fh, offset, data, count, type));
}

static __attribute__((noinline)) int read_full(tcio_file *fh, void *data, int count,
                                               MPI_Datatype type)
{
    return tci_error_note("tcio_read", read_call(fh, data, count, type));
}

static __attribute__((noinline)) int read_at_full(tcio_file *fh, MPI_Offset offset, void *data,
                                                  int count, MPI_Datatype type)
{
    return tci_error_note("tcio_read_at", read_at_call(fh, offset, data, count, type));
}

int tcio_write(tcio_file *fh, const void *data, int count, MPI_Datatype type)
{
    if (!fh || fh != tci_last_found_open)     /* before reading fh->position */
        return write_full(fh, data, count, type);
    MPI_Offset offset = fh->position;
    int64_t bytes = fast_bytes(fh, TCI_L1_WRITING, offset, data, count, type);
    if (!bytes)
        return write_full(fh, data, count, type);
    fh->position += bytes;
    if (element_write(fh, offset, data, bytes))
        return TCIO_SUCCESS;
    return write_held(fh, offset, data, bytes);
}

int tcio_write_at(tcio_file *fh, MPI_Offset offset, const void *data, int count,
                  MPI_Datatype type)
{
    int64_t bytes = fast_bytes(fh, TCI_L1_WRITING, offset, data, count, type);
    if (!bytes)
        return write_at_full(fh, offset, data, count, type);
    if (element_write(fh, offset, data, bytes))
        return TCIO_SUCCESS;
    return write_held(fh, offset, data, bytes);
}

int tcio_read(tcio_file *fh, void *data, int count, MPI_Datatype type)
{
    if (!fh || fh != tci_last_found_open)
        return read_full(fh, data, count, type);
    MPI_Offset offset = fh->position;
    int64_t bytes = fast_bytes(fh, TCI_L1_READING, offset, data, count, type);
    if (!bytes)
        return read_full(fh, data, count, type);
    if (element_read(fh, offset, data, bytes)) {
        fh->position += bytes;
        return TCIO_SUCCESS;
    }
    int rc = read_held("tcio_read", fh, offset, data, bytes);
    if (rc == TCIO_SUCCESS)
        fh->position += bytes;
    return rc;
}

int tcio_read_at(tcio_file *fh, MPI_Offset offset, void *data, int count, MPI_Datatype type)
{
    int64_t bytes = fast_bytes(fh, TCI_L1_READING, offset, data, count, type);
    if (!bytes)
        return read_at_full(fh, offset, data, count, type);
    if (element_read(fh, offset, data, bytes))
        return TCIO_SUCCESS;
    return read_held("tcio_read_at", fh, offset, data, bytes);
}

int tcio_seek(tcio_file *fh, MPI_Offset offset, int whence)
{
    return tci_error_note("tcio_seek", seek_call(fh, offset, whence));
}

int tcio_fetch(tcio_file *fh)
{
    return tci_error_note("tcio_fetch", fetch_call(fh));
}

int tcio_progress(tcio_file *fh)
{
    return tci_error_note("tcio_progress", progress_call(fh));
}
