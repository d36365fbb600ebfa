/* data.c - the served data calls: every read and write of a served file,
 * blocking, collective, split and nonblocking, goes through tmi_access.
 *
 * libtcio's calls are local, so the _all, split and nonblocking forms are
 * the same access as the independent one (a collective form only promises
 * that every rank calls it).  A write is buffered by libtcio; a read is
 * recorded and then completed with tcio_fetch (local) before the call
 * returns, as MPI wants the buffer filled.  Through a non-contiguous view,
 * or from MPI_BOTTOM (libtcio takes no NULL buffer), or for a short read,
 * the memory side goes through a packed copy (MPI_Pack/MPI_Unpack) and
 * the file side through the view's runs, one tcio call per run. */
#include <limits.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "tmi.h"

/* ---- the read cache ----
 * A blocking read must return filled, and completing libtcio's lazy reads
 * (tcio_fetch) at every small read costs a level-2 round trip each.  So a
 * read smaller than TMI_CACHE_BYTES is served from a per-file cache of
 * one aligned block of the file, filled with one tcio_read_at and
 * tcio_fetch.  MPI's nonatomic mode lets a rank see other ranks' writes
 * only after sync-barrier-sync: the cache is dropped at every sync (and
 * set_size, preallocate); this rank's own writes drop the cache where they
 * overlap it, so it always reads its own writes. */
enum { TMI_CACHE_BYTES = 64 * 1024 };

void tmi_cache_drop(tmi_entry *e, MPI_Offset off, MPI_Offset len)
{
    if (e->cache_len == 0)
        return;
    if (len < 0 || (off < e->cache_off + e->cache_len && off + len > e->cache_off)) {
        e->cache_len = 0;
        e->cache_hit_end = 0;
    }
}

/* File bytes [OFF, OFF+LEN) into DST through the cache; LEN is smaller
 * than the cache; EOF is the end of the file now.  Returns libtcio's
 * code. */
static int cache_read(tmi_entry *e, MPI_Offset off, MPI_Offset len, char *dst,
                      MPI_Offset eof)
{
    while (len > 0) {
        if (e->cache_len == 0 || off < e->cache_off || off >= e->cache_off + e->cache_len) {
            if (!e->cache && !(e->cache = malloc(TMI_CACHE_BYTES))) {
                /* No memory for the cache: the bytes straight from
                 * libtcio, uncached, rather than a refusal of the read. */
                int rc = TMI_LIB(tcio_read_at(e->tf, off, dst, (int)len, MPI_BYTE));
                return rc ? rc : TMI_LIB(tcio_fetch(e->tf));
            }
            MPI_Offset at = off - off % TMI_CACHE_BYTES;
            /* The block up to the end of the file only: the segments past
             * it hold nothing to read, and each would cost libtcio a
             * fetch (the callers never ask for bytes past EOF). */
            int fill = at + TMI_CACHE_BYTES < eof ? TMI_CACHE_BYTES : (int)(eof - at);
            /* Invalid while it fills: a failed fill leaves part of it
             * written, or a read of libtcio's still pointing into it. */
            e->cache_len = 0;
            e->cache_hit_end = 0;
            int rc = TMI_LIB(tcio_read_at(e->tf, at, e->cache, fill, MPI_BYTE));
            if (rc == 0)
                rc = TMI_LIB(tcio_fetch(e->tf));
            if (rc)
                return rc;
            e->cache_off = at;
            e->cache_len = fill;
            /* The end of file only moves up until the next sync or
             * set_size, which drop the cache: below EOF no later read of
             * the block needs to ask again. */
            e->cache_hit_end = at + fill;
        }
        MPI_Offset n = e->cache_off + e->cache_len - off;
        if (n > len)
            n = len;
        memcpy(dst, e->cache + (off - e->cache_off), n);
        dst += n;
        off += n;
        len -= n;
    }
    return 0;
}

typedef struct piece_ctx {
    tmi_entry  *e;
    int         dir;
    char       *packed;        /* the stream bytes from START on */
    MPI_Offset  start;
    MPI_Offset  eof;           /* reads: the end of the file */
    MPI_Offset  done;          /* bytes of the stream moved */
    int         rc;            /* libtcio's code */
    int         pending;       /* reads recorded that tcio_fetch completes */
} piece_ctx;

