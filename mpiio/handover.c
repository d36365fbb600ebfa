/* handover.c - what the interposer does when it cannot serve a call, and
 * how libtcio's errors reach the program.
 *
 * A collective call it cannot serve hands the file over: libtcio writes
 * every buffered byte and closes its part (tcio_close, collective over
 * the same ranks as the call), the real handle gets the individual file
 * pointer, and from then on every call goes to the real MPI-IO.  An
 * independent call cannot do that alone (the other ranks would have to
 * close too): it is refused through the file's error handler. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "switch.h"
#include "tmi.h"

int tmi_verbose(void)
{
    /* A switch (switch.h); any other non-empty word is on. */
    const char *v = getenv("TCIO_MPIIO_VERBOSE");
    int on = 1;
    return v && *v && (tci_parse_switch(v, &on) != 0 || on);
}

static void say_on_rank_0(MPI_Comm comm, const char *name, const char *fmt, va_list ap)
{
    int rank = 0;
    if (comm != MPI_COMM_NULL)
        MPI_Comm_rank(comm, &rank);
    if (rank != 0)
        return;
    /* one fprintf, one write: other ranks' lines do not cut into it */
    char msg[TCIO_MAX_ERROR_STRING + 256];   /* room for a whole libtcio reason */
    vsnprintf(msg, sizeof msg, fmt, ap);
    fprintf(stderr, "libtcio_mpiio: %s: %s\n", name, msg);
}

void tmi_say(MPI_Comm comm, const char *name, const char *fmt, ...)
{
    if (!tmi_verbose())
        return;
    va_list ap;
    va_start(ap, fmt);
    say_on_rank_0(comm, name, fmt, ap);
    va_end(ap);
}

void tmi_warn(MPI_Comm comm, const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say_on_rank_0(comm, name, fmt, ap);
    va_end(ap);
}

int tmi_class_of(int tcio_rc)
{
    switch (tcio_rc) {
    case TCIO_SUCCESS:          return MPI_SUCCESS;
    case TCIO_ERR_BAD_HANDLE:   return MPI_ERR_FILE;
    case TCIO_ERR_BAD_ARG:      return MPI_ERR_ARG;
    case TCIO_ERR_BAD_TYPE:     return MPI_ERR_TYPE;
    case TCIO_ERR_BAD_MODE:     return MPI_ERR_AMODE;
    case TCIO_ERR_READ_ONLY:    return MPI_ERR_READ_ONLY;
    case TCIO_ERR_WRITE_ONLY:   return MPI_ERR_ACCESS;
    case TCIO_ERR_BAD_CONFIG:   return MPI_ERR_INFO_VALUE;
    case TCIO_ERR_NO_MEMORY:    return MPI_ERR_NO_MEM;
    case TCIO_ERR_NO_SUCH_FILE: return MPI_ERR_NO_SUCH_FILE;
    case TCIO_ERR_ACCESS:       return MPI_ERR_ACCESS;
    case TCIO_ERR_FILE_EXISTS:  return MPI_ERR_FILE_EXISTS;
    case TCIO_ERR_OPEN:         return MPI_ERR_FILE;
    case TCIO_ERR_NO_SPACE:     return MPI_ERR_NO_SPACE;
    case TCIO_ERR_IO:           return MPI_ERR_IO;
    case TCIO_ERR_REMOTE:       return MPI_ERR_IO;   /* another rank's data failed */
    default:                    return MPI_ERR_OTHER;
    }
}

int tmi_error(tmi_entry *e, const char *call, int tcio_rc)
{
    char why[TCIO_MAX_ERROR_STRING];
    tcio_last_error(why, sizeof why);
    fprintf(stderr, "libtcio_mpiio: %s on %s failed: %s\n", call, e->name, why);
    int cls = tmi_class_of(tcio_rc);
    MPI_File_call_errhandler(e->real, cls);
    return cls;
}

int tmi_fail(tmi_entry *e, const char *call, int cls, const char *why)
{
    fprintf(stderr, "libtcio_mpiio: %s on %s failed: %s\n", call, e->name, why);
    MPI_File_call_errhandler(e->real, cls);
    return cls;
}

int tmi_refuse(tmi_entry *e, const char *call, const char *why)
{
    e->count[TMI_S_REFUSALS]++;
    if (!e->refused_said) {
        /* Always on stderr (once per file and rank): a program that
         * ignores the error code must still leave a trace of why. */
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        fprintf(stderr, "libtcio_mpiio: rank %d: %s on %s refused: %s; the file is served "
                        "by libtcio and this call cannot hand it over alone "
                        "(TCIO_MPIIO_FILES or the info key tcio_mpiio=disable leave a file "
                        "to MPI-IO)\n", rank, call, e->name, why);
        e->refused_said = 1;
    }
    MPI_File_call_errhandler(e->real, MPI_ERR_UNSUPPORTED_OPERATION);
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

int tmi_close_served(tmi_entry *e)
{
    int rc = TMI_LIB(tcio_close(e->tf));
    e->tf = NULL;
    tmi_stats_report(e);
    tmi_table_drop(e);
    return rc;
}

int tmi_handover(tmi_entry *e, const char *call, const char *why)
{
    e->count[TMI_S_HANDOVERS]++;
    tmi_say(e->comm, e->name, "handed over to MPI-IO at %s: %s", call, why);
    MPI_File real = e->real;
    MPI_Offset pos = e->pos / e->view.esize;
    char *name = strdup(e->name);
    tmi_unserved_add(real, e->key, e->amode);   /* MPI-IO's from now on */
    int rc = tmi_close_served(e);
    /* The real handle's view is the interposer's (set_view is applied to
     * both); its pointer moves to where the program's is. */
    int mrc = tmr_File_seek(real, pos, MPI_SEEK_SET);
    if (rc != TCIO_SUCCESS) {
        char msg[TCIO_MAX_ERROR_STRING];
        tcio_last_error(msg, sizeof msg);
        fprintf(stderr, "libtcio_mpiio: %s on %s: handing the file over failed: %s\n", call,
                name ? name : "?", msg);
        free(name);
        int cls = tmi_class_of(rc);
        MPI_File_call_errhandler(real, cls);
        return cls;
    }
    free(name);
    return mrc;
}
