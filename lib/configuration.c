/* configuration.c - the settings of an open file from the environment and
 * the info object; defaults that need the file (striping) or the
 * communicator (aggregators) are filled in by tci_config_finish and
 * aggregators.c. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "tcio.h"
#include "configuration.h"
#include "error.h"

#define KEY_SEGMENT_SIZE      "tcio_segment_size"
#define KEY_SEGMENTS_PER_PROC "tcio_segments_per_proc"
#define ENV_SEGMENT_SIZE      "TCIO_SEGMENT_SIZE"
#define ENV_SEGMENTS_PER_PROC "TCIO_SEGMENTS_PER_PROC"
#define KEY_AGGREGATORS       "tcio_aggregators"
#define ENV_AGGREGATORS       "TCIO_AGGREGATORS"
#define KEY_PLACEMENT         "tcio_aggregator_placement"
#define ENV_PLACEMENT         "TCIO_AGGREGATOR_PLACEMENT"
#define KEY_EARLY_DRAIN       "tcio_early_drain"
#define ENV_EARLY_DRAIN       "TCIO_EARLY_DRAIN"
#define KEY_STATS             "tcio_stats"
#define ENV_STATS             "TCIO_STATS"
#define KEY_STATS_FILE        "tcio_stats_file"
#define ENV_STATS_FILE        "TCIO_STATS_FILE"
#define KEY_TRANSPORT         "tcio_transport"
#define ENV_TRANSPORT         "TCIO_TRANSPORT"
#define KEY_BACKGROUND_MEMORY "tcio_background_memory"
#define ENV_BACKGROUND_MEMORY "TCIO_BACKGROUND_MEMORY"
#define KEY_FORWARD_STAGING   "tcio_forward_staging"
#define ENV_FORWARD_STAGING   "TCIO_FORWARD_STAGING"
#define KEY_NODE_SEGMENTS     "tcio_node_segments"
#define ENV_NODE_SEGMENTS     "TCIO_NODE_SEGMENTS"

/* Every TCIO_* variable the library reads (the unknown ones are
 * reported: a typo would otherwise be silently ignored). */
static const char *const tcio_env_names[] = {
    ENV_SEGMENT_SIZE, ENV_SEGMENTS_PER_PROC, ENV_AGGREGATORS, ENV_PLACEMENT,
    ENV_EARLY_DRAIN, ENV_STATS, ENV_STATS_FILE, ENV_TRANSPORT, ENV_BACKGROUND_MEMORY,
    ENV_FORWARD_STAGING, ENV_NODE_SEGMENTS, TCI_ENV_COLLECTIVE_TIMEOUT, TCI_ENV_WARN_UNKNOWN, TCI_ENV_TEST_NODES,
    /* read by the MPI-IO interposer, libtcio_mpiio (mpiio/served.c) */
    "TCIO_MPIIO_FILES", "TCIO_MPIIO_VERBOSE", "TCIO_MPIIO_READ_SESSIONS"
};

static const char *const tcio_keys[] = {
    KEY_SEGMENT_SIZE, KEY_SEGMENTS_PER_PROC, KEY_AGGREGATORS, KEY_PLACEMENT,
    KEY_EARLY_DRAIN, KEY_STATS, KEY_STATS_FILE, KEY_TRANSPORT, KEY_BACKGROUND_MEMORY,
    KEY_FORWARD_STAGING, KEY_NODE_SEGMENTS
};

/* The leading positive decimal integer of TEXT (no sign, no space):
 * stores it and where it ends.  Returns 0, or -1 if there is none or it
 * overflows. */
static int parse_positive(const char *text, long long *n, char **end)
{
    if (!text || !isdigit((unsigned char)text[0]))
        return -1;
    errno = 0;
    *n = strtoll(text, end, 10);
    return errno == ERANGE || *n <= 0 ? -1 : 0;
}

int tci_parse_size(const char *text, int64_t *value)
{
    long long n;
    char *end;
    if (parse_positive(text, &n, &end) != 0)
        return -1;
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end != '\0' || n > (INT64_MAX >> shift))
        return -1;
    *value = (int64_t)n << shift;
    return 0;
}

