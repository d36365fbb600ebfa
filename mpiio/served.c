/* served.c - open and close, and the calls on a served file that are not
 * data accesses: sync, sizes, the individual pointer, the view,
 * atomicity, the shared-pointer and ordered calls (handed over or
 * refused) and MPI_Finalize. */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "romio_prefix.h"
#include "switch.h"
#include "tmi.h"

/* ---- which files are served ---- */

/* 1 when TCIO_MPIIO_FILES (colon-separated fnmatch patterns) lets NAME
 * be served; unset lets every file; empty or "none" none. */
static int pattern_allows(const char *name)
{
    const char *v = getenv("TCIO_MPIIO_FILES");
    if (!v)
        return 1;
    if (!*v || strcmp(v, "none") == 0)
        return 0;
    char *list = strdup(v), *save = NULL;
    int ok = 0;
    for (char *p = list ? strtok_r(list, ":", &save) : NULL; p && !ok;
         p = strtok_r(NULL, ":", &save))
        ok = fnmatch(p, name, 0) == 0;
    free(list);
    return ok;
}

/* The program's say: the info key tcio_mpiio = enable or disable (in any
 * case); -1 if it did not pass one, -2 (VALUE holds it) for another
 * value. */
static int info_says(MPI_Info info, char value[static 32])
{
    int flag = 0;
    value[0] = '\0';
    if (info == MPI_INFO_NULL ||
        MPI_Info_get(info, "tcio_mpiio", 31, value, &flag) != MPI_SUCCESS || !flag)
        return -1;
    return strcasecmp(value, "enable") == 0 ? 1 : strcasecmp(value, "disable") == 0 ? 0 : -2;
}

/* This rank's view of whether the file may be served; WHY says why not. */
static int may_serve(MPI_Comm comm, const char *name, int amode, MPI_Info info,
                     const char **why)
{
    int size, level;
    const char *env = getenv("TCIO_MPIIO_FILES");
    MPI_Comm_size(comm, &size);
    MPI_Query_thread(&level);
    if (size < 2)
        return *why = "a communicator of one rank (each rank's file its own)", 0;
    if (level == MPI_THREAD_MULTIPLE)
        return *why = "MPI_THREAD_MULTIPLE (libtcio is not thread-safe)", 0;
    if (amode & MPI_MODE_SEQUENTIAL)
        return *why = "MPI_MODE_SEQUENTIAL (shared file pointer only)", 0;
    if (env && (!*env || strcmp(env, "none") == 0))
        return *why = "TCIO_MPIIO_FILES is empty or none", 0;
    char value[32];
    int says = info_says(info, value);
    if (says == -2) {
        /* A typo must not pass for a choice unsaid. */
        tmi_warn(comm, name, "the info key tcio_mpiio=%s is neither enable nor disable: ignored",
                 value);
        says = -1;
    }
    if (says == 0)
        return *why = "the info key tcio_mpiio=disable", 0;
    if (says < 0 && !pattern_allows(name))
        return *why = "no pattern of TCIO_MPIIO_FILES matches", 0;
    return 1;
}

/* TCIO_MPIIO_READ_SESSIONS: 1 for on, 1, yes or true (any case), 0 for
 * unset, off, 0, no or false, -1 for any other value (a typo must not
 * pass for a choice: the open says so). */
static int read_sessions_wanted(void)
{
    const char *v = getenv("TCIO_MPIIO_READ_SESSIONS");
    int on = 0;
    return !v ? 0 : tci_parse_switch(v, &on) == 0 ? on : -1;
}

/* Raise class CLS of an open that the interposer fails after the real
 * open succeeded (REAL, about to be closed) on MPI_FILE_NULL's error
 * handler, as MPI wants for a failed open.  Where that handler is
 * MPI_ERRORS_RETURN, the default, returning the class is all that calling
 * it would do.  Open MPI 4.1 refuses MPI_File_call_errhandler on
 * MPI_FILE_NULL (an invalid handle: MPI_ERR_ARG raised on
 * MPI_COMM_WORLD, which aborted the job instead of calling the program's
 * handler, a helper's audit found): there the handler is called on REAL,
 * which took MPI_FILE_NULL's handler at its open, so the program's
 * handler runs with a handle that the interposer closes after it returns
 * (doc/mpiio.md). */