static int one_piece(void *arg, MPI_Offset file_off, MPI_Offset len, MPI_Offset stream_off)
{
    piece_ctx *c = arg;
    if (c->dir == TMI_READ) {
        if (file_off >= c->eof)
            return 1;                       /* the end: a short read */
    }
    int clamped = 0;
    if (c->dir == TMI_READ && file_off + len > c->eof) {
        len = c->eof - file_off;
        clamped = 1;
    }
    char *p = c->packed + (stream_off - c->start);
    if (c->dir == TMI_WRITE)
        tmi_cache_drop(c->e, file_off, len);
    else if (len < TMI_CACHE_BYTES) {
        c->rc = cache_read(c->e, file_off, len, p, c->eof);
        if (c->rc)
            return 1;
        c->done += len;
        return clamped;
    }
    while (len > 0) {
        int n = len > INT_MAX ? INT_MAX : (int)len;
        c->rc = c->dir == TMI_WRITE
                    ? TMI_LIB(tcio_write_at(c->e->tf, file_off, p, n, MPI_BYTE))
                    : TMI_LIB(tcio_read_at(c->e->tf, file_off, p, n, MPI_BYTE));
        if (c->rc)
            return 1;
        c->pending |= c->dir == TMI_READ;
        file_off += n;
        p += n;
        len -= n;
        c->done += n;
    }
    return clamped;
}

/* The size of a predefined datatype without gaps, or 0 for any other.
 * A program of small accesses (one element per call) pays every MPI call
 * the interposer makes per access; these types need none.  (Open MPI's
 * handles are addresses of objects, not constants: a table filled at the
 * first use, not a switch.) */
static int predefined_size(MPI_Datatype type)
{
    static MPI_Datatype types[16];
    static int sizes[16], n = -1;
    if (n < 0) {
        MPI_Datatype t[16] = { MPI_BYTE, MPI_CHAR, MPI_INT, MPI_DOUBLE, MPI_FLOAT, MPI_LONG,
                               MPI_LONG_LONG, MPI_SHORT, MPI_UNSIGNED, MPI_UNSIGNED_CHAR,
                               MPI_UNSIGNED_LONG, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T,
                               MPI_UINT32_T, MPI_UINT64_T };
        n = 0;
        for (int i = 0; i < 16; i++) {
            int size;
            MPI_Aint lb, ext;
            if (t[i] == MPI_DATATYPE_NULL || MPI_Type_size(t[i], &size) != MPI_SUCCESS ||
                MPI_Type_get_extent(t[i], &lb, &ext) != MPI_SUCCESS || lb != 0 || ext != size)
                continue;
            types[n] = t[i];
            sizes[n++] = size;
        }
    }
    for (int i = 0; i < n; i++)
        if (types[i] == type)
            return sizes[i];
    return 0;
}

/* A read of BYTES at file offset AT that the cache holds below the end of
 * the file it saw (cache_hit_end): copied with no other call.  Sizes of
 * one predefined element get a copy of constant size, which the compiler
 * inlines (a library memcpy per element was a sixth of a read-back's
 * time in the paper's interleaved pattern). */
static inline bool cache_hit(tmi_entry *e, MPI_Offset at, MPI_Offset bytes, void *buf)
{
    if (at < e->cache_off || at + bytes > e->cache_hit_end)
        return false;
    const char *src = e->cache + (at - e->cache_off);
    switch (bytes) {
    case 1: memcpy(buf, src, 1); break;
    case 2: memcpy(buf, src, 2); break;
    case 4: memcpy(buf, src, 4); break;
    case 8: memcpy(buf, src, 8); break;
    default: memcpy(buf, src, (size_t)bytes); break;
    }
    return true;
}

/* The size of TYPE when it is a predefined type without gaps, else 0;
 * remembered per file for the type of the last call, since a program of
 * small accesses repeats a few types (the table's search was a sixth of
 * the interposer's instructions per access).  A freed derived type's
 * handle may come back as another derived type: both are 0 here, and
 * predefined handles are never freed. */