int tci_parse_seconds(const char *text, double *value)
{
    /* By hand: strtod follows the program's LC_NUMERIC (a comma locale
     * would refuse "1.5") and reads exponents and hexadecimal. */
    if (!text)
        return -1;
    double d = 0, scale = 1;
    int digits = 0;
    bool point = false;
    for (const char *p = text; *p; p++) {
        if (*p == '.' && !point) {
            point = true;
        } else if (isdigit((unsigned char)*p)) {
            digits++;
            if (point)
                d += (*p - '0') * (scale /= 10);
            else if ((d = d * 10 + (*p - '0')) >= 1e9)
                return -1;
        } else {
            return -1;
        }
    }
    if (digits == 0 || !(d > 0))
        return -1;
    *value = d;
    return 0;
}

/* The text of one setting: the environment wins over the info key.
 * Returns NULL when neither gives it; BUF holds an info value, *SOURCE
 * names where the text came from (for error messages). */
/* Info key KEY's value (in BUF), or NULL; SOURCE names it. */
static const char *info_text(MPI_Info info, const char *key, char buf[MPI_MAX_INFO_VAL + 1],
                             char source[64])
{
    int found = 0;
    if (info == MPI_INFO_NULL ||
        MPI_Info_get(info, key, MPI_MAX_INFO_VAL, buf, &found) != MPI_SUCCESS || !found)
        return NULL;
    snprintf(source, 64, "info key %s", key);
    return buf;
}

static const char *setting_text(MPI_Info info, const char *key, const char *env,
                                char buf[MPI_MAX_INFO_VAL + 1], char source[64])
{
    const char *text = getenv(env);
    snprintf(source, 64, "environment variable %s", env);
    return text ? text : info_text(info, key, buf, source);
}

/* Record why a setting was rejected; returns -1. */
static int bad_setting(const char *source, const char *text, const char *expected)
{
    tci_error_set(TCIO_ERR_BAD_CONFIG, "%s=\"%s\" is not valid: %s", source, text, expected);
    return -1;
}

/* A size setting of at most MAX.  Returns 0 (unset leaves *VALUE alone)
 * or -1. */
static int read_size(MPI_Info info, const char *key, const char *env, int64_t max,
                     int64_t *value)
{
    char buf[MPI_MAX_INFO_VAL + 1], source[64], expected[128];
    const char *text = setting_text(info, key, env, buf, source);
    if (!text)
        return 0;
    snprintf(expected, sizeof expected,
             "expected a positive integer with an optional k, m or g suffix, at most %lld",
             (long long)max);
    if (tci_parse_size(text, value) != 0 || *value > max)
        return bad_setting(source, text, expected);
    return 0;
}

static int read_count(MPI_Info info, const char *key, const char *env, int64_t *value)
{
    char buf[MPI_MAX_INFO_VAL + 1], source[64];
    const char *text = setting_text(info, key, env, buf, source);
    if (text && (tci_parse_count(text, value) != 0 || *value > INT32_MAX))
        return bad_setting(source, text, "expected a positive decimal integer");
    return 0;
}

/* tcio_early_drain: an on/off switch (on: the aggregator drains) or
 * "mover" (the rank whose write completed the segment drains it). */
static int read_early_drain(MPI_Info info, int *value)
{
    char buf[MPI_MAX_INFO_VAL + 1], source[64];
    const char *text = setting_text(info, KEY_EARLY_DRAIN, ENV_EARLY_DRAIN, buf, source);
    if (!text)
        return 0;
    if (strcasecmp(text, "mover") == 0) {
        *value = TCI_DRAIN_MOVER;
        return 0;
    }
    if (tci_parse_switch(text, value) != 0)
        return bad_setting(source, text, "expected on, off or mover (on/off also 1/0, "
                           "yes/no, true/false)");
    return 0;
}

/* tcio_stats: an on/off switch (on: the text table) or "json". */
static int read_stats(MPI_Info info, int *value)
{
    char buf[MPI_MAX_INFO_VAL + 1], source[64];
    const char *text = setting_text(info, KEY_STATS, ENV_STATS, buf, source);
    if (!text)
        return 0;
    if (strcasecmp(text, "json") == 0) {
        *value = TCI_STATS_JSON;
        return 0;
    }
    if (tci_parse_switch(text, value) != 0)
        return bad_setting(source, text, "expected on, off or json");
    return 0;
}