static void raise_on_file_null(MPI_File real, int cls)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    if (MPI_File_get_errhandler(MPI_FILE_NULL, &eh) != MPI_SUCCESS)
        eh = MPI_ERRHANDLER_NULL;
    bool returning = eh == MPI_ERRORS_RETURN;
    if (eh != MPI_ERRHANDLER_NULL)   /* a reference of its own, MPI's own handlers too */
        MPI_Errhandler_free(&eh);
    if (returning)
        return;
#ifdef OPEN_MPI
    MPI_File_call_errhandler(real, cls);
#else
    (void)real;
    MPI_File_call_errhandler(MPI_FILE_NULL, cls);
#endif
}

__attribute__((tls_model("initial-exec"))) _Thread_local MPI_Comm tmi_opening = MPI_COMM_NULL;
__attribute__((tls_model("initial-exec"))) _Thread_local MPI_Comm tmi_open_dup = MPI_COMM_NULL;

/* The real open, its collectives on COMM yielding until the MPI library
 * duplicates it, and then on the duplicate (collectives.c; the --wrap
 * form has none of it).  A failed open frees ROMIO's duplicate, so a
 * duplicate still marked was made by program code (an error handler):
 * its mark goes. */
static int real_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                     MPI_File *fh)
{
    MPI_Comm outer = tmi_opening, outer_dup = tmi_open_dup;
    tmi_opening = comm;
    tmi_open_dup = MPI_COMM_NULL;
    int rc = tmr_File_open(comm, filename, amode, info, fh);
#ifndef TMI_WRAP
    if (rc != MPI_SUCCESS && tmi_open_dup != MPI_COMM_NULL)
        tmi_unmark_private(tmi_open_dup);
#endif
    tmi_opening = outer;
    tmi_open_dup = outer_dup;
    return rc;
}

char *tmi_file_key(const char *filename)
{
    /* By device and inode where the name (or it past a ROMIO prefix)
     * reaches one file; else by its path (a missing file, or both
     * "ufs:x" and another x, which one MPI-IO opens depending on its
     * component). */
    struct stat st;
    if (tci_file_system_name(filename, &st, false)) {
        char key[64];
        snprintf(key, sizeof key, "dev %llu ino %llu", (unsigned long long)st.st_dev,
                 (unsigned long long)st.st_ino);
        return strdup(key);
    }
    char *real = realpath(filename, NULL);
    return real ? real : strdup(filename);
}