static inline int small_type_size(tmi_entry *e, MPI_Datatype type)
{
    if (type != e->last_type) {
        e->last_psize = predefined_size(type);
        e->last_type = type;
    }
    return e->last_psize;
}

/* The stream byte where an access of BYTES starts, at OFF etypes
 * (EXPLICIT_OFFSET, OFF not negative) or at E's pointer, in *START; false
 * where its bytes through the view are past what an MPI_Offset holds (an
 * offset that would wrap around to a byte before the view: ROMIO writes
 * there, ompio refuses it). */
static inline bool access_start(const tmi_entry *e, int explicit_offset, MPI_Offset off,
                                MPI_Offset bytes, MPI_Offset *start)
{
    if (explicit_offset)
        return tmi_view_locate(&e->view, off, bytes, start);
    *start = e->pos;
    return tmi_view_reaches(&e->view, *start, bytes);
}

/* The common case of a program of small accesses, before any other
 * check: a predefined type through a contiguous view and a real buffer,
 * fewer bytes than the read cache, a whole number of etypes, an access
 * the file's mode allows.  Reads are served only from the cache; a write
 * goes to libtcio at once.  Returns 1 if served (*DONE set, counted),
 * 0 if tmi_access's full path must decide, or libtcio's error code
 * (negated) of a failed write. */
static inline __attribute__((always_inline)) int
small_access(tmi_entry *e, int dir, int explicit_offset, MPI_Offset off, void *buf,
             MPI_Count count, MPI_Datatype type, MPI_Offset *done)
{
    if (!e->view.contiguous || buf == MPI_BOTTOM || count <= 0 || count >= TMI_CACHE_BYTES ||
        (explicit_offset && off < 0))
        return 0;
    int psize = small_type_size(e, type);
    MPI_Offset bytes = (MPI_Offset)count * psize;
    if (!psize || bytes >= TMI_CACHE_BYTES || (e->view.esize != 1 && bytes % e->view.esize))
        return 0;
    MPI_Offset start;
    if (!access_start(e, explicit_offset, off, bytes, &start))
        return 0;                 /* full_access refuses it */
    MPI_Offset at = e->view.disp + start;
    if (dir == TMI_READ) {
        if (!cache_hit(e, at, bytes, buf))   /* a hit: the mode allowed the fill */
            return 0;
    } else {
        if (tmi_access_mode(e) == MPI_MODE_RDONLY)
            return 0;
        if (e->cache_len)
            tmi_cache_drop(e, at, bytes);
        int rc = TMI_LIB(tcio_write_at(e->tf, at, buf, (int)count, type));
        if (rc)
            return -rc;
    }
    if (!explicit_offset)
        e->pos = start + bytes;
    e->count[dir == TMI_WRITE ? TMI_S_WRITES : TMI_S_READS]++;
    e->count[dir == TMI_WRITE ? TMI_S_WRITE_BYTES : TMI_S_READ_BYTES] += bytes;
    *done = bytes;
    return 1;
}

