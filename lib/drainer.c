/* drainer.c - the background drain thread (drainer.h).
 *
 * One thread per process, started at the first job and ended at
 * MPI_Finalize (tci_drainer_stop).  Jobs are written in the order they were
 * handed over.  Everything the main thread and the thread share (the job
 * list, each job's state, the pending byte count) is guarded by one mutex;
 * the thread sleeps on WORK while no job is queued and the main thread on
 * DONE while it waits for a job, so neither spins.  A job's slots, its
 * descriptor, its sieve buffer and its result belong to the thread from
 * the moment it takes the job (under the mutex) until it marks it done
 * (under the mutex), and to the main thread before and after: the mutex's
 * acquire and release order every access to them.
 *
 * What the thread may touch: the job (its slots' memory, read only; its
 * descriptor; its buffer; its result) and the segment writer of segio.c,
 * which calls nothing but the sink below and the bitmap helpers.  What it
 * never does: call MPI (the application may have asked for
 * MPI_THREAD_SINGLE, tcio.h), allocate memory (MPI libraries hook mmap and
 * munmap: UCX's memory events would run in this thread), touch a
 * tcio_file, the error record of tcio_last_error or the statistics.  It
 * blocks every signal, so that the application's handlers run in its own
 * threads. */
#define _POSIX_C_SOURCE 200809L   /* pread, pwrite, O_CLOEXEC, clock_gettime */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "drainer.h"
#include "romio_prefix.h"
#include "segio.h"
#include "tcio.h"

enum job_state { QUEUED, RUNNING, DONE };

struct tci_drain_job {
    tci_drain_job  *next;          /* the live jobs, oldest first */
    enum job_state  state;
    char           *name;
    unsigned long long device, inode;
    int             fd;
    bool            readable;
    int             segment_size;
    tci_drain_slot *slots;
    int             nslots;
    int64_t         bytes;         /* NSLOTS segments: counted as pending */
    char           *buffer;        /* the sieve's, when READABLE */
    /* The first failure, as the thread saw it: the main thread words it. */
    const char     *failed_call;
    int             failed_errno;
    long long       failed_offset;
    tci_drain_result result;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t  work = PTHREAD_COND_INITIALIZER;   /* a job was queued, or stop */
static pthread_cond_t  done = PTHREAD_COND_INITIALIZER;   /* a job was written */
static tci_drain_job  *jobs;           /* guarded by LOCK */
static int64_t         pending_bytes;  /* guarded by LOCK */
static bool            stopping;       /* guarded by LOCK */
static bool            running;        /* main thread only */
static pthread_t       thread;

/* ---- the POSIX sink (called by the thread only) --------------------------- */

/* Note the first failure of JOB and return its tcio code. */
static int failed(tci_drain_job *job, const char *call, int err, long long offset)
{
    if (!job->failed_call) {
        job->failed_call = call;
        job->failed_errno = err;
        job->failed_offset = offset;
    }
    return err == ENOSPC || err == EDQUOT ? TCIO_ERR_NO_SPACE : TCIO_ERR_IO;
}

static int posix_write_at(void *file, MPI_Offset offset, const char *data, int len)
{
    tci_drain_job *job = file;
    while (len > 0) {
        ssize_t n = pwrite(job->fd, data, (size_t)len, (off_t)offset);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)   /* pwrite of a positive length never returns 0 unless it cannot go on */
            return failed(job, "pwrite", n < 0 ? errno : EIO, (long long)offset);
        data += n;
        offset += n;
        len -= (int)n;
    }
    return TCIO_SUCCESS;
}

/* The file's bytes [OFFSET, OFFSET+LEN), zeros past its end.  A failure
 * is no loss (the sieve writes the rest per run) and is not reported. */