int tmi_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                  MPI_File *fh)
{
    if (tmi_depth > 0)
        return real_open(comm, filename, amode, info, fh);
    int64_t yielded_base = tmi_yielded_collectives;
    int rc = real_open(comm, filename, amode, info, fh);
    if (rc != MPI_SUCCESS)
        return rc;
    /* A record of this handle value is stale: its handle was closed
     * where no close reached the record. */
    tmi_unserved_drop(*fh);

    /* The file's identity for a second open: its device and inode, so
     * that hard links and prefixed names are the same file. */
    char *key = tmi_file_key(filename);
    const char *why = "";
    int want = may_serve(comm, filename, amode, info, &why);
    /* A handle of the file that this process opened before and does not
     * serve (on MPI_COMM_SELF, say): a served handle would buffer behind
     * it and read stale bytes after its writes, so this one is not
     * served either (on any rank: the decision is agreed below). */
    if (want && tmi_unserved_open(key)) {
        want = 0;
        why = "another handle of the file, not served, is open on some rank";
    }
    /* A second open of a served file: its handle is handed over if every
     * rank of this open found it open on the same ranks (the handover's
     * close is collective over them), else this open fails on every rank:
     * two handles, one of them buffering in libtcio, would write stale
     * bytes over each other's (tcio.h, Visibility).  Each rank knows only
     * its own table and its own realpath of the name, so the ranks agree
     * before anyone hands over: a handover on only some ranks would hang. */
    tmi_entry *first = key ? tmi_table_find_key(key) : NULL;
    int same_ranks = 0;
    if (first) {
        int cmp;
        MPI_Comm_compare(first->comm, comm, &cmp);
        same_ranks = cmp == MPI_IDENT || cmp == MPI_CONGRUENT;
    }
    /* With the decision, the kept communicator each rank would open the
     * file on (comms.c): taken only if every rank proposes the same, and
     * a new one made only if no rank has one for this group and every
     * rank has room for it. */
    long long proposal = want ? tmi_comm_proposal(comm) : -1;
    /* Read sessions are collective: on only where every rank wants them. */
    int sessions = read_sessions_wanted();
    long long flags[8] = { !want, first != NULL, !same_ranks, proposal, -proposal,
                           !tmi_comm_can_keep(), sessions != 1, sessions < 0 },
              all[8];
    if (tmi_allreduce(flags, all, 8, MPI_LONG_LONG, MPI_MAX, comm) != MPI_SUCCESS) {
        /* No agreement: not served (MPI's own error handling decides
         * about the other ranks; the program keeps its real handle). */
        all[0] = 1;
        all[1] = all[2] = 0;
    }
    if (all[1] && all[2]) {
        free(key);
        fprintf(stderr, "libtcio_mpiio: MPI_File_open(%s) refused: the file is open and "
                        "served on other ranks' communicator; a second handle would see "
                        "stale bytes\n", filename);
        raise_on_file_null(*fh, MPI_ERR_FILE_IN_USE);
        tmr_File_close(fh);
        return MPI_ERR_FILE_IN_USE;
    }
    if (all[1]) {
        tmi_handover(first, "MPI_File_open", "the file was opened a second time");
        /* MPI_MODE_APPEND put this handle's pointers at the end of the file
         * before the handover wrote out the first handle's buffered bytes:
         * at the end as it is now (collective, as the open is; where a
         * seek fails the pointers stay as the real open left them). */
        if (amode & MPI_MODE_APPEND) {
            tmr_File_seek(*fh, 0, MPI_SEEK_END);
            tmr_File_seek_shared(*fh, 0, MPI_SEEK_END);
        }
        want = 0;
        why = "a second handle of a served file";
    } else if (all[0]) {
        if (want)
            why = "another rank of the communicator may not serve it";
        want = 0;
    }
    if (!want) {
        tmi_unserved_add(*fh, key, amode);
        free(key);
        tmi_say(comm, filename, "not served: %s", why);
        return MPI_SUCCESS;
    }

    /* Where libtcio's file is opened: the kept communicator every rank
     * proposed; else a new one, kept once the open succeeds, if no rank
     * had one for this group; else (another file of this group is open,
     * no room, or ranks that disagree) the program's communicator, as
     * without kept ones, with a duplicate of the entry's own for the
     * interposer's collectives. */
    MPI_Comm on = comm, mine_comm = MPI_COMM_NULL;
    int fresh = all[3] == -1 && all[4] == 1 && !all[5];
    if (all[3] >= 0 && all[3] == -all[4]) {
        on = tmi_comm_take(all[3], comm);
    } else if (fresh) {
        /* libtcio's open below is collective over the new communicator:
         * every rank needs one, so a failed duplicate is agreed on. */
        int dup_ok = tmi_comm_dup(comm, &on) == MPI_SUCCESS, all_dup_ok = 0;
        if (!dup_ok)
            on = MPI_COMM_NULL;
        if (tmi_allreduce(&dup_ok, &all_dup_ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
            all_dup_ok = 0;
        if (!all_dup_ok) {
            if (on != MPI_COMM_NULL)
                MPI_Comm_free(&on);
            tmi_unserved_add(*fh, key, amode);
            free(key);
            tmi_say(comm, filename, "not served: MPI_Comm_dup failed");
            return MPI_SUCCESS;
        }
    }
    /* The real open already created the file (and checked MPI_MODE_EXCL);
     * the real close deletes it (MPI_MODE_DELETE_ON_CLOSE). */
    tcio_file *tf = NULL;
    int trc = TMI_LIB(tcio_open_comm(on, filename,
                                     amode & ~(MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE), info,
                                     &tf));
    /* Every rank serves the file or none (the close is collective), so
     * the ranks agree on libtcio's open, the entry's memory and duplicate
     * and the new communicator's identity. */
    tmi_entry *e = trc == TCIO_SUCCESS ? tmi_table_add(*fh) : NULL;
    int ok = e && (e->name = strdup(filename)) != NULL;
    if (on == comm && trc == TCIO_SUCCESS)
        ok = tmi_comm_dup(comm, &mine_comm) == MPI_SUCCESS && ok;
    long long mine[2] = { !ok, fresh ? tmi_comm_new_id(comm) : -1 }, agreed[2];
    if (tmi_allreduce(mine, agreed, 2, MPI_LONG_LONG, MPI_MAX, comm) != MPI_SUCCESS)
        agreed[0] = 1;   /* no agreement: the open fails */
    if (!agreed[0]) {
        if (fresh)
            tmi_comm_keep(on, agreed[1]);
        e->comm = on == comm ? mine_comm : on;
        e->own_comm = on == comm;
        e->key = key;
        e->tf = tf;
        tmi_stats_settings(e);
        e->amode = amode;
        e->read_sessions = !all[6];
        if (all[7])
            tmi_warn(comm, filename, "TCIO_MPIIO_READ_SESSIONS is neither on nor off on some "
                                     "rank: collective reads declare no read sessions");
        e->yielded_base = yielded_base;
        if (amode & MPI_MODE_APPEND)   /* the pointer starts at the end */
            tmr_File_get_position(*fh, &e->pos);
        int np;
        MPI_Comm_size(comm, &np);
        tmi_say(comm, filename, "served by libtcio (%d ranks)%s", np,
                e->read_sessions ? ", collective reads declaring read sessions" : "");
        return MPI_SUCCESS;
    }
    if (trc != TCIO_SUCCESS)        /* the program keeps its real handle */
        tmi_unserved_add(*fh, key, amode);
    free(key);
    if (e)
        tmi_table_drop(e);          /* its comm is still MPI_COMM_NULL */
    if (tf)
        (void)TMI_LIB(tcio_close(tf));
    if (mine_comm != MPI_COMM_NULL)
        MPI_Comm_free(&mine_comm);
    if (fresh)
        MPI_Comm_free(&on);
    else if (on != comm)
        tmi_comm_give_back(on);
    if (trc != TCIO_SUCCESS) {
        /* libtcio's open fails alike on every rank: the file is not
         * served, the real handle is the program's. */
        char msg[TCIO_MAX_ERROR_STRING];
        tcio_last_error(msg, sizeof msg);
        /* Settings libtcio refuses (a TCIO_* typo) are said always:
         * otherwise every file would go to MPI-IO unexplained. */
        if (trc == TCIO_ERR_BAD_CONFIG)
            tmi_warn(comm, filename, "not served: libtcio refused its settings: %s", msg);
        else
            tmi_say(comm, filename, "not served: libtcio could not open it: %s", msg);
        return MPI_SUCCESS;
    }
    /* Out of memory on some rank: the open fails on every rank, through
     * MPI_FILE_NULL's error handler as every failed open. */
    raise_on_file_null(*fh, MPI_ERR_NO_MEM);
    tmr_File_close(fh);
    return MPI_ERR_NO_MEM;
}

int tmi_File_close(MPI_File *fh)
{
    tmi_entry *e = fh ? tmi_served(*fh) : NULL;
    if (!e) {
        /* Whatever the guard: a file error handler's close inside a
         * forwarded call is the program's (libtcio's own handles are
         * never recorded). */
        if (fh)
            tmi_unserved_drop(*fh);
        return tmr_File_close(fh);
    }
    MPI_File real = e->real;
    int barrier_rc = e->barrier_rc;     /* a flush at a barrier failed since */
    int rc = tmi_close_served(e);
    if (rc == TCIO_SUCCESS && barrier_rc != TCIO_SUCCESS) {
        rc = barrier_rc;
        fprintf(stderr, "libtcio_mpiio: MPI_File_close: a flush at an earlier MPI_Barrier "
                        "failed (said then)\n");
    } else if (rc != TCIO_SUCCESS) {
        char msg[TCIO_MAX_ERROR_STRING];
        tcio_last_error(msg, sizeof msg);
        fprintf(stderr, "libtcio_mpiio: MPI_File_close failed: %s\n", msg);
    }
    if (rc != TCIO_SUCCESS) {
        int cls = tmi_class_of(rc);
        MPI_File_call_errhandler(real, cls);
        tmr_File_close(fh);
        return cls;
    }
    return tmr_File_close(fh);
}

/* ---- a program's barrier ---------------------------------------------- */

/* Whether COMM's ranks, in order, are E's file's. */
static int orders_file(MPI_Comm comm, const tmi_entry *e)
{
    return e->comm != MPI_COMM_NULL && tmi_comm_orders(comm, e->comm);
}

/* A program's MPI_Barrier on a communicator whose ranks are a served
 * writable file's first flushes that file (tcio_flush, collective over
 * the same ranks, every rank taking the files in their common open order).
 * Programs order writes of the same bytes by different ranks with a bare
 * barrier, as parallel HDF5 does between the fill values it writes at a
 * chunked dataset's creation and the ranks' own data: MPI asks for
 * sync-barrier-sync there, but ROMIO writes through, so the later write
 * wins.  libtcio buffers writes, so without this the fill could land on
 * the data (doc/mpiio.md).  A failed flush is said on stderr and
 * kept (barrier_rc) for the file's next MPI_File_sync or its close. */
static void flush_before_barrier(MPI_Comm comm)
{
    for (size_t i = 0; i < tmi_table_count(); i++) {
        tmi_entry *e = tmi_table_at(i);
        if (!e->tf || !(e->amode & (MPI_MODE_WRONLY | MPI_MODE_RDWR)) || !orders_file(comm, e))
            continue;
        e->count[TMI_S_BARRIER_FLUSHES]++;
        tmi_cache_drop(e, 0, -1);   /* other ranks' writes are visible now */
        /* A barrier has no file to report to: the failure waits for the
         * file's next sync or its close (a failed move of level 1 is not
         * sticky in libtcio, so it would otherwise go unsaid). */
        int rc = TMI_LIB(tcio_flush(e->tf));
        if (rc != TCIO_SUCCESS && e->barrier_rc == TCIO_SUCCESS) {
            e->barrier_rc = rc;
            char msg[TCIO_MAX_ERROR_STRING];
            tcio_last_error(msg, sizeof msg);
            fprintf(stderr, "libtcio_mpiio: %s: the flush at MPI_Barrier failed (the file's "
                            "next MPI_File_sync or its close returns it): %s\n", e->name, msg);
        }
    }
}

int tmi_Barrier(MPI_Comm comm)
{
#ifndef TMI_WRAP
    int err;
    if (tmi_yielding_barrier(comm, &err))
        return err;
#endif
    /* Not libtcio's own barriers (nor the MPI library's on its private
     * communicators, above); a handler's inside a forwarded call is the
     * program's, and flushes as the other ranks' barriers do. */
    if (tmi_in_lib == 0 && comm != MPI_COMM_NULL)
        flush_before_barrier(comm);
    return tmr_Barrier(comm);
}

int tmi_File_sync(MPI_File fh)
{
    tmi_entry *e = tmi_served(fh);
    if (!e)
        return tmr_File_sync(fh);
    e->count[TMI_S_SYNCS]++;
    tmi_cache_drop(e, 0, -1);   /* other ranks' writes are visible now */
    int rc = TMI_LIB(tcio_sync(e->tf));
    if (rc == TCIO_SUCCESS && e->barrier_rc != TCIO_SUCCESS) {
        rc = e->barrier_rc;
        e->barrier_rc = TCIO_SUCCESS;
        fprintf(stderr, "libtcio_mpiio: MPI_File_sync: a flush at an earlier MPI_Barrier "
                        "failed (said then)\n");
        int cls = tmi_class_of(rc);
        MPI_File_call_errhandler(e->real, cls);
        return cls;
    }
    return rc ? tmi_error(e, "MPI_File_sync", rc) : MPI_SUCCESS;
}

int tmi_File_get_size(MPI_File fh, MPI_Offset *size)
{
    tmi_entry *e = tmi_served(fh);
    if (!e || !size)
        return tmr_File_get_size(fh, size);
    int rc = TMI_LIB(tcio_get_size(e->tf, size));
    return rc ? tmi_error(e, "MPI_File_get_size", rc) : MPI_SUCCESS;
}

int tmi_File_set_size(MPI_File fh, MPI_Offset size)
{
    tmi_entry *e = tmi_served(fh);
    if (!e || size < 0 ||
        tmi_access_mode(e) == MPI_MODE_RDONLY)
        return tmr_File_set_size(fh, size);
    tmi_cache_drop(e, 0, -1);
    int rc = TMI_LIB(tcio_set_size(e->tf, size));
    return rc ? tmi_error(e, "MPI_File_set_size", rc) : MPI_SUCCESS;
}

/* Preallocation as an extending set_size after a sync (which makes every
 * rank agree on the size): the first SIZE bytes then exist and read as
 * zero where nobody wrote; whether the file system reserves blocks for
 * them is its own affair (a sparse file does not). */
int tmi_File_preallocate(MPI_File fh, MPI_Offset size)
{
    tmi_entry *e = tmi_served(fh);
    if (!e || size < 0 ||
        tmi_access_mode(e) == MPI_MODE_RDONLY)
        return tmr_File_preallocate(fh, size);
    MPI_Offset now = 0;
    tmi_cache_drop(e, 0, -1);
    int rc = TMI_LIB(tcio_sync(e->tf));
    if (rc == 0)
        rc = TMI_LIB(tcio_get_size(e->tf, &now));
    if (rc == 0 && size > now)
        rc = TMI_LIB(tcio_set_size(e->tf, size));
    return rc ? tmi_error(e, "MPI_File_preallocate", rc) : MPI_SUCCESS;
}

/* ---- the individual file pointer, in etypes through the view ---- */

int tmi_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    tmi_entry *e = tmi_served(fh);
    if (!e)
        return tmr_File_seek(fh, offset, whence);
    MPI_Offset base;
    switch (whence) {
    case MPI_SEEK_SET:
        base = 0;
        break;
    case MPI_SEEK_CUR:
        base = e->pos / e->view.esize;
        break;
    case MPI_SEEK_END: {
        MPI_Offset size = 0;
        int rc = TMI_LIB(tcio_get_size(e->tf, &size));
        if (rc != TCIO_SUCCESS)
            return tmi_error(e, "MPI_File_seek", rc);
        MPI_Offset s = tmi_view_stream_end(&e->view, size);
        base = (s + e->view.esize - 1) / e->view.esize;
        break;
    }
    default:
        return tmr_File_seek(fh, offset, whence);   /* the real call's error */
    }
    /* Negative, or past what an MPI_Offset holds in bytes through the view
     * (the position would wrap around to a byte before the view). */
    MPI_Offset pos;
    if ((offset > 0 && base > INT64_MAX - offset) ||
        !tmi_view_locate(&e->view, base + offset, 0, &pos)) {
        MPI_File_call_errhandler(fh, MPI_ERR_ARG);
        return MPI_ERR_ARG;
    }
    e->pos = pos;
    return MPI_SUCCESS;
}

int tmi_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    tmi_entry *e = tmi_served(fh);
    if (!e || !offset)
        return tmr_File_get_position(fh, offset);
    *offset = e->pos / e->view.esize;
    return MPI_SUCCESS;
}