/* Every access small_access does not serve. */
static int full_access(tmi_entry *e, int dir, int explicit_offset, MPI_Offset off, void *buf,
                       MPI_Count count, MPI_Datatype type, MPI_Offset *done, const char *call)
{
    char why[TCIO_MAX_ERROR_STRING] = "";   /* a failed piece's reason, kept past the fetch */
    *done = 0;
    if (count < 0 || type == MPI_DATATYPE_NULL || (explicit_offset && off < 0))
        return -1;
    int psize = predefined_size(type);
    MPI_Count tsize = psize;
    if (!psize && MPI_Type_size_x(type, &tsize) != MPI_SUCCESS)
        return -1;
    int acc = tmi_access_mode(e);
    if ((dir == TMI_WRITE && acc == MPI_MODE_RDONLY) ||
        (dir == TMI_READ && acc == MPI_MODE_WRONLY))
        return -1;   /* the real MPI-IO refuses it with its own class */
    if (tsize > 0 && count > INT64_MAX / tsize)
        return -1;   /* more bytes than an MPI_Offset holds: the real call's error */
    MPI_Offset bytes = (MPI_Offset)count * tsize;
    if (e->view.esize != 1 && bytes % e->view.esize)
        return -1;   /* not a whole number of etypes: the real call says so */
    if (count > INT_MAX || (bytes > INT_MAX && (buf == MPI_BOTTOM || !e->view.contiguous)))
        return tmi_refuse(e, call, "more than 2^31-1 elements, or more than 2 GiB through "
                                   "a non-contiguous view or from MPI_BOTTOM, in one call");
    if (buf == MPI_BOTTOM && count > 0) {
        /* Absolute addresses.  libtcio takes no NULL buffer, and MPICH
         * 4.0's MPI_Pack rejects MPI_BOTTOM (a NULL pointer) too: the
         * same bytes as one element of a struct type anchored at a real
         * address, displaced back to address zero. */
        static char anchor;
        MPI_Aint a;
        MPI_Datatype wrapped;
        int n = (int)count;
        MPI_Get_address(&anchor, &a);
        MPI_Aint disp = -a;
        if (MPI_Type_create_struct(1, &n, &disp, &type, &wrapped) != MPI_SUCCESS)
            return tmi_fail(e, call, MPI_ERR_TYPE, "the datatype cannot be anchored for "
                                                   "MPI_BOTTOM");
        MPI_Type_commit(&wrapped);
        int rc = tmi_access(e, dir, explicit_offset, off, &anchor, 1, wrapped, done, call);
        MPI_Type_free(&wrapped);
        return rc;
    }
    /* Nothing moves in an access of no bytes, wherever its offset points
     * (ROMIO accepts any offset that is not negative there). */
    MPI_Offset start = e->pos;
    if (bytes > 0 && !access_start(e, explicit_offset, off, bytes, &start))
        return tmi_fail(e, call, MPI_ERR_ARG, "the offset, in bytes through the view, is "
                                              "past what an MPI_Offset holds");
    int rc = 0;
    if (bytes == 0)
        goto out;

    MPI_Offset eof = 0;
    if (dir == TMI_READ && (rc = TMI_LIB(tcio_get_size(e->tf, &eof))) != 0)
        goto out;
    /* A small read of a predefined type through a contiguous view: from
     * the cache, straight into the buffer. */
    if (dir == TMI_READ && psize && buf != MPI_BOTTOM && e->view.contiguous &&
        bytes < TMI_CACHE_BYTES) {
        MPI_Offset at = e->view.disp + start, n = eof - at;
        if (n > bytes)
            n = bytes;
        rc = n > 0 ? cache_read(e, at, n, buf, eof) : 0;
        if (rc == 0 && n > 0)
            *done = n;
        goto out;
    }
    /* A contiguous view and a real buffer: libtcio takes the program's
     * datatype itself (also one with gaps in memory). */
    if (e->view.contiguous && buf != MPI_BOTTOM &&
        (dir == TMI_WRITE || (e->view.disp + start + bytes <= eof && bytes >= TMI_CACHE_BYTES))) {
        MPI_Offset at = e->view.disp + start;
        if (dir == TMI_WRITE)
            tmi_cache_drop(e, at, bytes);
        rc = dir == TMI_WRITE ? TMI_LIB(tcio_write_at(e->tf, at, buf, (int)count, type))
                              : TMI_LIB(tcio_read_at(e->tf, at, buf, (int)count, type));
        if (rc == 0 && dir == TMI_READ)
            rc = TMI_LIB(tcio_fetch(e->tf));
        if (rc == 0)
            *done = bytes;
        goto out;
    }
    /* Everything else: the stream packed in memory. */
    piece_ctx c = { .e = e, .dir = dir, .start = start, .eof = eof };
    /* A predefined type without gaps is plain bytes in memory and needs no
     * packed copy.  A derived one goes through MPI_Pack even without gaps:
     * MPI moves data in typemap order, which such a type may walk out of
     * address order (a resized vector of columns: a transpose), and
     * MPI_Pack gets that order right. */
    if (buf != MPI_BOTTOM && psize) {
        c.packed = buf;
    } else if (bytes > INT_MAX) {
        return tmi_refuse(e, call, "a short read of more than 2 GiB into a derived "
                                   "datatype");
    } else {
        c.packed = malloc(bytes);
        if (!c.packed) {
            /* The interposer's own failure: libtcio's last reason is
             * another call's. */
            snprintf(why, sizeof why, "no memory to pack the %lld bytes of the datatype",
                     (long long)bytes);
            return tmi_fail(e, call, MPI_ERR_NO_MEM, why);
        }
        if (dir == TMI_WRITE) {
            int pos = 0;
            if (MPI_Pack(buf, (int)count, type, c.packed, (int)bytes, &pos, MPI_COMM_SELF) !=
                MPI_SUCCESS) {
                free(c.packed);
                /* Not to the real call: its bytes would bypass libtcio's. */
                return tmi_fail(e, call, MPI_ERR_TYPE, "MPI_Pack refused the datatype");
            }
        }
    }
    tmi_view_pieces(&e->view, start, bytes, one_piece, &c);
    rc = c.rc;
    /* The pieces read so far complete here even after a later piece
     * failed (refused, their bytes still in libtcio's list): BUF or
     * C.PACKED, freed below, must not be written into after this call.
     * The piece's failure is the one said, not the fetch's. */
    if (c.pending) {
        if (rc != 0)
            tcio_last_error(why, sizeof why);
        int fetch_rc = TMI_LIB(tcio_fetch(e->tf));
        if (rc == 0)
            rc = fetch_rc;
    }
    if (rc == 0 && dir == TMI_READ && c.packed != buf) {
        /* A partial last element (a short read at the end of the file)
         * gets the bytes read, as the real read stores them, its others
         * left as they were: the elements up to it are packed from BUF,
         * the bytes read laid over them, and all unpacked. */
        int pos = 0;
        MPI_Count n = c.done / tsize + (c.done % tsize != 0);
        if (c.done % tsize != 0) {
            char *merged = malloc((size_t)(n * tsize));
            int packed_pos = 0;
            if (merged && MPI_Pack(buf, (int)n, type, merged, (int)(n * tsize), &packed_pos,
                                   MPI_COMM_SELF) == MPI_SUCCESS) {
                memcpy(merged, c.packed, (size_t)c.done);
                MPI_Unpack(merged, (int)(n * tsize), &pos, buf, (int)n, type, MPI_COMM_SELF);
                n = 0;
            } else {
                n--;      /* no memory: the whole elements only */
            }
            free(merged);
        }
        if (n > 0)
            MPI_Unpack(c.packed, (int)bytes, &pos, buf, (int)n, type, MPI_COMM_SELF);
    }
    if (c.packed != buf)
        free(c.packed);
    if (rc == 0)
        *done = c.done;
out:
    if (rc != 0 && why[0])
        return tmi_fail(e, call, tmi_class_of(rc), why);
    if (rc != 0)
        return tmi_error(e, call, rc);
    if (!explicit_offset)
        e->pos = start + *done;
    e->count[dir == TMI_WRITE ? TMI_S_WRITES : TMI_S_READS]++;
    e->count[dir == TMI_WRITE ? TMI_S_WRITE_BYTES : TMI_S_READ_BYTES] += *done;
    return MPI_SUCCESS;
}