static int posix_read_at(void *file, MPI_Offset offset, char *buf, int len)
{
    tci_drain_job *job = file;
    int got = 0;
    while (got < len) {
        ssize_t n = pread(job->fd, buf + got, (size_t)(len - got), (off_t)(offset + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return TCIO_ERR_IO;
        if (n == 0)
            break;
        got += (int)n;
    }
    memset(buf + got, 0, (size_t)(len - got));
    return TCIO_SUCCESS;
}

static char *posix_sieve_buffer(void *file)
{
    return ((tci_drain_job *)file)->buffer;
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Write every slot of JOB (going on after a failure, so that the others
 * still reach the file), then close its descriptor. */
static void run_job(tci_drain_job *job)
{
    double t0 = seconds_now();
    tci_sink sink = { .write_at = posix_write_at, .read_at = posix_read_at,
                      .sieve_buffer = posix_sieve_buffer, .file = job };
    tci_drain_result *r = &job->result;
    for (int i = 0; i < job->nslots; i++) {
        const tci_drain_slot *s = &job->slots[i];
        int rc = tci_segment_write(&sink, job->segment_size, s->segment, s->data, s->bitmap);
        if (r->rc == TCIO_SUCCESS)
            r->rc = rc;
        r->segments++;
    }
    /* close(2) may report a write that failed late (NFS): a failure too. */
    if (close(job->fd) != 0 && errno != EINTR) {
        int rc = failed(job, "close", errno, -1);
        if (r->rc == TCIO_SUCCESS)
            r->rc = rc;
    }
    job->fd = -1;
    r->sieved = sink.sieved;
    r->seconds = seconds_now() - t0;
}

static tci_drain_job *first_queued(void)
{
    for (tci_drain_job *j = jobs; j; j = j->next)
        if (j->state == QUEUED)
            return j;
    return NULL;
}

static void *drain_thread(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        tci_drain_job *job = first_queued();
        if (!job) {
            if (stopping)
                break;
            pthread_cond_wait(&work, &lock);
            continue;
        }
        job->state = RUNNING;
        pthread_mutex_unlock(&lock);
        run_job(job);
        pthread_mutex_lock(&lock);
        job->state = DONE;
        pending_bytes -= job->bytes;
        pthread_cond_broadcast(&done);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* ---- the main thread's side ------------------------------------------------ */

static bool same_file(const struct stat *st, unsigned long long device, unsigned long long inode)
{
    return (unsigned long long)st->st_dev == device && (unsigned long long)st->st_ino == inode;
}

int tci_drainer_open(const tci_file_identity *id, bool *readable, char *why, int why_size)
{
    struct stat st;
    if (!id->name) {
        snprintf(why, (size_t)why_size, "the file's name is not known");
        return -1;
    }
    *readable = true;
    int fd = open(id->name, O_RDWR | O_CLOEXEC);
    if (fd < 0 && (errno == EACCES || errno == EPERM)) {
        *readable = false;
        fd = open(id->name, O_WRONLY | O_CLOEXEC);
    }
    if (fd < 0) {
        snprintf(why, (size_t)why_size, "open(\"%s\") failed: %s", id->name, strerror(errno));
        return -1;
    }
    /* The descriptor must reach the very file the library opened: the
     * program may have changed directory (a relative name), or the file
     * been renamed or replaced, since tcio_open. */
    if (fstat(fd, &st) != 0 || !same_file(&st, id->device, id->inode)) {
        close(fd);
        snprintf(why, (size_t)why_size, "\"%s\" no longer names the file opened", id->name);
        return -1;
    }
    return fd;
}

/* The thread's stack: the library's own memory, not glibc's.  When a
 * thread whose stack glibc allocated ends, glibc gives the stack's pages
 * back with madvise(2) from that thread, and MPI libraries that hook the
 * memory calls (UCX's memory events, under MPICH and Open MPI) then run
 * their handlers in it; glibc leaves a stack it was given alone. */
#define STACK_BYTES (1024 * 1024)   /* ThreadSanitizer wants 0.9 MiB */
static void *stack;

/* Start the thread with every signal blocked (it inherits the mask). */
static int start_thread(void)
{
    pthread_attr_t attr;
    if (!stack && !(stack = malloc(STACK_BYTES)))
        return ENOMEM;
    if (pthread_attr_init(&attr) != 0)
        return ENOMEM;
    int err = pthread_attr_setstack(&attr, stack, STACK_BYTES);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (err == 0)
        err = pthread_create(&thread, &attr, drain_thread, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (err != 0)
        return err;
    running = true;
    return 0;
}

static void free_job(tci_drain_job *job)
{
    free(job->name);
    free(job->slots);
    free(job->buffer);
    free(job);
}

int tci_drainer_submit(const tci_file_identity *id, int fd, bool readable, int segment_size,
                       const tci_drain_slot *slots, int nslots, tci_drain_job **jobp)
{
    *jobp = NULL;
    tci_drain_job *job = calloc(1, sizeof *job);
    if (!job)
        return TCIO_ERR_NO_MEMORY;
    job->name = id->name ? strdup(id->name) : NULL;
    job->slots = malloc((size_t)(nslots > 0 ? nslots : 1) * sizeof *slots);
    job->buffer = readable ? malloc(TCI_SIEVE_BUFFER) : NULL;
    if ((id->name && !job->name) || !job->slots || (readable && !job->buffer)) {
        free_job(job);
        return TCIO_ERR_NO_MEMORY;
    }
    memcpy(job->slots, slots, (size_t)nslots * sizeof *slots);
    job->device = id->device;
    job->inode = id->inode;
    job->fd = fd;
    job->readable = readable;
    job->segment_size = segment_size;
    job->nslots = nslots;
    job->bytes = (int64_t)nslots * segment_size;
    job->state = QUEUED;
    if (!running && start_thread() != 0) {
        free_job(job);
        return TCIO_ERR_IO;
    }
    pthread_mutex_lock(&lock);
    tci_drain_job **tail = &jobs;
    while (*tail)
        tail = &(*tail)->next;
    *tail = job;
    pending_bytes += job->bytes;
    pthread_cond_signal(&work);
    pthread_mutex_unlock(&lock);
    *jobp = job;
    return TCIO_SUCCESS;
}

/* Sleep until JOB is written.  LOCK held. */
static void wait_done(tci_drain_job *job)
{
    while (job->state != DONE)
        pthread_cond_wait(&done, &lock);
}

void tci_drainer_finish(tci_drain_job *job, tci_drain_result *result)
{
    pthread_mutex_lock(&lock);
    wait_done(job);
    for (tci_drain_job **p = &jobs; *p; p = &(*p)->next)
        if (*p == job) {
            *p = job->next;
            break;
        }
    pthread_mutex_unlock(&lock);
    *result = job->result;
    if (job->failed_call) {
        if (job->failed_offset >= 0)
            snprintf(result->message, sizeof result->message,
                     "background drain of \"%s\": %s at offset %lld failed: %s",
                     job->name ? job->name : "?", job->failed_call, job->failed_offset,
                     strerror(job->failed_errno));
        else
            snprintf(result->message, sizeof result->message,
                     "background drain of \"%s\": %s failed: %s", job->name ? job->name : "?",
                     job->failed_call, strerror(job->failed_errno));
    }
    free_job(job);
}

int64_t tci_drainer_pending_bytes(void)
{
    pthread_mutex_lock(&lock);
    int64_t bytes = pending_bytes;
    pthread_mutex_unlock(&lock);
    return bytes;
}

/* The oldest job not yet written whose file is NAME, or has ST's device
 * and inode (ST NULL: by name only).  LOCK held. */
static tci_drain_job *unwritten_job_of(const char *name, const struct stat *st)
{
    for (tci_drain_job *j = jobs; j; j = j->next)
        if (j->state != DONE &&
            ((j->name && strcmp(j->name, name) == 0) || (st && same_file(st, j->device, j->inode))))
            return j;
    return NULL;
}

int tci_drainer_wait_for_file(const char *name)
{
    if (!name || tci_drainer_pending_bytes() == 0)
        return 0;             /* nothing unwritten: no stat(2) */
    struct stat st;
    const struct stat *by_id = tci_file_system_name(name, &st, true) ? &st : NULL;
    int waited = 0;
    pthread_mutex_lock(&lock);
    tci_drain_job *job;
    while ((job = unwritten_job_of(name, by_id)) != NULL) {
        wait_done(job);
        waited++;
    }
    pthread_mutex_unlock(&lock);
    return waited;
}

void tci_drainer_stop(void)
{
    if (!running)
        return;
    pthread_mutex_lock(&lock);
    stopping = true;
    pthread_cond_signal(&work);
    pthread_mutex_unlock(&lock);
    pthread_join(thread, NULL);     /* it writes every queued job first */
    pthread_mutex_lock(&lock);
    stopping = false;
    pthread_mutex_unlock(&lock);
    running = false;
    free(stack);
    stack = NULL;
}