/* tcio_stats_file: where the summary goes (appended), any path.  An
 * empty variable is unset (a script's TCIO_STATS_FILE=$UNSET must not
 * fail the opens, nor hide the program's info key), and an empty value is
 * none, the default stream (only rank 0's value is used). */
static int read_stats_file(MPI_Info info, char **path)
{
    char buf[MPI_MAX_INFO_VAL + 1], source[64];
    const char *text = setting_text(info, KEY_STATS_FILE, ENV_STATS_FILE, buf, source);
    if (text && text[0] == '\0' && text != buf)
        text = info_text(info, KEY_STATS_FILE, buf, source);
    if (!text || text[0] == '\0')
        return 0;
    if (!(*path = strdup(text)))
        return tci_error_set(TCIO_ERR_NO_MEMORY, "no memory to keep %s", source);
    return 0;
}

static int read_transport(MPI_Info info, tci_transport_kind *kind)
{
    char buf[MPI_MAX_INFO_VAL + 1], source[64];
    const char *text = setting_text(info, KEY_TRANSPORT, ENV_TRANSPORT, buf, source);
    if (!text)
        return 0;
    if (tci_parse_transport(text, kind) != 0)
        return bad_setting(source, text, "expected auto, rma, shm or mixed");
    return 0;
}

/* tcio_background_memory: a size, or 0 (no background drain). */
static int read_background_memory(MPI_Info info, int64_t *value)
{
    char buf[MPI_MAX_INFO_VAL + 1], source[64];
    const char *text = setting_text(info, KEY_BACKGROUND_MEMORY, ENV_BACKGROUND_MEMORY, buf,
                                    source);
    if (!text)
        return 0;
    if (strcmp(text, "0") == 0) {
        *value = 0;
        return 0;
    }
    if (tci_parse_size(text, value) != 0)
        return bad_setting(source, text, "expected 0 or a positive integer with an optional "
                           "k, m or g suffix");
    return 0;
}

/* tcio_forward_staging: a count, or 0 (every forward merged under the
 * aggregator's lock). */
static int read_forward_staging(MPI_Info info, int64_t *value)
{
    char buf[MPI_MAX_INFO_VAL + 1], source[64];
    const char *text = setting_text(info, KEY_FORWARD_STAGING, ENV_FORWARD_STAGING, buf,
                                    source);
    if (!text)
        return 0;
    if (strcmp(text, "0") == 0) {
        *value = 0;
        return 0;
    }
    if (tci_parse_count(text, value) != 0 || *value > TCI_MAX_FORWARD_STAGING)
        return bad_setting(source, text, "expected 0 or a positive decimal integer up to "
                           "64");
    return 0;
}

int tci_parse_transport(const char *text, tci_transport_kind *kind)
{
    if (!text)
        return -1;
    if (strcmp(text, "auto") == 0) {
        *kind = TCI_TRANSPORT_AUTO;
        return 0;
    }
    if (strcmp(text, "rma") == 0) {
        *kind = TCI_TRANSPORT_RMA;
        return 0;
    }
    if (strcmp(text, "shm") == 0) {
        *kind = TCI_TRANSPORT_SHM;
        return 0;
    }
    if (strcmp(text, "mixed") == 0) {
        *kind = TCI_TRANSPORT_MIXED;
        return 0;
    }
    return -1;
}

static int read_placement(MPI_Info info, tci_config *cfg)
{
    char buf[MPI_MAX_INFO_VAL + 1], source[64];
    const char *text = setting_text(info, KEY_PLACEMENT, ENV_PLACEMENT, buf, source);
    int rc = text ? tci_parse_placement(text, &cfg->placement, &cfg->list, &cfg->list_len) : 0;
    if (rc == -2)       /* not -1: the caller tells a bad setting from this */
        return tci_error_set(TCIO_ERR_NO_MEMORY, "no memory for the rank list of %s", source);
    if (rc != 0)
        return bad_setting(source, text,
                           "expected spread, node or a comma-separated list of distinct ranks");
    return 0;
}

int tci_parse_count(const char *text, int64_t *value)
{
    long long n;
    char *end;
    if (parse_positive(text, &n, &end) != 0 || *end != '\0')
        return -1;
    *value = n;
    return 0;
}