int tmi_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    tmi_entry *e = tmi_served(fh);
    if (!e || !disp || offset < 0)
        return tmr_File_get_byte_offset(fh, offset, disp);
    /* past what an MPI_Offset holds through the view: refused as seek does */
    MPI_Offset s;
    if (!tmi_view_locate(&e->view, offset, 0, &s)) {
        MPI_File_call_errhandler(fh, MPI_ERR_ARG);
        return MPI_ERR_ARG;
    }
    *disp = tmi_view_byte(&e->view, s);
    return MPI_SUCCESS;
}

/* ---- the view: applied to the real handle first (it judges the
 * arguments and keeps MPI_File_get_view right), then flattened; a view
 * libtcio cannot serve hands the file over. */
int tmi_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, MPI_Info info)
{
    tmi_entry *e = tmi_served(fh);
    int rc = tmr_File_set_view(fh, disp, etype, filetype, datarep, info);
    if (!e || rc != MPI_SUCCESS)
        return rc;
    e->split = 0;
    e->pos = 0;   /* set_view resets the individual pointer, also for a handover */
    char why[160];
    if (!datarep || strcmp(datarep, "native") != 0) {
        snprintf(why, sizeof why, "the data representation \"%.64s\"",
                 datarep ? datarep : "(null)");
        return tmi_handover(e, "MPI_File_set_view", why);
    }
    tmi_view v;
    int failed = tmi_view_make(&v, disp, etype, filetype, why, sizeof why) != 0;
    /* Filetypes differ between ranks, so one rank's view may not flatten
     * (too many runs, no memory) while the others' do: the ranks agree, and
     * hand over together, since the handover's close is collective. */
    int any_failed = failed;
    if (tmi_allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, e->comm) != MPI_SUCCESS)
        any_failed = 1;   /* no agreement: hand over rather than guess */
    if (any_failed) {
        if (!failed) {
            tmi_view_free(&v);
            snprintf(why, sizeof why, "another rank's filetype");
        }
        return tmi_handover(e, "MPI_File_set_view", why);
    }
    tmi_view_free(&e->view);
    e->view = v;
    return MPI_SUCCESS;
}