int tmi_access(tmi_entry *e, int dir, int explicit_offset, MPI_Offset off, void *buf,
               MPI_Count count, MPI_Datatype type, MPI_Offset *done, const char *call)
{
    *done = 0;
    int small = small_access(e, dir, explicit_offset, off, buf, count, type, done);
    if (small != 0)
        return small > 0 ? MPI_SUCCESS : tmi_error(e, call, -small);
    return full_access(e, dir, explicit_offset, off, buf, count, type, done, call);
}

void tmi_status_bytes(MPI_Status *status, MPI_Offset bytes)
{
    /* Both MPICH and Open MPI keep a status's count in bytes: set as
     * MPI_BYTEs, MPI_Get_count and MPI_Get_elements(_x) with the call's
     * datatype divide it by that datatype's size, as after a real read. */
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = MPI_UNDEFINED;   /* as ROMIO leaves them: unused */
    status->MPI_TAG = MPI_UNDEFINED;
    status->MPI_ERROR = MPI_SUCCESS;
    MPI_Status_set_cancelled(status, 0);
    MPI_Status_set_elements_x(status, MPI_BYTE, bytes);
}

/* ---- nonblocking calls: done at once, handed back as a generalized
 * request that is already complete, so that MPI_Wait/Test/Waitall work
 * and give the status its count. */