/* Parse "r0,r1,..." into a new array; -1 for anything but distinct
 * non-negative decimal ranks separated by single commas, -2 without
 * memory for the array. */
static int parse_rank_list(const char *text, int **list, int *len)
{
    int *ranks = malloc(TCI_MAX_AGGREGATOR_LIST * sizeof *ranks);
    if (!ranks)
        return -2;
    int n = 0;
    const char *p = text;
    for (;;) {
        if (!isdigit((unsigned char)*p) || n == TCI_MAX_AGGREGATOR_LIST)
            break;
        errno = 0;
        char *end;
        long r = strtol(p, &end, 10);
        if (errno == ERANGE || r > INT32_MAX)
            break;
        for (int i = 0; i < n; i++)
            if (ranks[i] == r)
                goto bad;                   /* duplicate */
        ranks[n++] = (int)r;
        if (*end == '\0') {
            *list = ranks;
            *len = n;
            return 0;
        }
        if (*end != ',')
            break;
        p = end + 1;
    }
bad:
    free(ranks);
    return -1;
}

int tci_parse_placement(const char *text, tci_placement_kind *kind, int **list, int *len)
{
    if (!text)
        return -1;
    if (strcmp(text, "spread") == 0) {
        *kind = TCI_PLACE_SPREAD;
        return 0;
    }
    if (strcmp(text, "node") == 0) {
        *kind = TCI_PLACE_NODE;
        return 0;
    }
    int rc = parse_rank_list(text, list, len);
    if (rc != 0)
        return rc;
    *kind = TCI_PLACE_LIST;
    return 0;
}

/* A safety net behind the parsers, which refuse these values already. */
static int check_limits(const tci_config *cfg)
{
    if (cfg->segment_size < 0 || cfg->segment_size > TCI_MAX_SEGMENT_SIZE)
        return tci_error_set(TCIO_ERR_BAD_CONFIG, "tcio_segment_size %lld is outside 0..%lld",
                             (long long)cfg->segment_size, (long long)TCI_MAX_SEGMENT_SIZE);
    if (cfg->segments_per_proc < 0 || cfg->segments_per_proc > TCI_MAX_SEGMENTS_PER_PROC)
        return tci_error_set(TCIO_ERR_BAD_CONFIG, "tcio_segments_per_proc %lld is outside "
                             "0..%lld", (long long)cfg->segments_per_proc,
                             (long long)TCI_MAX_SEGMENTS_PER_PROC);
    if (cfg->node_segments < 0 || cfg->node_segments > TCI_MAX_SEGMENTS_PER_PROC)
        return tci_error_set(TCIO_ERR_BAD_CONFIG, "tcio_node_segments %lld is outside "
                             "0..%lld", (long long)cfg->node_segments,
                             (long long)TCI_MAX_SEGMENTS_PER_PROC);
    if (cfg->aggregators < 0 || cfg->aggregators > INT32_MAX)
        return tci_error_set(TCIO_ERR_BAD_CONFIG, "tcio_aggregators %lld is outside 0..%d",
                             (long long)cfg->aggregators, INT32_MAX);
    return TCIO_SUCCESS;
}

/* An explicit list fixes the count: a count given as well must match. */
static int check_aggregators(tci_config *cfg)
{
    if (cfg->placement != TCI_PLACE_LIST)
        return TCIO_SUCCESS;
    if (cfg->aggregators != 0 && cfg->aggregators != cfg->list_len)
        return tci_error_set(TCIO_ERR_BAD_CONFIG,
                             "tcio_aggregators is %lld but tcio_aggregator_placement lists %d ranks",
                             (long long)cfg->aggregators, cfg->list_len);
    cfg->aggregators = cfg->list_len;
    return TCIO_SUCCESS;
}