int tmi_File_set_atomicity(MPI_File fh, int flag)
{
    tmi_entry *e = tmi_served(fh);
    if (e && flag) {
        int rc = tmi_handover(e, "MPI_File_set_atomicity", "atomic mode");
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return tmr_File_set_atomicity(fh, flag);
}

/* ---- shared file pointer and ordered calls ---- */

int tmi_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    tmi_entry *e = tmi_served(fh);
    if (e) {
        int rc = tmi_handover(e, "MPI_File_seek_shared", "the shared file pointer");
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return tmr_File_seek_shared(fh, offset, whence);
}

/* A refused nonblocking call leaves MPI_REQUEST_NULL, which a program that
 * waits on it anyway completes at once (the blocking forms' status is
 * left alone, as MPI leaves it on errors). */
static void refused_request(MPI_Request *request) { *request = MPI_REQUEST_NULL; }
static void refused_status(MPI_Status *status) { (void)status; }

#define TMI_REFUSED(name, buf_t, CT, last_t, last, refused)                             \
    int tmi_##name(MPI_File fh, buf_t buf, CT count, MPI_Datatype datatype, last_t last) \
    {                                                                                    \
        tmi_entry *e = tmi_served(fh);                                                   \
        if (!e)                                                                          \
            return tmr_##name(fh, buf, count, datatype, last);                          \
        refused(last);                                                                   \
        return tmi_refuse(e, "MPI_" #name, "the shared file pointer is not served");     \
    }

#define TMI_ORDERED(name, buf_t, CT, last_t, last)                                      \
    int tmi_##name(MPI_File fh, buf_t buf, CT count, MPI_Datatype datatype, last_t last) \
    {                                                                                    \
        tmi_entry *e = tmi_served(fh);                                                   \
        if (e) {                                                                         \
            int rc = tmi_handover(e, "MPI_" #name, "an ordered collective call");      \
            if (rc != MPI_SUCCESS)                                                       \
                return rc;                                                               \
        }                                                                                \
        return tmr_##name(fh, buf, count, datatype, last);                              \
    }

#define TMI_ORDERED_BEGIN(name, buf_t, CT)                                              \
    int tmi_##name(MPI_File fh, buf_t buf, CT count, MPI_Datatype datatype)             \
    {                                                                                    \
        tmi_entry *e = tmi_served(fh);                                                   \
        if (e) {                                                                         \
            int rc = tmi_handover(e, "MPI_" #name, "an ordered collective call");      \
            if (rc != MPI_SUCCESS)                                                       \
                return rc;                                                               \
        }                                                                                \
        return tmr_##name(fh, buf, count, datatype);                                    \
    }

#define TMI_SHARED_FAMILY(SUF, CT)                                                       \
    TMI_REFUSED(File_write_shared##SUF, const void *, CT, MPI_Status *, status,          \
                refused_status)                                                          \
    TMI_REFUSED(File_read_shared##SUF, void *, CT, MPI_Status *, status, refused_status) \
    TMI_REFUSED(File_iwrite_shared##SUF, const void *, CT, MPI_Request *, request,       \
                refused_request)                                                         \
    TMI_REFUSED(File_iread_shared##SUF, void *, CT, MPI_Request *, request,              \
                refused_request)                                                         \
    TMI_ORDERED(File_write_ordered##SUF, const void *, CT, MPI_Status *, status)         \
    TMI_ORDERED(File_read_ordered##SUF, void *, CT, MPI_Status *, status)                \
    TMI_ORDERED_BEGIN(File_write_ordered_begin##SUF, const void *, CT)                   \
    TMI_ORDERED_BEGIN(File_read_ordered_begin##SUF, void *, CT)

TMI_SHARED_FAMILY(, int)
#if TMI_HAVE_LARGE_COUNT
TMI_SHARED_FAMILY(_c, MPI_Count)
#endif

/* An ordered split collective's end comes after its begin handed the file
 * over: the real handle has it. */
int tmi_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    return tmr_File_write_ordered_end(fh, buf, status);
}

int tmi_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return tmr_File_read_ordered_end(fh, buf, status);
}

/* ---- MPI_Finalize: files left open are closed by libtcio first, while
 * MPI and libtcio's cached windows (freed by its own finalize hook) are
 * still there, in open order (the same on every rank).  The real handles
 * stay open, as the program left them. */
int tmi_Finalize(void)
{
    if (tmi_depth == 0) {
        tmi_entry *e;
        while ((e = tmi_table_first()) != NULL) {
            tmi_say(e->comm, e->name, "closed at MPI_Finalize (the program left it open)");
            int barrier_rc = e->barrier_rc;
            int rc = tmi_close_served(e);
            if (rc == TCIO_SUCCESS && barrier_rc != TCIO_SUCCESS) {
                fprintf(stderr, "libtcio_mpiio: a file left open at MPI_Finalize: a flush "
                                "at an earlier MPI_Barrier failed (said then)\n");
                continue;
            }
            if (rc != TCIO_SUCCESS) {
                char msg[TCIO_MAX_ERROR_STRING];
                tcio_last_error(msg, sizeof msg);
                fprintf(stderr, "libtcio_mpiio: closing a file left open at MPI_Finalize "
                                "failed: %s\n", msg);
            }
        }
    }
    return tmr_Finalize();
}