static int query_fn(void *extra, MPI_Status *status)
{
    tmi_status_bytes(status, *(MPI_Offset *)extra);
    return MPI_SUCCESS;
}

static int free_fn(void *extra)
{
    free(extra);
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    (void)extra, (void)complete;   /* complete from the start: nothing to cancel */
    return MPI_SUCCESS;
}

int tmi_request_done(MPI_Offset bytes, MPI_Request *request)
{
    MPI_Offset *extra = malloc(sizeof *extra);
    if (!extra)
        return MPI_ERR_NO_MEM;
    *extra = bytes;
    int rc = MPI_Grequest_start(query_fn, free_fn, cancel_fn, extra, request);
    if (rc != MPI_SUCCESS) {
        free(extra);
        return rc;
    }
    return MPI_Grequest_complete(*request);
}

/* ---- read sessions at collective reads (TCIO_MPIIO_READ_SESSIONS) ----
 * A collective read is a call every rank of the file makes, in the same
 * order: where the open agreed to it (tmi_entry.read_sessions), it
 * declares a libtcio read session of each rank's span of the file before
 * the reads, so that on several nodes each aggregator reads its segments
 * once instead of every node reading them from the file (doc/mpiio.md).
 * The session is a hint: a rank whose access is empty, invalid or past
 * the end of the file takes part declaring nothing, and a session that
 * fails (on this rank or another) changes nothing of the access, which
 * reports its own errors as it does without sessions. */

/* This rank's span [*FIRST, *FIRST + *LENGTH) of the file for an access
 * of COUNT TYPEs at OFF (EXPLICIT_OFFSET) or the pointer, cut at the end
 * of the file: nothing (length 0) when there is none.  Below the end of
 * the file no offset through the view overflows. */
static void session_span(tmi_entry *e, int explicit_offset, MPI_Offset off, MPI_Count count,
                         MPI_Datatype type, MPI_Offset *first, MPI_Offset *length)
{
    *first = *length = 0;
    MPI_Count tsize = 0;
    MPI_Offset eof = 0;
    if (count <= 0 || type == MPI_DATATYPE_NULL || (explicit_offset && off < 0) ||
        (!e->view.contiguous && e->view.ft_size <= 0) ||
        MPI_Type_size_x(type, &tsize) != MPI_SUCCESS || tsize <= 0 ||
        count > INT64_MAX / tsize || (explicit_offset && off > INT64_MAX / e->view.esize) ||
        TMI_LIB(tcio_get_size(e->tf, &eof)) != 0)
        return;
    MPI_Offset start = explicit_offset ? off * e->view.esize : e->pos;
    MPI_Offset bytes = (MPI_Offset)count * tsize;
    MPI_Offset stream_eof = tmi_view_stream_end(&e->view, eof);
    if (start >= stream_eof)
        return;
    MPI_Offset stream_end = bytes < stream_eof - start ? start + bytes : stream_eof;
    /* MPI makes a filetype's displacements monotone, so the first and the
     * last byte bound the access unless the tiles themselves interleave
     * (data past the extent, followed by the next tile's): then the span
     * comes out short, or negative and refused, and the session only
     * loads less; the reads are its own either way. */
    *first = tmi_view_byte(&e->view, start);
    *length = tmi_view_byte(&e->view, stream_end - 1) + 1 - *first;
}

/* Before a collective read: the session, where the open agreed to one and
 * the file can be read; counted where it succeeded. */