int tci_config_from_user(MPI_Info info, tci_config *cfg)
{
    *cfg = (tci_config){ .placement = TCI_PLACE_SPREAD, .early_drain = -1,
                         .background_memory = -1, .forward_staging = -1 };
    /* Each reader returns 0, -1 for a bad setting (its reason set), or a
     * library code where its own resources failed (TCIO_ERR_NO_MEMORY). */
    int rc = TCIO_SUCCESS, r = 0;
    if ((r = read_size(info, KEY_SEGMENT_SIZE, ENV_SEGMENT_SIZE, TCI_MAX_SEGMENT_SIZE,
                       &cfg->segment_size)) != 0 ||
        (r = read_size(info, KEY_SEGMENTS_PER_PROC, ENV_SEGMENTS_PER_PROC,
                       TCI_MAX_SEGMENTS_PER_PROC, &cfg->segments_per_proc)) != 0 ||
        (r = read_size(info, KEY_NODE_SEGMENTS, ENV_NODE_SEGMENTS, TCI_MAX_SEGMENTS_PER_PROC,
                       &cfg->node_segments)) != 0 ||
        (r = read_count(info, KEY_AGGREGATORS, ENV_AGGREGATORS, &cfg->aggregators)) != 0 ||
        (r = read_placement(info, cfg)) != 0 ||
        (r = read_early_drain(info, &cfg->early_drain)) != 0 ||
        (r = read_stats(info, &cfg->stats)) != 0 ||
        (r = read_stats_file(info, &cfg->stats_file)) != 0 ||
        (r = read_transport(info, &cfg->transport)) != 0 ||
        (r = read_background_memory(info, &cfg->background_memory)) != 0 ||
        (r = read_forward_staging(info, &cfg->forward_staging)) != 0)
        rc = r > 0 ? r : TCIO_ERR_BAD_CONFIG;
    if (rc == TCIO_SUCCESS)
        rc = check_limits(cfg);
    if (rc == TCIO_SUCCESS)
        rc = check_aggregators(cfg);
    if (rc != TCIO_SUCCESS)
        tci_config_free(cfg);
    return rc;
}

int tci_config_check_ranks(const tci_config *cfg, int nprocs)
{
    if (cfg->aggregators > nprocs)
        return tci_error_set(TCIO_ERR_BAD_CONFIG,
                             "tcio_aggregators is %lld, more than the %d ranks of the communicator",
                             (long long)cfg->aggregators, nprocs);
    for (int i = 0; i < cfg->list_len; i++)
        if (cfg->list[i] >= nprocs)
            return tci_error_set(TCIO_ERR_BAD_CONFIG,
                                 "tcio_aggregator_placement lists rank %d, but the communicator "
                                 "has only %d ranks", cfg->list[i], nprocs);
    return TCIO_SUCCESS;
}

void tci_config_free(tci_config *cfg)
{
    free(cfg->list);
    cfg->list = NULL;
    free(cfg->stats_file);
    cfg->stats_file = NULL;
    cfg->list_len = 0;
}

int tci_config_finish(tci_config *cfg, int64_t striping_unit)
{
    if (cfg->segment_size == 0)
        cfg->segment_size = (striping_unit > 0 && striping_unit <= TCI_MAX_SEGMENT_SIZE)
                                ? striping_unit : TCI_DEFAULT_SEGMENT_SIZE;
    if (cfg->segments_per_proc == 0)
        cfg->segments_per_proc = TCI_DEFAULT_SEGMENTS_PER_PROC;
    if (cfg->node_segments == 0)
        cfg->node_segments = cfg->segments_per_proc < TCI_DEFAULT_NODE_SEGMENTS
                                 ? cfg->segments_per_proc : TCI_DEFAULT_NODE_SEGMENTS;
    if (cfg->early_drain < 0)
        cfg->early_drain = TCI_DRAIN_OWNER;
    if (cfg->forward_staging < 0)
        cfg->forward_staging = TCI_DEFAULT_FORWARD_STAGING;
    return check_limits(cfg);
}

int tci_config_passthrough_info(MPI_Info info, MPI_Info *out)
{
    *out = MPI_INFO_NULL;
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    int err = MPI_Info_dup(info, out);
    if (err != MPI_SUCCESS)
        return err;
    for (size_t i = 0; i < sizeof tcio_keys / sizeof tcio_keys[0]; i++) {
        int len, found = 0;
        MPI_Info_get_valuelen(*out, tcio_keys[i], &len, &found);
        if (found)
            MPI_Info_delete(*out, tcio_keys[i]);
    }
    return MPI_SUCCESS;
}

extern char **environ;

/* TCIO_TEST_* and TCIO_AGG_* belong to the project's test scripts
 * (TCIO_TEST_DIR, TCIO_AGG_ONLY, ...), which run libtcio programs with them
 * set: reporting them would put a warning into every test's output. */
