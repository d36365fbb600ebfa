/* testutil.c - helpers for the MPI integration tests (see testutil.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include "testutil.h"

/* ---- PRNG ------------------------------------------------------------------ */

void tu_rng_seed(tu_rng *r, uint64_t seed)
{
    r->state = seed;
}

uint64_t tu_rng_next(tu_rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t tu_rng_below(tu_rng *r, uint64_t n)
{
    return n ? tu_rng_next(r) % n : 0;
}

int64_t tu_rng_range(tu_rng *r, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    return lo + (int64_t)tu_rng_below(r, (uint64_t)(hi - lo) + 1);
}

void tu_shuffle(tu_rng *r, size_t *a, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)tu_rng_below(r, i);
        size_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

uint64_t tu_mix(uint64_t a, uint64_t b)
{
    tu_rng r;
    tu_rng_seed(&r, a ^ (b * 0xd6e8feb86659fd93ULL));
    return tu_rng_next(&r);
}

void tu_fill_pattern(void *buf, size_t len, uint64_t seed)
{
    tu_rng r;
    unsigned char *p = buf;
    tu_rng_seed(&r, seed);
    while (len > 0) {
        uint64_t v = tu_rng_next(&r);
        size_t n = len < 8 ? len : 8;
        for (size_t i = 0; i < n; i++)
            p[i] = (unsigned char)(v >> (8 * i));
        p += n;
        len -= n;
    }
}

/* ---- MPI context, watchdog ------------------------------------------------- */

int tu_rank;
int tu_nprocs;

static long run_id;            /* rank 0's pid */
static int oversubscribed;
static char test_dir[PATH_MAX];
static unsigned path_counter;
static char timeout_msg[256] = "test_mpi: timeout\n";
static size_t timeout_msg_len;

/* The aggregation variables as the run was started (NULL: unset). */
static const char *const aggregation_vars[] = {
    "TCIO_AGGREGATORS", "TCIO_AGGREGATOR_PLACEMENT", "TCIO_EARLY_DRAIN", "TCIO_STATS",
    "TCIO_STATS_FILE", "TCIO_TRANSPORT", "TCIO_NODE_SEGMENTS"
};
enum { NAGGVARS = sizeof aggregation_vars / sizeof aggregation_vars[0] };
static char *aggregation_start[NAGGVARS];
static char aggregation_text[512];
static tu_prefetch_mode prefetch_mode;

tu_prefetch_mode tu_prefetch(void)
{
    return prefetch_mode;
}
/* The ranks of MPI_COMM_WORLD on this host, by processor name: not
 * MPI_COMM_TYPE_SHARED, which MPICH's MPIR_CVAR_NUM_CLIQUES splits too,
 * while the two "nodes" it makes still share this host's cores. */
static int ranks_on_this_host(void)
{
    char mine[MPI_MAX_PROCESSOR_NAME] = { 0 };
    int len = 0, n = 0, count = 0;
    MPI_Get_processor_name(mine, &len);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    char *all = calloc((size_t)n, MPI_MAX_PROCESSOR_NAME);
    if (!all) {                     /* the others are in the allgather */
        fprintf(stderr, "testutil: out of memory for %d processor names\n", n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  MPI_COMM_WORLD);
    for (int i = 0; i < n; i++)
        count += strncmp(all + (size_t)i * MPI_MAX_PROCESSOR_NAME, mine,
                         MPI_MAX_PROCESSOR_NAME) == 0;
    free(all);
    return count;
}


void tu_init(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &tu_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &tu_nprocs);
    run_id = (long)getpid();
    MPI_Bcast(&run_id, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    const char *d = getenv("TCIO_TEST_DIR");
    if (!d || !*d)
        d = getenv("TMPDIR");
    if (!d || !*d)
        d = "/tmp";
    snprintf(test_dir, sizeof test_dir, "%s", d);
    /* The tests set the configuration variables themselves. */
    unsetenv("TCIO_SEGMENT_SIZE");
    unsetenv("TCIO_SEGMENTS_PER_PROC");
    /* The TCIO_TEST_* variables of the tests are not the library's. */
    setenv("TCIO_WARN_UNKNOWN", "off", 0);
    timeout_msg_len = strlen(timeout_msg);
    size_t used = 0;
    aggregation_text[0] = '\0';
    for (int i = 0; i < NAGGVARS; i++) {
        const char *v = getenv(aggregation_vars[i]);
        aggregation_start[i] = v ? strdup(v) : NULL;
        if (v && used < sizeof aggregation_text) {
            int n = snprintf(aggregation_text + used, sizeof aggregation_text - used, "%s%s=%s",
                             used ? " " : "", aggregation_vars[i], v);
            used += n > 0 ? (size_t)n : 0;
        }
    }

    const char *pf = getenv("TCIO_TEST_PREFETCH");
    prefetch_mode = !pf ? TU_PREFETCH_OFF
                  : strcmp(pf, "local") == 0 ? TU_PREFETCH_LOCAL
                  : strcmp(pf, "session") == 0 ? TU_PREFETCH_SESSION : TU_PREFETCH_OFF;
    if (prefetch_mode != TU_PREFETCH_OFF && used < sizeof aggregation_text)
        snprintf(aggregation_text + used, sizeof aggregation_text - used, "%sTCIO_TEST_PREFETCH=%s",
                 used ? " " : "", pf);

    int local_ranks = ranks_on_this_host();
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const char *full = getenv("TCIO_TEST_FULL");
    int over = cpus > 0 && local_ranks > cpus && !(full && atoi(full) > 0);
    MPI_Allreduce(&over, &oversubscribed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
}

void tu_clear_aggregation_env(void)
{
    for (int i = 0; i < NAGGVARS; i++)
        unsetenv(aggregation_vars[i]);
}

static void restore_aggregation_env(void)
{
    for (int i = 0; i < NAGGVARS; i++) {
        if (aggregation_start[i])
            setenv(aggregation_vars[i], aggregation_start[i], 1);
        else
            unsetenv(aggregation_vars[i]);
    }
}

const char *tu_aggregation_env(void)
{
    return aggregation_text;
}

int tu_oversubscribed(void)
{
    return oversubscribed;
}

int64_t tu_scale(void)
{
    return oversubscribed ? 1 : 8;
}

const char *tu_dir(void)
{
    return test_dir;
}

void tu_set_test_name(const char *name)
{
    int n = snprintf(timeout_msg, sizeof timeout_msg,
                     "test_mpi: rank %d of %d: %s did not finish in time (hang?)\n", tu_rank,
                     tu_nprocs, name);
    timeout_msg_len = n < 0 ? 0 : (size_t)n < sizeof timeout_msg ? (size_t)n
                                                                  : sizeof timeout_msg - 1;
}

static void on_alarm(int sig)
{
    (void)sig;
    ssize_t w = write(STDERR_FILENO, timeout_msg, timeout_msg_len);
    (void)w;
    _exit(124);
}

/* ---- open handles and paths of the running test ------------------------------ */

#define MAX_TRACKED 64

static tcio_file *open_handles[MAX_TRACKED];
static int handle_closing[MAX_TRACKED];   /* between tu_close_begin and tu_close_end */
static int nopen;
static char *paths[MAX_TRACKED];
static int npaths;

void tu_setup(void)
{
    unsigned seconds = 120;
    const char *t = getenv("TCIO_TEST_TIMEOUT");
    if (t && atoi(t) > 0)
        seconds = (unsigned)atoi(t);
    signal(SIGALRM, on_alarm);
    alarm(seconds);
}

void tu_teardown(void)
{
    /* A failed test may have left handles open: every rank left at the same
     * agreed check, so every rank holds the same handles here. */
    while (nopen > 0) {
        if (handle_closing[nopen - 1])
            tu_close_end(open_handles[nopen - 1]);
        else
            tu_close(open_handles[nopen - 1]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < npaths; i++) {
        if (tu_rank == 0)
            unlink(paths[i]);
        free(paths[i]);
    }
    npaths = 0;
    unsetenv("TCIO_SEGMENT_SIZE");
    unsetenv("TCIO_SEGMENTS_PER_PROC");
    restore_aggregation_env();
    MPI_Barrier(MPI_COMM_WORLD);
    alarm(0);
    tu_set_test_name("(between tests)");
}

const char *tu_path(const char *tag)
{
    char buf[PATH_MAX + 64];
    snprintf(buf, sizeof buf, "%s/tcio-test-%ld-%u-%s", test_dir, run_id, path_counter++, tag);
    if (npaths == MAX_TRACKED) {    /* never in these tests: keep the last slot */
        free(paths[npaths - 1]);
        npaths--;
    }
    paths[npaths] = strdup(buf);
    return paths[npaths] ? paths[npaths++] : "/nonexistent/tcio-test-out-of-memory";
}

int tu_open(const char *path, int mode, const char *seg, const char *spp, tcio_file **fh)
{
    return tu_open_kv(path, mode, seg, spp, NULL, fh);
}

int tu_open_kv(const char *path, int mode, const char *seg, const char *spp,
               const char *const *kv, tcio_file **fh)
{
    MPI_Info info = MPI_INFO_NULL;
    if (seg || spp || (kv && kv[0])) {
        MPI_Info_create(&info);
        if (seg)
            MPI_Info_set(info, "tcio_segment_size", seg);
        if (spp)
            MPI_Info_set(info, "tcio_segments_per_proc", spp);
        for (int i = 0; kv && kv[i]; i += 2)
            MPI_Info_set(info, kv[i], kv[i + 1]);
    }
    int rc = tcio_open_comm(MPI_COMM_WORLD, path, mode, info, fh);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    if (rc == TCIO_SUCCESS && *fh && nopen < MAX_TRACKED) {
        handle_closing[nopen] = 0;
        open_handles[nopen++] = *fh;
    }
    return rc;
}

/* MPI leaves open whether an info value may be empty (the standard gives
 * only the maximum lengths; MPICH accepts "", Open MPI 4.1 raises
 * MPI_ERR_INFO_VALUE).  Ask this MPI once, with errors returned rather than
 * fatal; the answer and the reason go to the caller. */
int tu_info_accepts_empty_value(char *why, size_t size)
{
    static int known, accepted;
    static char reason[1024];   /* holds the three parts at their precisions */
    if (!known) {
        MPI_Errhandler world_eh, self_eh;
        MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world_eh);
        MPI_Comm_get_errhandler(MPI_COMM_SELF, &self_eh);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        MPI_Info info;
        MPI_Info_create(&info);
        int err = MPI_Info_set(info, "tcio_test_probe", "");
        MPI_Info_free(&info);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, world_eh);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, self_eh);
        MPI_Errhandler_free(&world_eh);
        MPI_Errhandler_free(&self_eh);
        accepted = err == MPI_SUCCESS;
        char msg[MPI_MAX_ERROR_STRING] = "", lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
        int len;
        if (!accepted)
            MPI_Error_string(err, msg, &len);
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n,")] = '\0';
        /* Precisions keep the three parts within REASON (no truncation
         * warning at any optimisation level). */
        snprintf(reason, sizeof reason, "%.200s: MPI_Info_set(info, key, \"\") %s%.400s", lib,
                 accepted ? "succeeds" : "fails: ", msg);
        known = 1;
    }
    if (why && size)
        snprintf(why, size, "%s", reason);
    return accepted;
}

static void forget_handle(tcio_file *fh)
{
    for (int i = 0; i < nopen; i++)
        if (open_handles[i] == fh) {
            nopen--;
            open_handles[i] = open_handles[nopen];
            handle_closing[i] = handle_closing[nopen];
            break;
        }
}

int tu_close(tcio_file *fh)
{
    forget_handle(fh);
    return tcio_close(fh);
}

int tu_close_begin(tcio_file *fh)
{
    int rc = tcio_close_begin(fh);
    for (int i = 0; i < nopen && rc == TCIO_SUCCESS; i++)
        if (open_handles[i] == fh)
            handle_closing[i] = 1;
    return rc;
}

int tu_close_end(tcio_file *fh)
{
    forget_handle(fh);
    return tcio_close_end(fh);
}

/* ---- collective assertions ------------------------------------------------- */

int tu_min_int(int v)
{
    int out;
    MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return out;
}

int tu_max_int(int v)
{
    int out;
    MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return out;
}

MPI_Comm tu_node_comm(void)
{
    MPI_Comm node, part;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    const char *text = getenv("TCIO_TEST_NODES");
    long k = text ? strtol(text, NULL, 10) : 0;
    if (k <= 1 || k > tu_nprocs)
        return node;
    MPI_Comm_split(node, (int)((long)tu_rank * k / tu_nprocs), tu_rank, &part);
    MPI_Comm_free(&node);
    return part;
}

int tu_count_nodes(void)
{
    MPI_Comm node = tu_node_comm();
    int node_rank = 0;
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_free(&node);
    return tu_sum_int(node_rank == 0);
}

int tu_sum_int(int v)
{
    int out;
    MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return out;
}

int tu_agree(int ok, char *msg, size_t msgsize, const char *fmt, ...)
{
    int first = tu_min_int(ok ? INT_MAX : tu_rank);
    if (first == INT_MAX) {
        if (msgsize)
            msg[0] = '\0';
        return 1;
    }
    int nfailed = tu_sum_int(ok ? 0 : 1);
    char text[512] = "";
    if (tu_rank == first) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
    }
    MPI_Bcast(text, (int)sizeof text, MPI_CHAR, first, MPI_COMM_WORLD);
    snprintf(msg, msgsize, "[rank %d of %d; %d rank(s) failed] %s", first, tu_nprocs, nfailed,
             text);
    return 0;
}