static void collective_read_session(tmi_entry *e, int explicit_offset, MPI_Offset off,
                                    MPI_Count count, MPI_Datatype type)
{
    if (!e->read_sessions || tmi_access_mode(e) == MPI_MODE_WRONLY)
        return;
    MPI_Offset first, length;
    session_span(e, explicit_offset, off, count, type, &first, &length);
    if (TMI_LIB(tcio_read_session(e->tf, first, length)) == 0)
        e->count[TMI_S_READ_SESSIONS]++;
}

/* ---- the wrappers' served forms ---- */

/* The offset parameter and argument of the explicit-offset forms. */
#define TMI_OFFP_1 MPI_Offset offset,
#define TMI_OFFP_0
#define TMI_OFFA_1 offset,
#define TMI_OFFA_0
#define TMI_OFFP(x) TMI_OFFP_##x
#define TMI_OFFA(x) TMI_OFFA_##x

/* Blocking (also _all: a collective access is each rank's own access;
 * SESSION: a collective read, which may declare a read session first). */
#define TMI_BLOCKING(name, dir, expl, off, buf_t, session)                             \
    int tmi_##name(MPI_File fh, TMI_OFFP(expl) buf_t buf,        \
                   TMI_CT count, MPI_Datatype datatype, MPI_Status *status)            \
    {                                                                                  \
        tmi_entry *e = tmi_served(fh);                                                 \
        MPI_Offset done = 0;                                                           \
        if (session && e)                                                              \
            collective_read_session(e, expl, off, count, datatype);                    \
        /* the small access inline: this is the path of one call per element */       \
        int small = e ? small_access(e, dir, expl, off, (void *)buf, count, datatype,  \
                                     &done)                                            \
                      : 0;                                                             \
        int rc = small > 0 ? MPI_SUCCESS                                               \
                 : small < 0 ? tmi_error(e, "MPI_" #name, -small)                      \
                 : e ? full_access(e, dir, expl, off, (void *)buf, count, datatype,    \
                                   &done, "MPI_" #name)                                \
                     : -1;                                                             \
        if (rc == -1)                                                                  \
            return tmr_##name(fh, TMI_OFFA(expl) buf, count, datatype,      \
                              status);                                                 \
        if (rc == MPI_SUCCESS)                                                         \
            tmi_status_bytes(status, done);                                            \
        return rc;                                                                     \
    }

#define TMI_NONBLOCKING(name, dir, expl, off, buf_t)                                   \
    int tmi_##name(MPI_File fh, TMI_OFFP(expl) buf_t buf,        \
                   TMI_CT count, MPI_Datatype datatype, MPI_Request *request)          \
    {                                                                                  \
        tmi_entry *e = tmi_served(fh);                                                 \
        MPI_Offset done;                                                               \
        int rc = e ? tmi_access(e, dir, expl, off, (void *)buf, count, datatype, &done, \
                                "MPI_" #name)                                          \
                   : -1;                                                               \
        if (rc == -1)                                                                  \
            return tmr_##name(fh, TMI_OFFA(expl) buf, count, datatype,      \
                              request);                                                \
        if (rc == MPI_SUCCESS) {                                                       \
            e->count[TMI_S_NONBLOCKING]++;                                             \
            if (tmi_request_done(done, request) != MPI_SUCCESS) {                      \
                *request = MPI_REQUEST_NULL;                                           \
                rc = tmi_fail(e, "MPI_" #name, MPI_ERR_NO_MEM,                         \
                              "the access is done but its request could not be made"); \
            }                                                                          \
        } else {                                                                       \
            *request = MPI_REQUEST_NULL; /* a program that waits anyway completes */   \
        }                                                                              \
        return rc;                                                                     \
    }