static bool is_test_env(const char *entry)
{
    return strncmp(entry, "TCIO_TEST_", 10) == 0 || strncmp(entry, "TCIO_AGG_", 9) == 0;
}

static bool is_known_env(const char *entry)
{
    if (is_test_env(entry))
        return true;
    size_t len = strcspn(entry, "=");
    for (size_t i = 0; i < sizeof tcio_env_names / sizeof tcio_env_names[0]; i++)
        if (strlen(tcio_env_names[i]) == len && strncmp(entry, tcio_env_names[i], len) == 0)
            return true;
    return false;
}

/* Whether TCIO_WARN_UNKNOWN is off (any other value, or none: on). */
static bool warnings_off(void)
{
    int value = 1;
    const char *warn = getenv(TCI_ENV_WARN_UNKNOWN);
    return warn && tci_parse_switch(warn, &value) == 0 && value == 0;
}

/* One environment-only setting NAME whose value, if set, PARSES must
 * accept: a line on OUT saying what happens instead.  Returns 1 if said. */
static int report_unreadable(FILE *out, const char *name, bool (*parses)(const char *),
                             const char *expected, const char *instead)
{
    const char *text = getenv(name);
    if (!text || parses(text))
        return 0;
    fprintf(out, "libtcio: warning: %s=\"%s\" is not %s: %s\n", name, text, expected, instead);
    return 1;
}

static bool seconds_parses(const char *text)
{
    double d;
    return tci_parse_seconds(text, &d) == 0;
}

static bool switch_parses(const char *text)
{
    int v;
    return tci_parse_switch(text, &v) == 0;
}

static bool count_parses(const char *text)
{
    int64_t n;
    return tci_parse_count(text, &n) == 0;
}

int tci_config_report_environment(FILE *out)
{
    if (warnings_off())
        return 0;
    int n = 0;
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "TCIO_", 5) != 0 || is_known_env(*e))
            continue;
        fprintf(out, "libtcio: warning: unknown environment variable %.*s ignored "
                "(%s=off silences this; doc/configuration.md lists the settings)\n",
                (int)strcspn(*e, "="), *e, TCI_ENV_WARN_UNKNOWN);
        n++;
    }
    n += report_unreadable(out, TCI_ENV_COLLECTIVE_TIMEOUT, seconds_parses,
                           "a positive number of seconds", "no timeout");
    n += report_unreadable(out, TCI_ENV_WARN_UNKNOWN, switch_parses, "a switch (on or off)",
                           "warnings stay on");
    n += report_unreadable(out, TCI_ENV_TEST_NODES, count_parses, "a positive count of nodes",
                           "the nodes MPI reports");
    if (n > 0)
        fflush(out);
    return n;
}

/* Keys tcio_get_info reports besides the settings' own. */
static const char *const reported_keys[] = {
    "tcio_level2_bytes", "tcio_aggregator_ranks", "tcio_target_progress",
    /* the MPI-IO interposer's (mpiio/served.c) */
    "tcio_mpiio"
};

static bool is_known_key(const char *key)
{
    for (size_t i = 0; i < sizeof tcio_keys / sizeof tcio_keys[0]; i++)
        if (strcmp(key, tcio_keys[i]) == 0)
            return true;
    for (size_t i = 0; i < sizeof reported_keys / sizeof reported_keys[0]; i++)
        if (strcmp(key, reported_keys[i]) == 0)
            return true;
    return false;
}

int tci_config_report_unknown_keys(MPI_Info info, FILE *out)
{
    int nkeys = 0;
    if (info == MPI_INFO_NULL || warnings_off() || MPI_Info_get_nkeys(info, &nkeys) != MPI_SUCCESS)
        return 0;
    int n = 0;
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1];
        if (MPI_Info_get_nthkey(info, i, key) != MPI_SUCCESS || strncmp(key, "tcio_", 5) != 0 ||
            is_known_key(key))
            continue;
        fprintf(out, "libtcio: warning: unknown info key %s passed on to MPI_File_open "
                "(%s=off silences this; doc/configuration.md lists the settings)\n",
                key, TCI_ENV_WARN_UNKNOWN);
        n++;
    }
    if (n > 0)
        fflush(out);
    return n;
}