void tu_status_init(tu_status *st)
{
    st->ok = 1;
    st->msg[0] = '\0';
}

static void vfail(tu_status *st, const char *suffix, const char *fmt, va_list ap)
{
    if (!st->ok)
        return;
    st->ok = 0;
    int n = vsnprintf(st->msg, sizeof st->msg, fmt, ap);
    if (n >= 0 && (size_t)n < sizeof st->msg)
        snprintf(st->msg + n, sizeof st->msg - (size_t)n, "%s", suffix);
}

void tu_fail(tu_status *st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(st, "", fmt, ap);
    va_end(ap);
}

int tu_expect_rc(tu_status *st, int rc, int want, const char *fmt, ...)
{
    if (rc == want)
        return 1;
    char suffix[200];
    snprintf(suffix, sizeof suffix, ": returned %d (%s), expected %d (%s)", rc,
             tcio_error_string(rc), want, tcio_error_string(want));
    va_list ap;
    va_start(ap, fmt);
    vfail(st, suffix, fmt, ap);
    va_end(ap);
    return 0;
}

const char *tu_find_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return hay;
    return n == 0 ? hay : NULL;
}

int tu_expect_reason(tu_status *st, int rc, const char *call, const char *const *want,
                     const char *what)
{
    char msg[TCIO_MAX_ERROR_STRING];
    int code = tcio_last_error(msg, sizeof msg);
    if (code != rc) {
        tu_fail(st, "%s: %s returned %d (%s) but tcio_last_error gives %d: \"%s\"", what, call,
                rc, tcio_error_string(rc), code, msg);
        return 0;
    }
    /* "rank R: " */
    const char *p = msg;
    int rank = -1, used = 0;
    if (sscanf(p, "rank %d: %n", &rank, &used) < 1 || used == 0) {
        tu_fail(st, "%s: the reason does not start with \"rank R: \": \"%s\"", what, msg);
        return 0;
    }
    p += used;
    size_t n = strlen(call);
    if (strncmp(p, call, n) != 0 || strncmp(p + n, ": ", 2) != 0) {
        tu_fail(st, "%s: the reason does not name %s after the rank: \"%s\"", what, call, msg);
        return 0;
    }
    p += n + 2;
    if (!*p || strcmp(p, tcio_error_string(rc)) == 0) {
        tu_fail(st, "%s: the reason of %s is %s: \"%s\"", what, tcio_error_string(rc),
                *p ? "only the generic message" : "empty", msg);
        return 0;
    }
    for (; want && *want; want++)
        if (!tu_find_nocase(p, *want)) {
            tu_fail(st, "%s: the reason does not name \"%s\": \"%s\"", what, *want, msg);
            return 0;
        }
    return 1;
}