/* Split collectives: the access at _begin, its count kept for _end. */
#define TMI_BEGIN(name, dir, expl, off, buf_t)                                         \
    int tmi_##name(MPI_File fh, TMI_OFFP(expl) buf_t buf,        \
                   TMI_CT count, MPI_Datatype datatype)                                \
    {                                                                                  \
        tmi_entry *e = tmi_served(fh);                                                 \
        MPI_Offset done;                                                               \
        if (e && e->split) /* the real handle never saw the first: refuse here */    \
            return tmi_fail(e, "MPI_" #name, MPI_ERR_OTHER,                            \
                            "a split collective is already active on the file");       \
        int rc = e ? tmi_access(e, dir, expl, off, (void *)buf, count, datatype,       \
                                &done, "MPI_" #name)                                   \
                   : -1;                                                               \
        if (rc == -1)                                                                  \
            return tmr_##name(fh, TMI_OFFA(expl) buf, count, datatype);     \
        if (rc == MPI_SUCCESS) {                                                       \
            e->split = 1;                                                              \
            e->split_bytes = done;                                                     \
        }                                                                              \
        return rc;                                                                     \
    }


#define TMI_FAMILY(SUF)                                                            \
    TMI_BLOCKING(File_write_at##SUF, TMI_WRITE, 1, offset, const void *, 0)       \
    TMI_BLOCKING(File_read_at##SUF, TMI_READ, 1, offset, void *, 0)               \
    TMI_BLOCKING(File_write_at_all##SUF, TMI_WRITE, 1, offset, const void *, 0)   \
    TMI_BLOCKING(File_read_at_all##SUF, TMI_READ, 1, offset, void *, 1)           \
    TMI_BLOCKING(File_write##SUF, TMI_WRITE, 0, 0, const void *, 0)               \
    TMI_BLOCKING(File_read##SUF, TMI_READ, 0, 0, void *, 0)                       \
    TMI_BLOCKING(File_write_all##SUF, TMI_WRITE, 0, 0, const void *, 0)           \
    TMI_BLOCKING(File_read_all##SUF, TMI_READ, 0, 0, void *, 1)                   \
    TMI_NONBLOCKING(File_iwrite_at##SUF, TMI_WRITE, 1, offset, const void *)      \
    TMI_NONBLOCKING(File_iread_at##SUF, TMI_READ, 1, offset, void *)              \
    TMI_NONBLOCKING(File_iwrite_at_all##SUF, TMI_WRITE, 1, offset, const void *)  \
    TMI_NONBLOCKING(File_iread_at_all##SUF, TMI_READ, 1, offset, void *)          \
    TMI_NONBLOCKING(File_iwrite##SUF, TMI_WRITE, 0, 0, const void *)              \
    TMI_NONBLOCKING(File_iread##SUF, TMI_READ, 0, 0, void *)                      \
    TMI_NONBLOCKING(File_iwrite_all##SUF, TMI_WRITE, 0, 0, const void *)          \
    TMI_NONBLOCKING(File_iread_all##SUF, TMI_READ, 0, 0, void *)                  \
    TMI_BEGIN(File_write_at_all_begin##SUF, TMI_WRITE, 1, offset, const void *)   \
    TMI_BEGIN(File_read_at_all_begin##SUF, TMI_READ, 1, offset, void *)           \
    TMI_BEGIN(File_write_all_begin##SUF, TMI_WRITE, 0, 0, const void *)           \
    TMI_BEGIN(File_read_all_begin##SUF, TMI_READ, 0, 0, void *)

#define TMI_CT int
TMI_FAMILY()
#undef TMI_CT
#if TMI_HAVE_LARGE_COUNT
#define TMI_CT MPI_Count
TMI_FAMILY(_c)
#undef TMI_CT
#endif

#define TMI_END(name)                                                         \
    int tmi_##name(MPI_File fh, TMI_END_BUF buf, MPI_Status *status)          \
    {                                                                         \
        tmi_entry *e = tmi_served(fh);                                        \
        if (!e || !e->split)                                                  \
            return tmr_##name(fh, buf, status);                               \
        e->split = 0;                                                         \
        tmi_status_bytes(status, e->split_bytes);                             \
        return MPI_SUCCESS;                                                   \
    }
#define TMI_END_BUF const void *
TMI_END(File_write_at_all_end)
TMI_END(File_write_all_end)
#undef TMI_END_BUF
#define TMI_END_BUF void *
TMI_END(File_read_at_all_end)
TMI_END(File_read_all_end)
#undef TMI_END_BUF