int tu_expect_mem(tu_status *st, const void *got, const void *expected, size_t len,
                  const char *fmt, ...)
{
    char why[200];
    if (tu_compare_mem(got, expected, len, why, sizeof why, "data") == 0)
        return 1;
    char suffix[220];
    snprintf(suffix, sizeof suffix, ": %s", why);
    va_list ap;
    va_start(ap, fmt);
    vfail(st, suffix, fmt, ap);
    va_end(ap);
    return 0;
}

/* ---- POSIX helpers ---------------------------------------------------------- */

static int write_all(int fd, int64_t off, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = pwrite(fd, p, len, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        off += w;
        len -= (size_t)w;
    }
    return 0;
}

int tu_posix_create(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return -1;
    int rc = write_all(fd, 0, data, len);
    if (close(fd) != 0)
        rc = -1;
    return rc;
}

int tu_posix_pwrite(const char *path, int64_t off, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    if (fd < 0)
        return -1;
    int rc = write_all(fd, off, data, len);
    if (close(fd) != 0)
        rc = -1;
    return rc;
}

int64_t tu_file_size(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    return (int64_t)st.st_size;
}

unsigned char *tu_zalloc(size_t n)
{
    return calloc(n ? n : 1, 1);
}

unsigned char *tu_read_file(const char *path, int64_t *size)
{
    *size = -1;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return NULL;
    }
    unsigned char *buf = tu_zalloc((size_t)st.st_size);
    int64_t done = 0;
    while (buf && done < (int64_t)st.st_size) {
        ssize_t r = pread(fd, buf + done, (size_t)(st.st_size - done), (off_t)done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            free(buf);
            buf = NULL;
            break;
        }
        done += r;
    }
    close(fd);
    if (buf)
        *size = (int64_t)st.st_size;
    return buf;
}

/* Describe the first difference of two buffers of LEN bytes; 0 if equal. */
static int describe_diff(const unsigned char *got, const unsigned char *exp, size_t len,
                         char *why, size_t whysize, const char *what)
{
    size_t first = len, ndiff = 0;
    for (size_t i = 0; i < len; i++)
        if (got[i] != exp[i]) {
            if (first == len)
                first = i;
            ndiff++;
        }
    if (ndiff == 0)
        return 0;
    snprintf(why, whysize,
             "%s: %zu of %zu bytes differ, first at byte %zu: got 0x%02x, expected 0x%02x",
             what, ndiff, len, first, got[first], exp[first]);
    return -1;
}

int tu_compare_mem(const void *got, const void *expected, size_t len, char *why,
                   size_t whysize, const char *what)
{
    return describe_diff(got, expected, len, why, whysize, what);
}

int tu_compare_file_mem(const char *path, const void *expected, int64_t size, char *why,
                        size_t whysize)
{
    int64_t got_size;
    unsigned char *got = tu_read_file(path, &got_size);
    if (!got) {
        snprintf(why, whysize, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = 0;
    if (got_size != size) {
        snprintf(why, whysize, "%s: size %lld, expected %lld", path, (long long)got_size,
                 (long long)size);
        rc = -1;
    } else {
        rc = describe_diff(got, expected, (size_t)size, why, whysize, path);
    }
    free(got);
    return rc;
}

int tu_compare_files(const char *got_path, const char *expected_path, char *why,
                     size_t whysize)
{
    int64_t size;
    unsigned char *exp = tu_read_file(expected_path, &size);
    if (!exp) {
        snprintf(why, whysize, "cannot read reference %s: %s", expected_path, strerror(errno));
        return -1;
    }
    int rc = tu_compare_file_mem(got_path, exp, size, why, whysize);
    free(exp);
    return rc;
}

/* ---- plans ------------------------------------------------------------------ */

void tu_plan_random(tu_plan *p, uint64_t seed, int64_t target, int64_t max_chunk,
                    int64_t max_gap, int nprocs)
{
    tu_rng r;
    tu_rng_seed(&r, seed);
    size_t cap = 64;
    p->chunks = malloc(cap * sizeof *p->chunks);
    p->n = 0;
    p->end = 0;
    int64_t off = 0;
    while (p->chunks && off < target) {
        if (max_gap > 0 && p->n > 0 && tu_rng_below(&r, 5) == 0)
            off += tu_rng_range(&r, 1, max_gap);
        int64_t small = max_chunk < 32 ? max_chunk : 32;
        int64_t len = tu_rng_below(&r, 2) ? tu_rng_range(&r, 1, small)
                                          : tu_rng_range(&r, 1, max_chunk);
        if (p->n == cap) {
            cap *= 2;
            tu_chunk *c = realloc(p->chunks, cap * sizeof *c);
            if (!c) {
                free(p->chunks);
                p->chunks = NULL;
                break;
            }
            p->chunks = c;
        }
        p->chunks[p->n] = (tu_chunk){ .off = off, .len = len,
                                      .owner = (int)tu_rng_below(&r, (uint64_t)nprocs),
                                      .seed = tu_mix(seed, p->n) };
        p->n++;
        off += len;
        p->end = off;
    }
    if (!p->chunks)
        p->n = 0;
}

void tu_plan_free(tu_plan *p)
{
    free(p->chunks);
    p->chunks = NULL;
    p->n = 0;
}

int tu_plan_write_reference(const tu_plan *p, const char *path)
{
    int rc = 0;
    if (tu_rank == 0) {
        int fd = open(path, O_WRONLY | O_CREAT, 0644);
        if (fd < 0)
            rc = -1;
        unsigned char *buf = NULL;
        size_t bufsize = 0;
        for (size_t i = 0; rc == 0 && i < p->n; i++) {
            const tu_chunk *c = &p->chunks[i];
            if ((size_t)c->len > bufsize) {
                free(buf);
                bufsize = (size_t)c->len;
                buf = malloc(bufsize);
                if (!buf) {
                    rc = -1;
                    break;
                }
            }
            tu_fill_pattern(buf, (size_t)c->len, c->seed);
            rc = write_all(fd, c->off, buf, (size_t)c->len);
        }
        free(buf);
        if (fd >= 0 && close(fd) != 0)
            rc = -1;
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return rc;
}

void tu_add_case(Suite *s, const char *name, const TTest *test)
{
    TCase *tc = tcase_create(name);
    tcase_set_tags(tc, name);
    tcase_add_checked_fixture(tc, tu_setup, tu_teardown);
    tcase_add_test(tc, test);
    suite_add_tcase(s, tc);
}
