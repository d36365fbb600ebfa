/* test_unit.c - unit tests of the pieces that need no communication:
 * size, count, switch and placement parsing, configuration, the default
 * aggregator count, the segment map, extent lists, the written-byte
 * bitmaps, the level-1 buffer and the copy under a bitmap.  Runs as a
 * singleton MPI process (MPI_Info and datatypes need MPI initialised). */
#define _POSIX_C_SOURCE 200809L   /* setenv, unsetenv, rand_r */
#define _DEFAULT_SOURCE           /* MAP_ANONYMOUS */
#include <check.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "tcio.h"
#include "configuration.h"
#include "aggregators.h"
#include "segmap.h"
#include "level1.h"
#include "maskcopy.h"
#include "slot.h"
#include "transport.h"
#include "datatype.h"
#include "error.h"

/* ---- size parsing ---- */

START_TEST(parse_accepts_plain_and_suffixed_sizes)
{
    int64_t v = 0;
    ck_assert_int_eq(tci_parse_size("4096", &v), 0);
    ck_assert_int_eq(v, 4096);
    ck_assert_int_eq(tci_parse_size("64k", &v), 0);
    ck_assert_int_eq(v, 65536);
    ck_assert_int_eq(tci_parse_size("64K", &v), 0);
    ck_assert_int_eq(v, 65536);
    ck_assert_int_eq(tci_parse_size("1m", &v), 0);
    ck_assert_int_eq(v, 1 << 20);
    ck_assert_int_eq(tci_parse_size("3M", &v), 0);
    ck_assert_int_eq(v, 3 << 20);
    ck_assert_int_eq(tci_parse_size("2g", &v), 0);
    ck_assert_int_eq(v, INT64_C(2) << 30);
    ck_assert_int_eq(tci_parse_size("1G", &v), 0);
    ck_assert_int_eq(v, INT64_C(1) << 30);
}
END_TEST

START_TEST(parse_rejects_malformed_sizes)
{
    const char *bad[] = { "", "0", "-1", "+5", " 5", "5 ", "abc", "12x", "1kk", "k",
                          "1.5M", "99999999999999999999", "9223372036854775807k" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t v = 77;
        ck_assert_msg(tci_parse_size(bad[i], &v) == -1, "accepted \"%s\"", bad[i]);
        ck_assert_msg(v == 77, "\"%s\" changed the output", bad[i]);
    }
    int64_t v;
    ck_assert_int_eq(tci_parse_size(NULL, &v), -1);
}
END_TEST

/* ---- count, switch and placement parsing ---- */

START_TEST(parse_count_accepts_positive_integers)
{
    static const struct { const char *text; int64_t value; } good[] = {
        { "1", 1 }, { "4", 4 }, { "007", 7 }, { "4096", 4096 },
        { "2147483648", INT64_C(2147483648) },
        { "9223372036854775807", INT64_MAX },
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int64_t v = -1;
        ck_assert_msg(tci_parse_count(good[i].text, &v) == 0, "rejected \"%s\"", good[i].text);
        ck_assert_msg(v == good[i].value, "\"%s\" parsed as %lld", good[i].text, (long long)v);
    }
}
END_TEST

START_TEST(parse_count_rejects_the_rest)
{
    const char *bad[] = { "", "0", "00", "-1", "+1", " 1", "1 ", "1k", "4M", "abc", "1.0",
                          "0x10", "1,2", "9223372036854775808", "99999999999999999999" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t v = 77;
        ck_assert_msg(tci_parse_count(bad[i], &v) == -1, "accepted \"%s\"", bad[i]);
        ck_assert_msg(v == 77, "\"%s\" changed the output", bad[i]);
    }
    int64_t v = 77;
    ck_assert_int_eq(tci_parse_count(NULL, &v), -1);
    ck_assert_int_eq(v, 77);
}
END_TEST

START_TEST(parse_switch_accepts_on_and_off_in_any_case)
{
    const char *on[] = { "1", "on", "ON", "On", "yes", "YES", "Yes", "true", "TRUE", "tRuE" };
    const char *off[] = { "0", "off", "OFF", "Off", "no", "NO", "No", "false", "FALSE", "fAlSe" };
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
        int v = 5;
        ck_assert_msg(tci_parse_switch(on[i], &v) == 0, "rejected \"%s\"", on[i]);
        ck_assert_msg(v == 1, "\"%s\" parsed as %d, expected 1", on[i], v);
    }
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
        int v = 5;
        ck_assert_msg(tci_parse_switch(off[i], &v) == 0, "rejected \"%s\"", off[i]);
        ck_assert_msg(v == 0, "\"%s\" parsed as %d, expected 0", off[i], v);
    }
}
END_TEST

START_TEST(parse_switch_rejects_the_rest)
{
    const char *bad[] = { "", "2", "-1", "00", "01", "10", "o", "onn", "of", " on", "on ",
                          "y", "n", "t", "f", "enable", "disable", "truee", "yes!", "1k" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int v = 5;
        ck_assert_msg(tci_parse_switch(bad[i], &v) == -1, "accepted \"%s\"", bad[i]);
        ck_assert_msg(v == 5, "\"%s\" changed the output", bad[i]);
    }
    int v = 5;
    ck_assert_int_eq(tci_parse_switch(NULL, &v), -1);
    ck_assert_int_eq(v, 5);
}
END_TEST

/* "FIRST,FIRST+1,...,FIRST+N-1" in a malloc'ed string. */
static char *rank_list_text(int first, int n)
{
    size_t cap = (size_t)n * 12 + 1, used = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (int i = 0; i < n; i++)
        used += (size_t)snprintf(s + used, cap - used, i ? ",%d" : "%d", first + i);
    return s;
}

START_TEST(parse_placement_accepts_names_and_rank_lists)
{
    tci_placement_kind kind = TCI_PLACE_LIST;
    int *list = NULL, len = -1;
    ck_assert_int_eq(tci_parse_placement("spread", &kind, &list, &len), 0);
    ck_assert_int_eq(kind, TCI_PLACE_SPREAD);
    ck_assert_ptr_null(list);               /* names allocate nothing */
    ck_assert_int_eq(tci_parse_placement("node", &kind, &list, &len), 0);
    ck_assert_int_eq(kind, TCI_PLACE_NODE);
    ck_assert_ptr_null(list);

    static const struct { const char *text; int len; int ranks[5]; } good[] = {
        { "0", 1, { 0 } },
        { "3,1", 2, { 3, 1 } },                 /* kept in the user's order */
        { "3,2,1,0", 4, { 3, 2, 1, 0 } },
        { "0,4,8,12,16", 5, { 0, 4, 8, 12, 16 } },
        { "007,8", 2, { 7, 8 } },
        { "2147483647", 1, { 2147483647 } },    /* range is checked against P at open */
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        kind = TCI_PLACE_SPREAD;
        list = NULL;
        len = -1;
        ck_assert_msg(tci_parse_placement(good[i].text, &kind, &list, &len) == 0,
                      "rejected \"%s\"", good[i].text);
        ck_assert_int_eq(kind, TCI_PLACE_LIST);
        ck_assert_ptr_nonnull(list);
        ck_assert_msg(len == good[i].len, "\"%s\": length %d", good[i].text, len);
        for (int k = 0; k < len; k++)
            ck_assert_msg(list[k] == good[i].ranks[k], "\"%s\": entry %d is %d", good[i].text,
                          k, list[k]);
        free(list);
    }

    /* The longest list allowed. */
    char *text = rank_list_text(0, TCI_MAX_AGGREGATOR_LIST);
    ck_assert_ptr_nonnull(text);
    list = NULL;
    ck_assert_int_eq(tci_parse_placement(text, &kind, &list, &len), 0);
    ck_assert_int_eq(kind, TCI_PLACE_LIST);
    ck_assert_int_eq(len, TCI_MAX_AGGREGATOR_LIST);
    ck_assert_ptr_nonnull(list);
    for (int k = 0; k < len; k++)
        ck_assert_int_eq(list[k], k);
    free(list);
    free(text);
}
END_TEST

START_TEST(parse_placement_rejects_bad_lists)
{
    const char *bad[] = {
        "", ",", "1,", ",1", "1,,2", "1, 2", "1 ,2", " 1", "1 ", "-1", "1,-2", "+1",
        "1,1", "0,2,0", "3,2,1,3", "1;2", "1.5", "0x1", "a", "1,a", "SPREAD", "Spread",
        "Node", "spread ", " node", "spread,1", "nodes", "2147483648", "0,99999999999",
        "99999999999999999999999",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tci_placement_kind kind = TCI_PLACE_NODE;
        int *list = NULL, len = -7;
        ck_assert_msg(tci_parse_placement(bad[i], &kind, &list, &len) == -1, "accepted \"%s\"",
                      bad[i]);
        ck_assert_msg(kind == TCI_PLACE_NODE && list == NULL && len == -7,
                      "\"%s\" changed the outputs", bad[i]);
    }
    tci_placement_kind kind = TCI_PLACE_NODE;
    int *list = NULL, len = -7;
    ck_assert_int_eq(tci_parse_placement(NULL, &kind, &list, &len), -1);

    /* One entry more than the limit, and far more. */
    static const int too_long[] = { TCI_MAX_AGGREGATOR_LIST + 1, 5000 };
    for (size_t i = 0; i < sizeof too_long / sizeof too_long[0]; i++) {
        char *text = rank_list_text(0, too_long[i]);
        ck_assert_ptr_nonnull(text);
        ck_assert_msg(tci_parse_placement(text, &kind, &list, &len) == -1,
                      "a list of %d ranks was accepted (limit %d)", too_long[i],
                      TCI_MAX_AGGREGATOR_LIST);
        ck_assert_ptr_null(list);
        free(text);
    }
    /* A duplicate at the very end of a long list. */
    char *text = rank_list_text(10, 3000);
    ck_assert_ptr_nonnull(text);
    char *dup = malloc(strlen(text) + 8);
    ck_assert_ptr_nonnull(dup);
    sprintf(dup, "%s,%d", text, 2509);
    ck_assert_int_eq(tci_parse_placement(dup, &kind, &list, &len), -1);
    ck_assert_ptr_null(list);
    free(dup);
    free(text);
}
END_TEST

/* ---- configuration from environment, info and striping ---- */

static void clear_env(void)
{
    unsetenv("TCIO_SEGMENT_SIZE");
    unsetenv("TCIO_SEGMENTS_PER_PROC");
    unsetenv("TCIO_AGGREGATORS");
    unsetenv("TCIO_AGGREGATOR_PLACEMENT");
    unsetenv("TCIO_EARLY_DRAIN");
    unsetenv("TCIO_STATS");
    unsetenv("TCIO_STATS_FILE");
    unsetenv("TCIO_TRANSPORT");
    unsetenv("TCIO_NODE_SEGMENTS");
    unsetenv("TCIO_FORWARD_STAGING");
}

START_TEST(config_defaults_and_striping_unit)
{
    clear_env();
    tci_config c;
    ck_assert_int_eq(tci_config_from_user(MPI_INFO_NULL, &c), TCIO_SUCCESS);
    ck_assert_int_eq(c.segment_size, 0);
    ck_assert_int_eq(tci_config_finish(&c, 0), TCIO_SUCCESS);
    ck_assert_int_eq(c.segment_size, TCI_DEFAULT_SEGMENT_SIZE);
    ck_assert_int_eq(c.segments_per_proc, TCI_DEFAULT_SEGMENTS_PER_PROC);

    ck_assert_int_eq(tci_config_from_user(MPI_INFO_NULL, &c), TCIO_SUCCESS);
    ck_assert_int_eq(tci_config_finish(&c, 4 << 20), TCIO_SUCCESS);
    ck_assert_int_eq(c.segment_size, 4 << 20);   /* the stripe wins over 1 MiB */
}
END_TEST

/* Add KEY=VALUE to INFO (which otherwise holds tcio_* keys only): the copy
 * for MPI_File_open must hold that key alone. */
static void expect_passthrough_only(MPI_Info info, const char *key, const char *value)
{
    MPI_Info pass;
    MPI_Info_set(info, key, value);
    ck_assert_int_eq(tci_config_passthrough_info(info, &pass), MPI_SUCCESS);
    int nkeys = 0, found = 0;
    char got[64];
    MPI_Info_get_nkeys(pass, &nkeys);
    ck_assert_int_eq(nkeys, 1);
    MPI_Info_get(pass, key, (int)sizeof got - 1, got, &found);
    ck_assert(found && strcmp(got, value) == 0);
    MPI_Info_free(&pass);
}

START_TEST(config_info_keys_and_env_precedence)
{
    clear_env();
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "tcio_segment_size", "64k");
    MPI_Info_set(info, "tcio_segments_per_proc", "3");
    tci_config c;
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_SUCCESS);
    ck_assert_int_eq(tci_config_finish(&c, 1 << 20), TCIO_SUCCESS);
    ck_assert_int_eq(c.segment_size, 65536);   /* explicit beats the stripe */
    ck_assert_int_eq(c.segments_per_proc, 3);

    setenv("TCIO_SEGMENT_SIZE", "128", 1);
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_SUCCESS);
    ck_assert_int_eq(c.segment_size, 128);
    ck_assert_int_eq(c.segments_per_proc, 3);
    clear_env();

    expect_passthrough_only(info, "cb_nodes", "2");
    MPI_Info_free(&info);
}
END_TEST

START_TEST(config_rejects_invalid_values)
{
    const char *bad_sizes[] = { "0", "-4", "abc", "2G", "1025M" };
    for (size_t i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++) {
        clear_env();
        setenv("TCIO_SEGMENT_SIZE", bad_sizes[i], 1);
        tci_config c;
        ck_assert_msg(tci_config_from_user(MPI_INFO_NULL, &c) == TCIO_ERR_BAD_CONFIG,
                      "segment size \"%s\" accepted", bad_sizes[i]);
    }
    clear_env();
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "tcio_segments_per_proc", "0");
    tci_config c;
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_ERR_BAD_CONFIG);
    MPI_Info_set(info, "tcio_segments_per_proc", "4M");   /* above the slot limit */
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_ERR_BAD_CONFIG);
    MPI_Info_free(&info);

    /* The limits themselves are accepted, one more is not. */
    clear_env();
    setenv("TCIO_SEGMENT_SIZE", "1G", 1);
    setenv("TCIO_SEGMENTS_PER_PROC", "1M", 1);
    ck_assert_int_eq(tci_config_from_user(MPI_INFO_NULL, &c), TCIO_SUCCESS);
    ck_assert_int_eq(c.segment_size, TCI_MAX_SEGMENT_SIZE);
    ck_assert_int_eq(c.segments_per_proc, TCI_MAX_SEGMENTS_PER_PROC);
    setenv("TCIO_SEGMENTS_PER_PROC", "1048577", 1);
    ck_assert_int_eq(tci_config_from_user(MPI_INFO_NULL, &c), TCIO_ERR_BAD_CONFIG);
    setenv("TCIO_SEGMENTS_PER_PROC", "1", 1);
    setenv("TCIO_SEGMENT_SIZE", "1073741825", 1);
    ck_assert_int_eq(tci_config_from_user(MPI_INFO_NULL, &c), TCIO_ERR_BAD_CONFIG);
    clear_env();
}
END_TEST

/* The reason tcio_last_error gives for a configuration that
 * tci_config_from_user rejects, as a public call would record it. */
static void expect_reason(MPI_Info info, const char *const *parts)
{
    tci_config c;
    int rc = tci_config_from_user(info, &c);
    ck_assert_int_eq(tci_error_note("test", rc), TCIO_ERR_BAD_CONFIG);
    char msg[TCIO_MAX_ERROR_STRING];
    ck_assert_int_eq(tcio_last_error(msg, sizeof msg), TCIO_ERR_BAD_CONFIG);
    ck_assert_msg(strncmp(msg, "rank 0: ", 8) == 0, "no rank in \"%s\"", msg);
    for (; *parts; parts++)
        ck_assert_msg(strstr(msg, *parts) != NULL, "\"%s\" does not contain \"%s\"", msg,
                      *parts);
}

START_TEST(config_rejections_name_setting_source_and_value)
{
    static const char *const settings[][3] = {
        /* variable, info key, a bad value */
        { "TCIO_SEGMENT_SIZE", "tcio_segment_size", "1.5M" },
        { "TCIO_SEGMENT_SIZE", "tcio_segment_size", "2G" },
        { "TCIO_SEGMENTS_PER_PROC", "tcio_segments_per_proc", "0" },
        { "TCIO_AGGREGATORS", "tcio_aggregators", "two" },
        { "TCIO_AGGREGATOR_PLACEMENT", "tcio_aggregator_placement", "0,0" },
        { "TCIO_EARLY_DRAIN", "tcio_early_drain", "maybe" },
        { "TCIO_STATS", "tcio_stats", "verbose" },
        { "TCIO_TRANSPORT", "tcio_transport", "RMA" },
    };
    char env_name[64], key_name[64], quoted[64];
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        const char *env = settings[i][0], *key = settings[i][1], *value = settings[i][2];
        snprintf(env_name, sizeof env_name, "environment variable %s=", env);
        snprintf(key_name, sizeof key_name, "info key %s=", key);
        snprintf(quoted, sizeof quoted, "\"%s\"", value);
        clear_env();
        setenv(env, value, 1);
        expect_reason(MPI_INFO_NULL, (const char *const[]){ env_name, quoted, NULL });
        clear_env();
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, key, value[0] ? value : " ");
        if (value[0])
            expect_reason(info, (const char *const[]){ key_name, quoted, NULL });
        MPI_Info_free(&info);
    }
    /* Settings valid alone but not together, or not for this P. */
    clear_env();
    setenv("TCIO_AGGREGATORS", "3", 1);
    setenv("TCIO_AGGREGATOR_PLACEMENT", "0,1", 1);
    expect_reason(MPI_INFO_NULL, (const char *const[]){ "tcio_aggregators is 3",
                                                        "lists 2 ranks", NULL });
    setenv("TCIO_AGGREGATORS", "5", 1);
    unsetenv("TCIO_AGGREGATOR_PLACEMENT");
    tci_config c;
    ck_assert_int_eq(tci_config_from_user(MPI_INFO_NULL, &c), TCIO_SUCCESS);
    ck_assert_int_eq(tci_error_note("t", tci_config_check_ranks(&c, 2)), TCIO_ERR_BAD_CONFIG);
    tci_config_free(&c);
    char msg[TCIO_MAX_ERROR_STRING];
    tcio_last_error(msg, sizeof msg);
    ck_assert_msg(strstr(msg, "tcio_aggregators is 5, more than the 2 ranks"), "%s", msg);
    clear_env();
}
END_TEST

/* ---- the transport setting and the chooser ---- */

START_TEST(parse_transport_accepts_auto_rma_and_shm)
{
    tci_transport_kind kind = TCI_TRANSPORT_RMA;
    ck_assert_int_eq(tci_parse_transport("auto", &kind), 0);
    ck_assert_int_eq(kind, TCI_TRANSPORT_AUTO);
    ck_assert_int_eq(tci_parse_transport("rma", &kind), 0);
    ck_assert_int_eq(kind, TCI_TRANSPORT_RMA);
    ck_assert_int_eq(tci_parse_transport("shm", &kind), 0);
    ck_assert_int_eq(kind, TCI_TRANSPORT_SHM);
    kind = TCI_TRANSPORT_RMA;
    static const char *const bad[] = { "", "RMA", "Auto", "SHM", "Shm", "sHm", " rma", "rma ",
                                       "shm ", " shm", "mpi", "rmashm", "shmem", "sh", "r" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kind = TCI_TRANSPORT_RMA;
        ck_assert_msg(tci_parse_transport(bad[i], &kind) == -1, "accepted \"%s\"", bad[i]);
        ck_assert_int_eq(kind, TCI_TRANSPORT_RMA);   /* untouched */
    }
    ck_assert_int_eq(tci_parse_transport(NULL, &kind), -1);
}
END_TEST

START_TEST(config_transport_from_info_and_env)
{
    clear_env();
    tci_config c;
    ck_assert_int_eq(tci_config_from_user(MPI_INFO_NULL, &c), TCIO_SUCCESS);
    ck_assert_int_eq(c.transport, TCI_TRANSPORT_AUTO);   /* the default */
    tci_config_free(&c);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "tcio_transport", "rma");
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_SUCCESS);
    ck_assert_int_eq(c.transport, TCI_TRANSPORT_RMA);
    tci_config_free(&c);
    setenv("TCIO_TRANSPORT", "auto", 1);                  /* the environment wins */
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_SUCCESS);
    ck_assert_int_eq(c.transport, TCI_TRANSPORT_AUTO);
    tci_config_free(&c);
    clear_env();
    expect_passthrough_only(info, "striping_factor", "4");   /* not for MPI_File_open */
    MPI_Info_free(&info);

    /* shm is accepted from either source; its case variants are refused. */
    setenv("TCIO_TRANSPORT", "shm", 1);
    ck_assert_int_eq(tci_config_from_user(MPI_INFO_NULL, &c), TCIO_SUCCESS);
    ck_assert_int_eq(c.transport, TCI_TRANSPORT_SHM);
    tci_config_free(&c);
    setenv("TCIO_TRANSPORT", "Shm", 1);
    expect_reason(MPI_INFO_NULL, (const char *const[]){
        "environment variable TCIO_TRANSPORT=\"Shm\"", "expected auto, rma, shm or mixed", NULL });
    clear_env();
    MPI_Info_create(&info);
    MPI_Info_set(info, "tcio_transport", "shm");
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_SUCCESS);
    ck_assert_int_eq(c.transport, TCI_TRANSPORT_SHM);
    tci_config_free(&c);
    MPI_Info_set(info, "tcio_transport", "SHM");
    expect_reason(info, (const char *const[]){ "info key tcio_transport=\"SHM\"",
                                               "expected auto, rma, shm or mixed", NULL });
    MPI_Info_set(info, "tcio_transport", "fast");
    expect_reason(info, (const char *const[]){ "\"fast\"", "expected auto, rma, shm or mixed", NULL });
    MPI_Info_free(&info);
}
END_TEST

START_TEST(transport_chooser_auto_rma_shm)
{
    /* auto: shm on one node, rma on several or when the count is unknown
     * (0), with a combining tier in front on several (mixed); asked for by
     * name, each is itself on any node count, and mixed is shm on one. */
    for (int refused = 0; refused <= 1; refused++) {
        tci_transport_plan one = tci_transport_plan_for(TCI_TRANSPORT_AUTO, 1, refused);
        ck_assert_ptr_eq(one.level2, refused ? &tci_transport_rma : &tci_transport_shm);
        ck_assert_ptr_null(one.tier);
        one = tci_transport_plan_for(TCI_TRANSPORT_MIXED, 1, refused);
        ck_assert_ptr_eq(one.level2, refused ? &tci_transport_rma : &tci_transport_shm);
        ck_assert_ptr_null(one.tier);
    }
    tci_transport_plan unknown = tci_transport_plan_for(TCI_TRANSPORT_AUTO, 0, false);
    ck_assert_ptr_eq(unknown.level2, &tci_transport_rma);
    ck_assert_ptr_null(unknown.tier);
    for (int nodes = 0; nodes <= 3; nodes++) {
        tci_transport_plan rma = tci_transport_plan_for(TCI_TRANSPORT_RMA, nodes, false);
        tci_transport_plan shm = tci_transport_plan_for(TCI_TRANSPORT_SHM, nodes, false);
        ck_assert_ptr_eq(rma.level2, &tci_transport_rma);
        ck_assert_ptr_eq(shm.level2, &tci_transport_shm);
        ck_assert_ptr_null(rma.tier);
        ck_assert_ptr_null(shm.tier);
        const tci_transport_kind combining[] = { TCI_TRANSPORT_AUTO, TCI_TRANSPORT_MIXED };
        for (int k = 0; nodes > 1 && k < 2; k++) {
            tci_transport_plan several = tci_transport_plan_for(combining[k], nodes, false);
            ck_assert_ptr_eq(several.level2, &tci_transport_rma);
            ck_assert_ptr_eq(several.tier, &tci_transport_shm);
        }
    }
    tci_transport_kind kind = TCI_TRANSPORT_AUTO;
    ck_assert_int_eq(tci_parse_transport("mixed", &kind), 0);
    ck_assert_int_eq(kind, TCI_TRANSPORT_MIXED);
    ck_assert_int_eq(tci_parse_transport("Mixed", &kind), -1);
    /* shm on several nodes is refused, naming the count; the others pass. */
    ck_assert_int_eq(tci_transport_check_nodes(TCI_TRANSPORT_SHM, 1), TCIO_SUCCESS);
    ck_assert_int_eq(tci_transport_check_nodes(TCI_TRANSPORT_AUTO, 3), TCIO_SUCCESS);
    ck_assert_int_eq(tci_transport_check_nodes(TCI_TRANSPORT_RMA, 3), TCIO_SUCCESS);
    int rc = tci_transport_check_nodes(TCI_TRANSPORT_SHM, 3);
    ck_assert_int_eq(tci_error_note("test", rc), TCIO_ERR_BAD_CONFIG);
    char msg[TCIO_MAX_ERROR_STRING];
    ck_assert_int_eq(tcio_last_error(msg, sizeof msg), TCIO_ERR_BAD_CONFIG);
    ck_assert_msg(strstr(msg, "shm") && strstr(msg, "spans 3 nodes"), "message \"%s\"", msg);
    ck_assert_str_eq(tci_transport_rma.name, "rma");
    ck_assert_str_eq(tci_transport_shm.name, "shm");
    /* Every operation of both is there: level 2 calls them without checking
     * (describe and forget only for a transport that moves extents). */
    ck_assert(tci_transport_shm.moves_bitmaps && !tci_transport_rma.moves_bitmaps);
    ck_assert(tci_transport_rma.describe && tci_transport_rma.forget);
    for (int k = 0; k < 2; k++) {
        const tci_transport_ops *ops = k ? &tci_transport_shm : &tci_transport_rma;
        const void *const table[] = {
            (const void *)ops->open, (const void *)ops->close, (const void *)ops->take,
            (const void *)ops->release, (const void *)ops->reset,
            (const void *)ops->put, (const void *)ops->get,
            (const void *)ops->get_all, (const void *)ops->put_range,
            (const void *)ops->get_range, (const void *)ops->loaded_span, (const void *)ops->notify,
            (const void *)ops->memory, (const void *)ops->state_in_memory,
            (const void *)ops->clear_in_memory, (const void *)ops->add_written_in_memory,
            (const void *)ops->sync, (const void *)ops->notices,
            (const void *)ops->peek_states, (const void *)ops->complete_all
        };
        for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
            ck_assert_msg(table[i] != NULL, "%s: operation %zu missing", ops->name, i);
    }
}
END_TEST

START_TEST(last_error_keeps_the_last_failure)
{
    char msg[TCIO_MAX_ERROR_STRING];
    /* A failure with a reason set, then a success: the failure stays. */
    tci_error_note("t", tci_error_set(TCIO_ERR_IO, "the disk is on fire (%d)", 42));
    ck_assert_int_eq(tci_error_note("t", TCIO_SUCCESS), TCIO_SUCCESS);
    ck_assert_int_eq(tcio_last_error(msg, sizeof msg), TCIO_ERR_IO);
    ck_assert_str_eq(msg, "rank 0: t: the disk is on fire (42)");     /* the call is named */
    /* ... once: a reason that names it already keeps its text. */
    tci_error_note("tcio_x", tci_error_set(TCIO_ERR_IO, "tcio_x: named"));
    tcio_last_error(msg, sizeof msg);
    ck_assert_str_eq(msg, "rank 0: tcio_x: named");
    /* A caller's explanation does not replace the reason found deeper;
     * without one it names what the caller did and the code's message. */
    tci_error_set(TCIO_ERR_IO, "deep");
    ck_assert_int_eq(tci_error_explain(TCIO_ERR_IO, "shallow %d", 1), TCIO_ERR_IO);
    tci_error_note("t", TCIO_ERR_IO);
    tcio_last_error(msg, sizeof msg);
    ck_assert_str_eq(msg, "rank 0: t: deep");
    ck_assert_int_eq(tci_error_explain(TCIO_ERR_NO_MEMORY, "shallow %d", 2), TCIO_ERR_NO_MEMORY);
    tci_error_note("t", TCIO_ERR_NO_MEMORY);
    tcio_last_error(msg, sizeof msg);
    ck_assert_str_eq(msg, "rank 0: t: shallow 2: out of memory");
    ck_assert_int_eq(tci_error_explain(TCIO_SUCCESS, "nothing"), TCIO_SUCCESS);
    /* A sticky failure keeps its reason without the rank. */
    char kept[64];
    tci_error_set(TCIO_ERR_NO_SPACE, "full");
    tci_error_keep(TCIO_ERR_NO_SPACE, kept, sizeof kept);
    ck_assert_str_eq(kept, "full");
    tci_error_keep(TCIO_ERR_IO, kept, sizeof kept);
    ck_assert_str_eq(kept, tcio_error_string(TCIO_ERR_IO));
    tci_error_note("t", TCIO_SUCCESS);
    /* The Fortran module's refusals are recorded like the library's. */
    ck_assert_int_eq(tcio_fortran_refusal(TCIO_ERR_BAD_ARG, "tcio_read", "why"), TCIO_ERR_BAD_ARG);
    ck_assert_int_eq(tcio_last_error(msg, sizeof msg), TCIO_ERR_BAD_ARG);
    ck_assert_str_eq(msg, "rank 0: tcio_read: why");
    ck_assert_str_eq(tci_error_code_name(TCIO_ERR_REMOTE), "TCIO_ERR_REMOTE");
    /* A reason set for another code than the call returns is not used;
     * a reason set during a call that then succeeds is dropped. */
    tci_error_set(TCIO_ERR_IO, "unrelated");
    ck_assert_int_eq(tci_error_note("tcio_seek", TCIO_ERR_BAD_ARG), TCIO_ERR_BAD_ARG);
    tcio_last_error(msg, sizeof msg);
    ck_assert_msg(strstr(msg, "tcio_seek: invalid argument") != NULL, "%s", msg);
    tci_error_set(TCIO_ERR_IO, "recovered");
    tci_error_note("t", TCIO_SUCCESS);
    ck_assert_int_eq(tci_error_note("tcio_close", TCIO_ERR_REMOTE), TCIO_ERR_REMOTE);
    tcio_last_error(msg, sizeof msg);
    ck_assert_msg(strstr(msg, "tcio_close") && strstr(msg, "another rank"), "%s", msg);
    /* An MPI failure names the call and MPI's own message, on one line. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    ck_assert_int_eq(tci_error_note("t", tci_error_from_mpi(MPI_Barrier(MPI_COMM_NULL))),
                     TCIO_ERR_MPI);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    tcio_last_error(msg, sizeof msg);
    ck_assert_msg(strstr(msg, "MPI_Barrier failed: ") && !strchr(msg, '\n'), "%s", msg);
    /* An error code from elsewhere names the library function. */
    int err = MPI_ERR_ARG;
    ck_assert_int_eq(tci_error_note("t", tci_error_from_io(err)), TCIO_ERR_IO);
    tcio_last_error(msg, sizeof msg);
    ck_assert_msg(strstr(msg, "an MPI call in last_error_keeps_the_last_failure"), "%s", msg);
    /* Truncation. */
    char small[6] = "xxxxx";
    tcio_last_error(small, 4);
    ck_assert_str_eq(small, "ran");
}
END_TEST

/* MPI error codes of the classes MPI-IO gives, mapped to libtcio's: an
 * open refused on a read-only file system (MPI_ERR_READ_ONLY) is
 * TCIO_ERR_ACCESS, and ROMIO's full file system, MPI_ERR_IO whose string
 * says "No space left on device", is TCIO_ERR_NO_SPACE (a mutation audit
 * broke each mapping unnoticed: only a real full or read-only file system
 * shows them).  The codes are made with MPI_Add_error_code in the class,
 * with the string ROMIO gives; MPICH 4.0's MPI_Error_string does not give
 * an added code's string back (it prints an unrelated error stack), so
 * the string's part runs where it does (Open MPI). */
START_TEST(error_classes_map_to_codes)
{
    int read_only = 0, full = 0, other_io = 0;
    ck_assert_int_eq(MPI_Add_error_code(MPI_ERR_READ_ONLY, &read_only), MPI_SUCCESS);
    ck_assert_int_eq(MPI_Add_error_code(MPI_ERR_IO, &full), MPI_SUCCESS);
    ck_assert_int_eq(MPI_Add_error_string(full, "Other I/O error No space left on device"),
                     MPI_SUCCESS);
    ck_assert_int_eq(MPI_Add_error_code(MPI_ERR_IO, &other_io), MPI_SUCCESS);
    ck_assert_int_eq(MPI_Add_error_string(other_io, "Other I/O error Input/output error"),
                     MPI_SUCCESS);
    ck_assert_int_eq(tci_error_note("t", tci_error_from_open(read_only)), TCIO_ERR_ACCESS);
    char text[MPI_MAX_ERROR_STRING + 1] = "";
    int len = 0;
    MPI_Error_string(full, text, &len);
    if (strstr(text, "No space left on device"))
        ck_assert_int_eq(tci_error_note("t", tci_error_from_io(full)), TCIO_ERR_NO_SPACE);
    ck_assert_int_eq(tci_error_note("t", tci_error_from_io(other_io)), TCIO_ERR_IO);
    ck_assert_int_eq(tci_error_note("t", tci_error_from_io(MPI_ERR_NO_SPACE)),
                     TCIO_ERR_NO_SPACE);
    ck_assert_int_eq(tci_error_note("t", tci_error_from_open(MPI_ERR_NO_SUCH_FILE)),
                     TCIO_ERR_NO_SUCH_FILE);
}
END_TEST

START_TEST(config_aggregator_settings_defaults)
{
    clear_env();
    tci_config c;
    ck_assert_int_eq(tci_config_from_user(MPI_INFO_NULL, &c), TCIO_SUCCESS);
    ck_assert_int_eq(c.aggregators, 0);           /* the default is chosen at open */
    ck_assert_int_eq(c.placement, TCI_PLACE_SPREAD);
    ck_assert_ptr_null(c.list);
    ck_assert_int_eq(c.list_len, 0);
    ck_assert_int_eq(c.early_drain, -1);
    ck_assert_int_eq(c.stats, 0);
    ck_assert_int_eq(tci_config_finish(&c, 0), TCIO_SUCCESS);
    ck_assert_int_eq(c.early_drain, 1);           /* on unless switched off */
    ck_assert_int_eq(c.aggregators, 0);
    tci_config_free(&c);
}
END_TEST

START_TEST(config_aggregator_info_keys_and_env_precedence)
{
    clear_env();
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "tcio_aggregators", "3");
    MPI_Info_set(info, "tcio_aggregator_placement", "node");
    MPI_Info_set(info, "tcio_early_drain", "off");
    MPI_Info_set(info, "tcio_stats", "yes");
    tci_config c;
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_SUCCESS);
    ck_assert_int_eq(c.aggregators, 3);
    ck_assert_int_eq(c.placement, TCI_PLACE_NODE);
    ck_assert_ptr_null(c.list);
    ck_assert_int_eq(c.early_drain, 0);
    ck_assert_int_eq(c.stats, 1);
    ck_assert_int_eq(tci_config_finish(&c, 0), TCIO_SUCCESS);
    ck_assert_int_eq(c.early_drain, 0);           /* an explicit off stays off */
    tci_config_free(&c);

    /* Each variable overrides its key, one at a time. */
    setenv("TCIO_AGGREGATORS", "2", 1);
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_SUCCESS);
    ck_assert_int_eq(c.aggregators, 2);
    ck_assert_int_eq(c.placement, TCI_PLACE_NODE);
    tci_config_free(&c);
    setenv("TCIO_AGGREGATOR_PLACEMENT", "spread", 1);
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_SUCCESS);
    ck_assert_int_eq(c.aggregators, 2);
    ck_assert_int_eq(c.placement, TCI_PLACE_SPREAD);
    ck_assert_int_eq(c.early_drain, 0);
    ck_assert_int_eq(c.stats, 1);
    tci_config_free(&c);
    setenv("TCIO_EARLY_DRAIN", "ON", 1);
    setenv("TCIO_STATS", "False", 1);
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_SUCCESS);
    ck_assert_int_eq(c.early_drain, TCI_DRAIN_OWNER);
    ck_assert_int_eq(c.stats, 0);
    tci_config_free(&c);
    setenv("TCIO_EARLY_DRAIN", "Mover", 1);   /* the rank that completes a segment */
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_SUCCESS);
    ck_assert_int_eq(c.early_drain, TCI_DRAIN_MOVER);
    tci_config_free(&c);
    setenv("TCIO_EARLY_DRAIN", "movers", 1);
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_ERR_BAD_CONFIG);
    tci_config_free(&c);
    setenv("TCIO_EARLY_DRAIN", "ON", 1);

    /* A list from the environment with a count from the environment that
     * matches it, over an info count that does not. */
    setenv("TCIO_AGGREGATOR_PLACEMENT", "2,0", 1);
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_SUCCESS);
    ck_assert_int_eq(c.placement, TCI_PLACE_LIST);
    ck_assert_int_eq(c.list_len, 2);
    ck_assert_ptr_nonnull(c.list);
    ck_assert_int_eq(c.list[0], 2);
    ck_assert_int_eq(c.list[1], 0);
    ck_assert_int_eq(c.aggregators, 2);
    tci_config_free(&c);
    ck_assert_ptr_null(c.list);
    ck_assert_int_eq(c.list_len, 0);
    /* Without the variable the info count 3 disagrees with the list. */
    unsetenv("TCIO_AGGREGATORS");
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_ERR_BAD_CONFIG);

    /* A valid variable over an invalid key, and the other way round. */
    clear_env();
    MPI_Info_set(info, "tcio_aggregators", "0");
    MPI_Info_set(info, "tcio_aggregator_placement", "1,1");
    MPI_Info_set(info, "tcio_early_drain", "maybe");
    MPI_Info_set(info, "tcio_stats", "2");
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_ERR_BAD_CONFIG);
    setenv("TCIO_AGGREGATORS", "1", 1);
    setenv("TCIO_AGGREGATOR_PLACEMENT", "node", 1);
    setenv("TCIO_EARLY_DRAIN", "no", 1);
    setenv("TCIO_STATS", "true", 1);
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_SUCCESS);
    ck_assert_int_eq(c.aggregators, 1);
    ck_assert_int_eq(c.placement, TCI_PLACE_NODE);
    ck_assert_int_eq(c.early_drain, 0);
    ck_assert_int_eq(c.stats, 1);
    tci_config_free(&c);
    clear_env();

    MPI_Info_set(info, "tcio_aggregators", "4");
    MPI_Info_set(info, "tcio_aggregator_placement", "spread");
    MPI_Info_set(info, "tcio_early_drain", "1");
    MPI_Info_set(info, "tcio_stats", "0");
    static const char *const vars[][2] = {
        { "TCIO_AGGREGATORS", "0" }, { "TCIO_AGGREGATORS", "-2" },
        { "TCIO_AGGREGATORS", "two" }, { "TCIO_AGGREGATORS", "" },
        { "TCIO_AGGREGATOR_PLACEMENT", "0,0" }, { "TCIO_AGGREGATOR_PLACEMENT", "" },
        { "TCIO_AGGREGATOR_PLACEMENT", "random" },
        { "TCIO_EARLY_DRAIN", "" }, { "TCIO_EARLY_DRAIN", "2" },
        { "TCIO_STATS", "" }, { "TCIO_STATS", "verbose" },
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        clear_env();
        setenv(vars[i][0], vars[i][1], 1);
        ck_assert_msg(tci_config_from_user(info, &c) == TCIO_ERR_BAD_CONFIG,
                      "%s=\"%s\" over valid info keys was accepted", vars[i][0], vars[i][1]);
        ck_assert_ptr_null(c.list);             /* nothing left to free */
    }
    clear_env();

    /* The new keys are tcio's own: not passed to MPI_File_open. */
    expect_passthrough_only(info, "romio_cb_write", "enable");
    MPI_Info_free(&info);
}
END_TEST

START_TEST(config_aggregator_count_and_list)
{
    clear_env();
    MPI_Info info;
    MPI_Info_create(&info);
    tci_config c;

    /* A list alone fixes the count; an equal count is accepted. */
    MPI_Info_set(info, "tcio_aggregator_placement", "5,0,3");
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_SUCCESS);
    ck_assert_int_eq(c.placement, TCI_PLACE_LIST);
    ck_assert_int_eq(c.aggregators, 3);
    ck_assert_int_eq(c.list_len, 3);
    ck_assert_int_eq(c.list[0], 5);
    ck_assert_int_eq(c.list[1], 0);
    ck_assert_int_eq(c.list[2], 3);
    tci_config_free(&c);
    MPI_Info_set(info, "tcio_aggregators", "3");
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_SUCCESS);
    ck_assert_int_eq(c.aggregators, 3);
    tci_config_free(&c);

    /* A different count is rejected, from the info or the environment. */
    static const char *const other[] = { "1", "2", "4", "4096" };
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
        MPI_Info_set(info, "tcio_aggregators", other[i]);
        ck_assert_msg(tci_config_from_user(info, &c) == TCIO_ERR_BAD_CONFIG,
                      "list of 3 with tcio_aggregators=%s accepted", other[i]);
        ck_assert_ptr_null(c.list);
        setenv("TCIO_AGGREGATORS", other[i], 1);
        MPI_Info_set(info, "tcio_aggregators", "3");
        ck_assert_msg(tci_config_from_user(info, &c) == TCIO_ERR_BAD_CONFIG,
                      "list of 3 with TCIO_AGGREGATORS=%s accepted", other[i]);
        unsetenv("TCIO_AGGREGATORS");
    }
    /* ... also when the list comes from the environment. */
    MPI_Info_delete(info, "tcio_aggregator_placement");
    setenv("TCIO_AGGREGATOR_PLACEMENT", "1,2", 1);
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_ERR_BAD_CONFIG);
    MPI_Info_set(info, "tcio_aggregators", "2");
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_SUCCESS);
    ck_assert_int_eq(c.aggregators, 2);
    tci_config_free(&c);
    clear_env();
    MPI_Info_delete(info, "tcio_aggregators");

    /* Counts: parsed as positive integers, at most INT32_MAX (the limit
     * against P is checked at open). */
    MPI_Info_set(info, "tcio_aggregators", "2147483647");
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_SUCCESS);
    ck_assert_int_eq(c.aggregators, 2147483647);
    tci_config_free(&c);
    static const char *const bad[] = { "2147483648", "99999999999999999999", "0", "-1", "1k",
                                       " 2", "2 ", "1,2" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        MPI_Info_set(info, "tcio_aggregators", bad[i]);
        ck_assert_msg(tci_config_from_user(info, &c) == TCIO_ERR_BAD_CONFIG,
                      "tcio_aggregators=\"%s\" accepted", bad[i]);
    }
    MPI_Info_free(&info);
}
END_TEST

/* Counts and listed ranks are checked against the number of ranks before
 * any file is opened. */
START_TEST(config_check_ranks_against_nprocs)
{
    MPI_Info info;
    MPI_Info_create(&info);
    tci_config c;
    MPI_Info_set(info, "tcio_aggregators", "4");
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_SUCCESS);
    ck_assert_int_eq(tci_config_check_ranks(&c, 4), TCIO_SUCCESS);
    ck_assert_int_eq(tci_config_check_ranks(&c, 3), TCIO_ERR_BAD_CONFIG);
    tci_config_free(&c);
    MPI_Info_delete(info, "tcio_aggregators");
    MPI_Info_set(info, "tcio_aggregator_placement", "2,0,5");
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_SUCCESS);
    ck_assert_int_eq(tci_config_check_ranks(&c, 6), TCIO_SUCCESS);
    ck_assert_int_eq(tci_config_check_ranks(&c, 5), TCIO_ERR_BAD_CONFIG);
    tci_config_free(&c);
    MPI_Info_set(info, "tcio_aggregator_placement", "node");
    ck_assert_int_eq(tci_config_from_user(info, &c), TCIO_SUCCESS);
    ck_assert_int_eq(tci_config_check_ranks(&c, 1), TCIO_SUCCESS);   /* count from default */
    tci_config_free(&c);
    MPI_Info_free(&info);
}
END_TEST

/* ---- default number of aggregators ---- */

START_TEST(aggregators_default_count)
{
    static const struct { int nprocs, nnodes; int64_t factor; int want; } cases[] = {
        /* Unknown stripe count: one per node, two on a single node. */
        { 1, 1, 0, 1 },       /* never more than the ranks */
        { 2, 1, 0, 2 },
        { 4, 1, 0, 2 },
        { 64, 1, 0, 2 },
        { 2, 2, 0, 2 },
        { 3, 3, 0, 3 },
        { 16, 4, 0, 4 },
        { 1000, 100, 0, 100 },
        { 4, 1, -1, 2 },      /* a negative factor is "unknown" */
        /* Stripe count at most the base: its largest multiple below it. */
        { 4, 1, 1, 2 },
        { 4, 1, 2, 2 },
        { 64, 8, 4, 8 },
        { 64, 8, 3, 6 },
        { 64, 8, 8, 8 },
        { 100, 10, 4, 8 },
        { 1000, 100, 7, 98 },
        /* Stripe count above the base: its largest divisor below it. */
        { 4, 1, 4, 2 },
        { 64, 8, 16, 8 },
        { 64, 8, 12, 6 },
        { 100, 10, 25, 5 },
        { 2000, 1000, 2000, 1000 },
        { 1, 1, 4, 1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int got = tci_aggregators_default(cases[i].nprocs, cases[i].nnodes, cases[i].factor);
        ck_assert_msg(got == cases[i].want, "P=%d, %d node(s), stripe count %lld: %d, expected %d",
                      cases[i].nprocs, cases[i].nnodes, (long long)cases[i].factor, got,
                      cases[i].want);
    }
    /* Whatever the stripe count: between 1 and the base. */
    static const int shapes[][2] = { { 1, 1 }, { 4, 1 }, { 7, 3 }, { 64, 8 }, { 96, 12 } };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int64_t f = 0; f <= 64; f++) {
            int p = shapes[s][0], n = shapes[s][1];
            int base = n > 1 ? n : (p < 2 ? p : 2);
            int got = tci_aggregators_default(p, n, f);
            ck_assert_msg(got >= 1 && got <= base,
                          "P=%d, %d node(s), stripe count %lld: %d aggregators", p, n,
                          (long long)f, got);
            if (f > 0)   /* a multiple or a divisor of the stripe count */
                ck_assert_msg(got % f == 0 || f % got == 0,
                              "P=%d, %d node(s), stripe count %lld: %d aggregators", p, n,
                              (long long)f, got);
        }
}
END_TEST

START_TEST(aggregators_choose_on_one_rank)
{
    clear_env();
    tci_config c;
    tci_aggregators a;
    ck_assert_int_eq(tci_config_from_user(MPI_INFO_NULL, &c), TCIO_SUCCESS);
    ck_assert_int_eq(tci_aggregators_choose(&c, MPI_COMM_SELF, MPI_COMM_SELF, 0, &a), TCIO_SUCCESS);
    ck_assert_int_eq(a.count, 1);
    ck_assert_int_eq(a.ranks[0], 0);
    ck_assert_int_eq(a.index, 0);
    ck_assert_int_eq(a.nnodes, 1);
    int64_t digest = tci_aggregators_digest(&a);
    /* A second choice on a communicator with the node map cached (a dup,
     * so that the cache goes with it) gives the same answer. */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_SELF, &dup);
    tci_aggregators_cache_nodes(dup, &a);
    tci_aggregators again;
    ck_assert_int_eq(tci_aggregators_choose(&c, MPI_COMM_SELF, dup, 0, &again), TCIO_SUCCESS);
    ck_assert_int_eq(again.nnodes, 1);
    ck_assert_int_eq(tci_aggregators_digest(&again), digest);
    tci_aggregators_free(&again);
    MPI_Comm_free(&dup);   /* frees the cached map (valgrind-clean) */
    tci_aggregators_free(&a);
    ck_assert_ptr_null(a.ranks);
    tci_config_free(&c);

    static const char *const placements[] = { "spread", "node", "0" };
    for (size_t i = 0; i < sizeof placements / sizeof placements[0]; i++) {
        setenv("TCIO_AGGREGATOR_PLACEMENT", placements[i], 1);
        setenv("TCIO_AGGREGATORS", "1", 1);
        ck_assert_int_eq(tci_config_from_user(MPI_INFO_NULL, &c), TCIO_SUCCESS);
        ck_assert_int_eq(tci_aggregators_choose(&c, MPI_COMM_SELF, MPI_COMM_SELF, 4, &a), TCIO_SUCCESS);
        ck_assert_int_eq(a.count, 1);
        ck_assert_int_eq(a.ranks[0], 0);
        ck_assert_int_eq(a.index, 0);
        ck_assert(tci_aggregators_digest(&a) == digest);
        tci_aggregators_free(&a);
        tci_config_free(&c);
    }
    /* spread counts the ranks node by node: on 8 ranks dealt round robin
     * over 2 nodes (cyclic, as MPICH's cliques) 2 aggregators are ranks 0
     * and 1, one per node, not 0 and 4 (both on node 0); 4 are 0, 4, 1,
     * 5.  Dealt in blocks, the ranks i * P / A themselves. */
    {
        static const int cyclic_two[] = { 0, 1 }, cyclic_four[] = { 0, 4, 1, 5 };
        static const int block_four[] = { 0, 2, 4, 6 };
        const struct { bool cyclic; int count; const int *want; } cases[] = {
            { true, 2, cyclic_two }, { true, 4, cyclic_four }, { false, 4, block_four }
        };
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            clear_env();
            setenv("TCIO_AGGREGATORS", cases[k].count == 2 ? "2" : "4", 1);
            ck_assert_int_eq(tci_config_from_user(MPI_INFO_NULL, &c), TCIO_SUCCESS);
            bool cached;
            ck_assert_int_eq(tci_aggregators_prepare(MPI_COMM_SELF, 8, &a, &cached),
                             TCIO_SUCCESS);
            for (int r = 0; r < 8; r++)
                a.node_of[r] = cases[k].cyclic ? r % 2 : r / 4;
            a.nnodes = 2;
            ck_assert_int_eq(tci_aggregators_choose_agreed(&c, MPI_COMM_SELF, 0, &a),
                             TCIO_SUCCESS);
            ck_assert_int_eq(a.count, cases[k].count);
            for (int i = 0; i < a.count; i++)
                ck_assert_int_eq(a.ranks[i], cases[k].want[i]);
            tci_aggregators_free(&a);
            tci_config_free(&c);
        }
    }
    /* More aggregators than ranks, a rank out of range. */
    clear_env();
    setenv("TCIO_AGGREGATORS", "2", 1);
    ck_assert_int_eq(tci_config_from_user(MPI_INFO_NULL, &c), TCIO_SUCCESS);
    ck_assert_int_eq(tci_aggregators_choose(&c, MPI_COMM_SELF, MPI_COMM_SELF, 0, &a), TCIO_ERR_BAD_CONFIG);
    ck_assert_int_eq(a.count, 0);
    tci_aggregators_free(&a);
    tci_config_free(&c);
    clear_env();
    setenv("TCIO_AGGREGATOR_PLACEMENT", "1", 1);
    ck_assert_int_eq(tci_config_from_user(MPI_INFO_NULL, &c), TCIO_SUCCESS);
    ck_assert_int_eq(tci_aggregators_choose(&c, MPI_COMM_SELF, MPI_COMM_SELF, 0, &a), TCIO_ERR_BAD_CONFIG);
    ck_assert_int_eq(a.count, 0);
    ck_assert_int_eq(a.index, -1);
    tci_aggregators_free(&a);
    tci_config_free(&c);
    clear_env();
}
END_TEST

/* ---- segment map (equations 1-3) ---- */

START_TEST(segmap_follows_the_paper_and_wraps_slots)
{
    const int owners[3] = { 0, 1, 2 };
    tci_segmap m = { .segment_size = 100, .naggregators = 3, .aggregator_rank = owners,
                     .nslots = 2 };
    ck_assert_int_eq(tci_segment_of(&m, 0), 0);
    ck_assert_int_eq(tci_segment_of(&m, 99), 0);
    ck_assert_int_eq(tci_segment_of(&m, 100), 1);
    ck_assert_int_eq(tci_disp_of(&m, 1234), 34);
    for (int64_t k = 0; k < 50; k++) {
        tci_location loc = tci_segmap_locate(&m, k);
        ck_assert_int_eq(loc.rank, k % 3);
        ck_assert_int_eq(loc.slot, (k / 3) % 2);
    }
    int64_t segment;
    int disp;
    ck_assert_int_eq(tci_segment_piece(&m, 250, 1000, &segment, &disp), 50);   /* to the edge */
    ck_assert_int_eq(segment, 2);
    ck_assert_int_eq(disp, 50);
    ck_assert_int_eq(tci_segment_piece(&m, 300, 7, &segment, &disp), 7);       /* inside */
    ck_assert_int_eq(disp, 0);
    /* Offsets past 2^31 segments still map. */
    tci_location far = tci_segmap_locate(&m, INT64_C(3) * 1000000000 + 4);
    ck_assert_int_eq(far.rank, 1);
    ck_assert_int_eq(far.slot, 1);
}
END_TEST

START_TEST(segmap_places_on_aggregators_and_inverts)
{
    const int owners[2] = { 5, 2 };          /* an explicit list, in its order */
    tci_segmap m = { .segment_size = 10, .naggregators = 2, .aggregator_rank = owners,
                     .nslots = 3 };
    for (int64_t k = 0; k < 40; k++) {
        tci_location loc = tci_segmap_locate(&m, k);
        ck_assert_int_eq(loc.rank, owners[k % 2]);
        ck_assert_int_eq(loc.slot, (k / 2) % 3);
        /* The inverse finds K again from any earlier starting point. */
        for (int64_t from = k > 8 ? k - 8 : 0; from <= k; from++) {
            int64_t first = tci_segmap_first_in_slot(&m, (int)(k % 2), loc.slot, from);
            ck_assert_int_ge(first, from);
            ck_assert_int_le(first, k);
            tci_location back = tci_segmap_locate(&m, first);
            ck_assert_int_eq(back.rank, loc.rank);
            ck_assert_int_eq(back.slot, loc.slot);
        }
    }
}
END_TEST

/* ---- extents ---- */

START_TEST(extents_merge_adjacent_and_overlapping_appends)
{
    tci_extents e;
    ck_assert_int_eq(tci_extents_init(&e, 1000), 0);
    tci_extents_add(&e, 0, 4);
    tci_extents_add(&e, 4, 8);     /* adjacent: merged */
    tci_extents_add(&e, 10, 5);    /* overlapping the end: merged */
    ck_assert_int_eq(e.count, 1);
    ck_assert_int_eq(e.len[0], 15);
    tci_extents_add(&e, 20, 4);    /* gap: new range */
    ck_assert_int_eq(e.count, 2);
    ck_assert(e.sorted);
    tci_extents_add(&e, 0, 0);     /* empty: ignored */
    ck_assert_int_eq(e.count, 2);
    tci_extents_free(&e);
}
END_TEST

START_TEST(extents_normalize_sorts_and_merges)
{
    tci_extents e;
    ck_assert_int_eq(tci_extents_init(&e, 1000), 0);
    tci_extents_add(&e, 50, 10);
    tci_extents_add(&e, 10, 5);
    tci_extents_add(&e, 12, 10);   /* overlaps [10,15) */
    tci_extents_add(&e, 60, 1);    /* touches [50,60) */
    tci_extents_add(&e, 30, 2);
    ck_assert(!e.sorted);
    ck_assert_int_eq(tci_extents_normalize(&e), 0);
    ck_assert(e.sorted);
    ck_assert_int_eq(e.count, 3);
    ck_assert_int_eq(e.disp[0], 10); ck_assert_int_eq(e.len[0], 12);
    ck_assert_int_eq(e.disp[1], 30); ck_assert_int_eq(e.len[1], 2);
    ck_assert_int_eq(e.disp[2], 50); ck_assert_int_eq(e.len[2], 11);
    tci_extents_free(&e);
}
END_TEST

START_TEST(extents_memory_stays_bounded_under_rewrites)
{
    /* Rewriting the same few bytes out of order must not grow the list. */
    tci_extents e;
    ck_assert_int_eq(tci_extents_init(&e, 64), 0);
    for (int i = 0; i < 100000; i++)
        ck_assert_int_eq(tci_extents_add(&e, (i * 7) % 60, 1 + i % 3), 0);
    ck_assert_int_le(e.capacity, 256);
    ck_assert_int_eq(tci_extents_normalize(&e), 0);
    ck_assert_int_eq(e.count, 1);   /* the rewrites cover [0, 62) */
    tci_extents_free(&e);
}
END_TEST

START_TEST(extents_random_against_a_byte_map)
{
    enum { SIZE = 500 };
    unsigned seed = 12345;
    for (int round = 0; round < 200; round++) {
        tci_extents e;
        unsigned char ref[SIZE] = { 0 };
        ck_assert_int_eq(tci_extents_init(&e, SIZE), 0);
        int n = 1 + (int)(rand_r(&seed) % 40);
        for (int i = 0; i < n; i++) {
            int d = (int)(rand_r(&seed) % SIZE);
            int l = 1 + (int)(rand_r(&seed) % 30);
            if (d + l > SIZE)
                l = SIZE - d;
            tci_extents_add(&e, d, l);
            memset(ref + d, 1, (size_t)l);
        }
        ck_assert_int_eq(tci_extents_normalize(&e), 0);
        unsigned char got[SIZE] = { 0 };
        for (int i = 0; i < e.count; i++) {
            if (i > 0)   /* disjoint, sorted, not even touching */
                ck_assert_int_gt(e.disp[i], e.disp[i - 1] + e.len[i - 1]);
            memset(got + e.disp[i], 1, (size_t)e.len[i]);
        }
        ck_assert_mem_eq(got, ref, SIZE);
        tci_extents_free(&e);
    }
}
END_TEST

/* ---- level-1 buffer ---- */

START_TEST(level1_write_then_deliver_reads)
{
    tci_level1 l1;
    ck_assert_int_eq(tci_level1_init(&l1, 32), 0);
    tci_level1_aim(&l1, TCI_L1_WRITING, 2, 32);
    tci_level1_write(&l1, 3, "hello", 5);
    ck_assert_mem_eq(l1.buf + 3, "hello", 5);
    ck_assert(tci_level1_has_writes(&l1));
    ck_assert_int_eq(tci_level1_marked_bytes(&l1), 5);
    ck_assert_int_eq(tci_level1_marked_end(&l1), 2 * 32 + 8);
    tci_level1_reset(&l1);
    ck_assert(!tci_level1_has_writes(&l1));
    ck_assert_int_eq(l1.marked[0], 0);
    ck_assert_int_eq(l1.segment, -1);

    char a[4] = "....", b[2] = "..";
    memcpy(l1.buf, "abcdefgh", 8);
    ck_assert_int_eq(tci_level1_add_read(&l1, 2, a, 4), 0);
    ck_assert_int_eq(tci_level1_add_read(&l1, 6, b, 2), 0);
    tci_level1_deliver_reads(&l1);
    ck_assert_mem_eq(a, "cdef", 4);
    ck_assert_mem_eq(b, "gh", 2);
    ck_assert_int_eq(tci_level1_marked_extents(&l1), 0);
    ck_assert_int_eq(l1.extents.count, 1);   /* [2,6) and [6,8): one run */
    ck_assert_int_eq(l1.extents.disp[0], 2);
    ck_assert_int_eq(l1.extents.len[0], 6);
    tci_level1_free(&l1);
}
END_TEST

/* Random writes into a level-1 buffer (segment sizes that are not whole
 * words, writes within a word and across words): its written bits, byte
 * count, end and runs against a byte map. */
START_TEST(level1_marked_bitmap_against_a_byte_map)
{
    static const int sizes[] = { 1, 63, 64, 65, 100, 1000, 4096 };
    unsigned seed = 12345;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int size = sizes[k];
        tci_level1 l1;
        ck_assert_int_eq(tci_level1_init(&l1, size), 0);
        unsigned char *ref = calloc((size_t)size, 1);
        for (int round = 0; round < 40; round++) {
            memset(ref, 0, (size_t)size);
            tci_level1_aim(&l1, TCI_L1_WRITING, 7, size);
            int n = (int)(rand_r(&seed) % 20);
            for (int i = 0; i < n; i++) {
                int disp = (int)(rand_r(&seed) % (unsigned)size);
                int room = size - disp, len = 1 + (int)(rand_r(&seed) % (unsigned)room);
                if (rand_r(&seed) % 2 && len > 12)
                    len = 1 + len % 12;           /* elements, mostly */
                char src[4096];
                memset(src, 'a' + i % 26, (size_t)len);
                tci_level1_write(&l1, disp, src, len);
                memset(ref + disp, 1, (size_t)len);
            }
            int64_t bytes = 0, end = -1;
            for (int i = 0; i < size; i++) {
                int bit = (int)((l1.marked[i / 64] >> (i % 64)) & 1);
                ck_assert_msg(bit == ref[i], "size %d round %d byte %d: bit %d, written %d",
                              size, round, i, bit, ref[i]);
                bytes += ref[i];
                if (ref[i])
                    end = 7 * (int64_t)size + i + 1;
            }
            ck_assert(tci_level1_has_writes(&l1) == (bytes > 0));
            ck_assert_int_eq(tci_level1_marked_bytes(&l1), bytes);
            ck_assert_int_eq(tci_level1_marked_end(&l1), end);
            ck_assert_int_eq(tci_level1_marked_extents(&l1), 0);
            /* The runs: maximal, sorted, covering exactly the written bytes. */
            unsigned char *got = calloc((size_t)size, 1);
            for (int i = 0; i < l1.extents.count; i++) {
                int d = l1.extents.disp[i], l = l1.extents.len[i];
                ck_assert(l > 0 && d >= 0 && d + l <= size);
                if (i > 0)
                    ck_assert_int_gt(d, l1.extents.disp[i - 1] + l1.extents.len[i - 1]);
                memset(got + d, 1, (size_t)l);
            }
            ck_assert_mem_eq(got, ref, (size_t)size);
            free(got);
            tci_level1_reset(&l1);
            for (int w = 0; w < (size + 63) / 64; w++)
                ck_assert_int_eq(l1.marked[w], 0);
        }
        free(ref);
        tci_level1_free(&l1);
    }
}
END_TEST

/* Both copies under a bitmap (the portable one, and AVX-512BW's where the
 * processor has it) store exactly the bytes whose bits are set: the
 * others keep their sentinel, and no byte past the source is needed (the
 * source ends on a page boundary where a guard page follows). */
static void check_copy_masked(tci_copy_masked_fn *copy, const char *name)
{
    enum { SIZE = 1000, WORDS = (SIZE + 63) / 64 };
    long page = sysconf(_SC_PAGESIZE);
    /* The source's last byte just before a page that is not mapped. */
    char *area = mmap(NULL, (size_t)(2 * page), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(area, MAP_FAILED);
    ck_assert_int_eq(mprotect(area + page, (size_t)page, PROT_NONE), 0);
    char *from = area + page - SIZE;
    unsigned seed = 777;
    for (int round = 0; round < 200; round++) {
        uint64_t written[WORDS] = { 0 };
        char to[SIZE], want[SIZE];
        for (int i = 0; i < SIZE; i++)
            from[i] = (char)rand_r(&seed);
        memset(to, 0x5a, SIZE);
        memcpy(want, to, SIZE);
        int n = (int)(rand_r(&seed) % 30);
        for (int i = 0; i < n; i++) {
            int d = (int)(rand_r(&seed) % SIZE), l = 1 + (int)(rand_r(&seed) % 70);
            if (d + l > SIZE)
                l = SIZE - d;
            for (int b = d; b < d + l; b++) {
                written[b / 64] |= UINT64_C(1) << (b % 64);
                want[b] = from[b];
            }
        }
        if (round == 0)                   /* every byte: whole blocks */
            for (int b = 0; b < SIZE; b++) {
                written[b / 64] |= UINT64_C(1) << (b % 64);
                want[b] = from[b];
            }
        copy(to, from, written, 0, WORDS);
        ck_assert_msg(memcmp(to, want, SIZE) == 0, "%s: round %d differs", name, round);
    }
    munmap(area, (size_t)(2 * page));
}

START_TEST(copy_masked_stores_exactly_the_set_bytes)
{
    check_copy_masked(tci_copy_masked_runs, "runs");
    if (tci_copy_masked_avx512 && tci_have_avx512bw())
        check_copy_masked(tci_copy_masked_avx512, "avx512bw");
    else
        fprintf(stderr, "test_unit: no AVX-512BW here: only the portable copy is tested\n");
    check_copy_masked(tci_copy_masked, "chosen");
}
END_TEST

/* ---- the rma window's size ---- */

/* Never a whole number of pages (MPICH's symmetric-heap search, slot.h),
 * always a multiple of 64 and at least the layout; the rma transport asks
 * for what it says.  1 MiB segments with 126 slots, and 4 KiB segments
 * with 30, lay out exactly whole 4 KiB pages. */
START_TEST(rma_window_is_never_whole_pages)
{
    const int64_t page = 4096;
    ck_assert_int_eq(tci_layout_bytes(126, 1 << 20) % page, 0);
    ck_assert_int_eq(tci_layout_bytes(30, 4096) % page, 0);
    const int64_t sizes[] = { 64, 100, 1000, 4096, 65536, 1 << 20 };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (int64_t n = 1; n <= 300; n++) {
            int64_t layout = tci_layout_bytes(n, sizes[i]);
            int64_t bytes = tci_window_bytes(layout, page);
            ck_assert_msg(bytes >= layout && bytes % 64 == 0 && bytes % page != 0,
                          "%lld slots of %lld bytes: window %lld", (long long)n,
                          (long long)sizes[i], (long long)bytes);
        }
    ck_assert_int_eq(tci_window_bytes(0, page), 0);
    int64_t layout = tci_layout_bytes(126, 1 << 20);
    ck_assert_int_eq(tci_transport_rma.memory_bytes(126, 1 << 20),
                     tci_window_bytes(layout, sysconf(_SC_PAGESIZE)));
}
END_TEST

/* ---- written-byte bitmaps ---- */

START_TEST(bitmap_runs_match_a_byte_map)
{
    enum { SIZE = 203 };
    unsigned seed = 99;
    for (int round = 0; round < 300; round++) {
        /* Whole 64-bit words, as tci_bitmap_bytes rounds a slot's bitmap. */
        unsigned char bitmap[(SIZE + 63) / 64 * 8] = { 0 }, ref[SIZE] = { 0 };
        int n = (int)(rand_r(&seed) % 12);
        for (int i = 0; i < n; i++) {
            int from = (int)(rand_r(&seed) % SIZE);
            int to = from + (int)(rand_r(&seed) % (SIZE - from + 1));
            tci_bitmap_set_range(bitmap, from, to);
            memset(ref + from, 1, (size_t)(to - from));
        }
        for (int want = 0; want <= 1; want++) {
            unsigned char got[SIZE];
            memset(got, !want, SIZE);
            int end, start = tci_bitmap_next_run(bitmap, 0, SIZE, want, &end);
            while (start < SIZE) {
                ck_assert_int_gt(end, start);
                memset(got + start, want, (size_t)(end - start));
                start = tci_bitmap_next_run(bitmap, end, SIZE, want, &end);
            }
            ck_assert_mem_eq(got, ref, SIZE);
        }
        /* The shape the sieve decides by: runs and the written span. */
        int64_t runs = 0;
        int lo = 0, hi = 0;
        for (int i = 0; i < SIZE; i++) {
            runs += ref[i] && (i == 0 || !ref[i - 1]);
            if (ref[i] && runs == 1 && (i == 0 || !ref[i - 1]))
                lo = i;
            if (ref[i])
                hi = i + 1;
        }
        int got_lo = -1, got_hi = -1;
        ck_assert_int_eq(tci_bitmap_shape(bitmap, SIZE, &got_lo, &got_hi), runs);
        ck_assert_int_eq(got_lo, lo);
        ck_assert_int_eq(got_hi, hi);
    }
}
END_TEST

/* ---- slot state words ---- */

START_TEST(state_word_round_trips_and_never_looks_locked)
{
    const int64_t segments[] = { TCI_SLOT_EMPTY, 0, 1, 12345, INT64_C(1) << 39,
                                 TCI_MAX_SEGMENT };
    for (size_t i = 0; i < sizeof segments / sizeof segments[0]; i++)
        for (int flags = 0; flags < (1 << TCI_FLAG_BITS); flags++) {
            tci_slot_header h = { .segment = segments[i], .flags = flags };
            int64_t word = tci_state_encode(&h);
            ck_assert(word != TCI_STATE_LOCKED);
            ck_assert_int_ge(word, 0);
            tci_slot_header back = tci_state_decode(word);
            ck_assert_int_eq(back.segment, h.segment);
            ck_assert_int_eq(back.flags, h.flags);
            ck_assert_int_eq(tci_state_sharers(word), 0);
            /* shm's sharer count and its two bits leave the header alone */
            const int64_t counts[] = { 1, 2, TCI_MAX_SHARERS };
            for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
                int64_t shared = word + counts[k] * TCI_ONE_SHARER;
                shared |= (k % 2 ? TCI_STATE_READERS : 0) | (k ? TCI_STATE_WAITING : 0);
                ck_assert(shared != TCI_STATE_LOCKED);
                ck_assert_int_ge(shared, 0);
                ck_assert_int_eq(tci_state_sharers(shared), counts[k]);
                back = tci_state_decode(shared);
                ck_assert_int_eq(back.segment, h.segment);
                ck_assert_int_eq(back.flags, h.flags);
            }
            /* rma's version, in the 20 bits from bit 3, leaves it alone too */
            const int64_t versions[] = { 1, 12345, (INT64_C(1) << 20) - 1 };
            for (size_t k = 0; k < sizeof versions / sizeof versions[0]; k++) {
                int64_t versioned = word | versions[k] << 3;
                ck_assert(versioned != TCI_STATE_LOCKED && versioned >= 0);
                back = tci_state_decode(versioned);
                ck_assert_int_eq(back.segment, h.segment);
                ck_assert_int_eq(back.flags, h.flags);
            }
        }
    ck_assert_int_eq(TCI_MAX_SEGMENT, (INT64_C(1) << 40) - 2);
    tci_slot_header empty = { .segment = TCI_SLOT_EMPTY, .flags = 0 };
    ck_assert_int_eq(tci_state_encode(&empty), 0);   /* a zeroed window is empty */
}
END_TEST

/* A loaded span survives its word for every segment size up to the
 * largest (1 GiB), an empty span is the zero word that every clear
 * leaves, and the word sits in the header's spare bytes. */
START_TEST(loaded_span_round_trips)
{
    const int ends[][2] = { { 0, 1 }, { 5, 6 }, { 100, 4096 }, { 0, 1 << 30 },
                            { (1 << 30) - 1, 1 << 30 }, { 12345, 999999 } };
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        int64_t word = tci_span_encode(ends[i][0], ends[i][1]);
        ck_assert(word != 0);
        int lo = -1, hi = -1;
        tci_span_decode(word, &lo, &hi);
        ck_assert_int_eq(lo, ends[i][0]);
        ck_assert_int_eq(hi, ends[i][1]);
    }
    ck_assert_int_eq(tci_span_encode(7, 7), 0);    /* nothing loaded */
    ck_assert_int_eq(tci_span_encode(9, 3), 0);
    ck_assert_int_ge(TCI_SPAN_OFFSET, TCI_WRITTEN_OFFSET + 8);
    ck_assert_int_le(TCI_SPAN_OFFSET + 8, TCI_HEADER_BYTES);
}
END_TEST

/* ---- datatypes ---- */

/* Unknown TCIO_* variables are reported, the test scripts' own
 * TCIO_TEST_* and TCIO_AGG_* are not, and TCIO_WARN_UNKNOWN=off silences
 * the report. */
START_TEST(unknown_environment_variables_are_reported)
{
    unsetenv("TCIO_WARN_UNKNOWN");
    setenv("TCIO_SEGMNET_SIZE", "1m", 1);       /* a typo */
    setenv("TCIO_TEST_DIR", "/somewhere", 1);
    setenv("TCIO_AGG_ONLY", "3", 1);
    char text[4096] = "";
    FILE *out = fmemopen(text, sizeof text - 1, "w");
    ck_assert_ptr_nonnull(out);
    int n = tci_config_report_environment(out);
    fclose(out);
    ck_assert_int_eq(n, 1);
    ck_assert_ptr_nonnull(strstr(text, "TCIO_SEGMNET_SIZE"));
    ck_assert_ptr_null(strstr(text, "TCIO_TEST_DIR"));
    ck_assert_ptr_null(strstr(text, "TCIO_AGG_ONLY"));
    setenv("TCIO_WARN_UNKNOWN", "off", 1);
    out = fmemopen(text, sizeof text - 1, "w");
    ck_assert_int_eq(tci_config_report_environment(out), 0);
    fclose(out);
    unsetenv("TCIO_WARN_UNKNOWN");
    unsetenv("TCIO_SEGMNET_SIZE");
    unsetenv("TCIO_TEST_DIR");
    unsetenv("TCIO_AGG_ONLY");
}
END_TEST

/* Environment-only settings with values they cannot take are said (they
 * cannot fail an open), good ones are not. */
START_TEST(unreadable_environment_values_are_reported)
{
    unsetenv("TCIO_WARN_UNKNOWN");
    const char *bad[][2] = { { "TCIO_COLLECTIVE_TIMEOUT", "2s" },
                             { "TCIO_COLLECTIVE_TIMEOUT", "0x2" },
                             { "TCIO_COLLECTIVE_TIMEOUT", "-1" },
                             { "TCIO_COLLECTIVE_TIMEOUT", "0" },
                             { "TCIO_WARN_UNKNOWN", "maybe" },
                             { "TCIO_TEST_NODES", "2x" } };
    const char *good[][2] = { { "TCIO_COLLECTIVE_TIMEOUT", "2" },
                              { "TCIO_COLLECTIVE_TIMEOUT", "1.5" },
                              { "TCIO_WARN_UNKNOWN", "ON" },
                              { "TCIO_TEST_NODES", "2" } };
    char text[4096];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0] + sizeof good / sizeof good[0]; i++) {
        int is_bad = i < sizeof bad / sizeof bad[0];
        const char *const *kv = is_bad ? bad[i] : good[i - sizeof bad / sizeof bad[0]];
        setenv(kv[0], kv[1], 1);
        memset(text, 0, sizeof text);
        FILE *out = fmemopen(text, sizeof text - 1, "w");
        ck_assert_ptr_nonnull(out);
        int n = tci_config_report_environment(out);
        fclose(out);
        unsetenv(kv[0]);
        ck_assert_msg(n == is_bad, "%s=%s: %d line(s): %s", kv[0], kv[1], n, text);
        ck_assert_msg(!is_bad || strstr(text, kv[0]), "%s=%s not named: %s", kv[0], kv[1], text);
    }
    double s = 0;
    ck_assert_int_eq(tci_parse_seconds("0.25", &s), 0);
    ck_assert(s == 0.25);
    ck_assert_int_eq(tci_parse_seconds(" 2", &s), -1);
    ck_assert_int_eq(tci_parse_seconds("inf", &s), -1);
    ck_assert_int_eq(tci_parse_seconds("1e3", &s), -1);
    ck_assert_int_eq(tci_parse_seconds(".", &s), -1);
    ck_assert_int_eq(tci_parse_seconds("1.2.3", &s), -1);
    ck_assert_int_eq(tci_parse_seconds("1000000000", &s), -1);
    ck_assert_int_eq(tci_parse_seconds("2.", &s), 0);
    ck_assert(s == 2);
}
END_TEST

/* tcio_* info keys that are no setting are said; settings, the keys
 * tcio_get_info adds and the interposer's tcio_mpiio are not; other keys
 * are MPI's. */
START_TEST(unknown_info_keys_are_reported)
{
    unsetenv("TCIO_WARN_UNKNOWN");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "tcio_segmentsize", "128k");     /* a typo */
    MPI_Info_set(info, "tcio_segment_size", "128k");
    MPI_Info_set(info, "tcio_level2_bytes", "1");
    MPI_Info_set(info, "tcio_mpiio", "enable");
    MPI_Info_set(info, "striping_unit", "1048576");
    char text[4096] = "";
    FILE *out = fmemopen(text, sizeof text - 1, "w");
    ck_assert_ptr_nonnull(out);
    int n = tci_config_report_unknown_keys(info, out);
    fclose(out);
    ck_assert_msg(n == 1, "%d line(s): %s", n, text);
    ck_assert_ptr_nonnull(strstr(text, "tcio_segmentsize"));
    setenv("TCIO_WARN_UNKNOWN", "off", 1);
    out = fmemopen(text, sizeof text - 1, "w");
    ck_assert_int_eq(tci_config_report_unknown_keys(info, out), 0);
    fclose(out);
    unsetenv("TCIO_WARN_UNKNOWN");
    ck_assert_int_eq(tci_config_report_unknown_keys(MPI_INFO_NULL, stderr), 0);
    MPI_Info_free(&info);
}
END_TEST

START_TEST(datatype_checks_commit_and_contiguity)
{
    tci_type_info info;
    ck_assert_int_eq(tci_type_inspect(MPI_DATATYPE_NULL, &info), TCIO_ERR_BAD_TYPE);
    ck_assert_int_eq(tci_type_inspect(MPI_DOUBLE, &info), TCIO_SUCCESS);
    ck_assert_int_eq(info.size, 8);
    ck_assert(info.contiguous);
    ck_assert_int_eq(tci_type_inspect(MPI_DOUBLE_INT, &info), TCIO_SUCCESS);
    ck_assert(!info.contiguous);   /* padded pair type goes through MPI_Pack */

    MPI_Datatype vec;
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    ck_assert_int_eq(tci_type_inspect(vec, &info), TCIO_ERR_BAD_TYPE);   /* uncommitted */
    MPI_Type_commit(&vec);
    ck_assert_int_eq(tci_type_inspect(vec, &info), TCIO_SUCCESS);
    ck_assert_int_eq(info.size, 12);
    ck_assert(!info.contiguous);
    ck_assert_int_eq(tci_type_inspect(vec, &info), TCIO_SUCCESS);   /* cached */
    ck_assert_int_eq(info.size, 12);

    int in[5] = { 1, 2, 3, 4, 5 }, out[3];
    ck_assert_int_eq(tci_type_pack(in, 1, vec, &info, out), TCIO_SUCCESS);
    ck_assert_int_eq(out[0], 1);
    ck_assert_int_eq(out[1], 3);
    ck_assert_int_eq(out[2], 5);
    MPI_Type_free(&vec);
}
END_TEST

/* Derived types whose typemap walks memory in order with no gap are plain
 * bytes (at any size: no MPI_Pack, whose sizes are int); the others not. */
static bool contiguous_after_commit(MPI_Datatype *type, int64_t *size)
{
    tci_type_info info;
    MPI_Type_commit(type);
    ck_assert_int_eq(tci_type_inspect(*type, &info), TCIO_SUCCESS);
    *size = info.size;
    MPI_Type_free(type);
    return info.contiguous;
}

START_TEST(derived_contiguous_types_are_plain_bytes)
{
    MPI_Datatype t, inner;
    int64_t size;
    /* Over 2 GiB in one element: 2^29 + 2 ints. */
    MPI_Type_contiguous((1 << 29) + 2, MPI_INT, &t);
    ck_assert(contiguous_after_commit(&t, &size));
    ck_assert_int_eq(size, (INT64_C(1) << 31) + 8);
    MPI_Type_vector(4, 3, 3, MPI_DOUBLE, &t);               /* stride = block */
    ck_assert(contiguous_after_commit(&t, &size));
    MPI_Type_contiguous(2, MPI_INT, &inner);
    MPI_Type_create_hvector(3, 2, 16, inner, &t);           /* 2 x 8 bytes = 16 */
    ck_assert(contiguous_after_commit(&t, &size));
    int lens[2] = { 2, 3 }, disps[2] = { 0, 2 };
    MPI_Type_indexed(2, lens, disps, inner, &t);            /* adjacent blocks */
    ck_assert(contiguous_after_commit(&t, &size));
    int blocks[2] = { 1, 2 };
    MPI_Aint at[2] = { 0, 8 };
    MPI_Datatype parts[2] = { MPI_DOUBLE, inner };
    MPI_Type_create_struct(2, blocks, at, parts, &t);       /* 8 + 2 x 8 bytes */
    ck_assert(contiguous_after_commit(&t, &size));
    ck_assert_int_eq(size, 24);

    /* Gaps, reordering, resized extents, padded basics: packed. */
    MPI_Type_vector(4, 2, 3, MPI_INT, &t);
    ck_assert(!contiguous_after_commit(&t, &size));
    int rev[2] = { 2, 0 };
    int ones[2] = { 2, 2 };
    MPI_Type_indexed(2, ones, rev, MPI_INT, &t);            /* later block first */
    ck_assert(!contiguous_after_commit(&t, &size));
    MPI_Aint swapped[2] = { 8, 0 };
    MPI_Datatype two[2] = { MPI_DOUBLE, MPI_DOUBLE };
    int single[2] = { 1, 1 };
    MPI_Type_create_struct(2, single, swapped, two, &t);    /* same bytes, reversed */
    ck_assert(!contiguous_after_commit(&t, &size));
    MPI_Type_create_resized(MPI_INT, 0, 8, &t);
    ck_assert(!contiguous_after_commit(&t, &size));
    MPI_Type_contiguous(3, MPI_DOUBLE_INT, &t);
    ck_assert(!contiguous_after_commit(&t, &size));
    MPI_Type_free(&inner);
}
END_TEST

/* Packing and unpacking go in pieces of whole elements (as for requests
 * over 2 GiB, here with 10-byte pieces): the bytes are the same. */
START_TEST(pack_and_unpack_in_pieces)
{
    MPI_Datatype pair;
    MPI_Type_vector(2, 1, 3, MPI_INT, &pair);      /* 8 bytes of data, extent 16 */
    MPI_Type_commit(&pair);
    tci_type_info info;
    ck_assert_int_eq(tci_type_inspect(pair, &info), TCIO_SUCCESS);
    ck_assert_int_eq(info.extent, 16);
    int in[4 * 7], out[2 * 7], back[4 * 7];
    for (int i = 0; i < 4 * 7; i++)
        in[i] = 100 + i;
    int64_t saved = tci_pack_piece_bytes;
    for (int piece = 1; piece <= 3; piece++) {
        tci_pack_piece_bytes = piece == 1 ? 10 : piece == 2 ? 17 : saved;
        memset(out, 0, sizeof out);
        ck_assert_int_eq(tci_type_pack(in, 7, pair, &info, out), TCIO_SUCCESS);
        for (int e = 0; e < 7; e++) {
            ck_assert_int_eq(out[2 * e], 100 + 4 * e);
            ck_assert_int_eq(out[2 * e + 1], 100 + 4 * e + 3);
        }
        memset(back, 0, sizeof back);
        tci_staged_read *s = tci_staged_new(back, 7, pair, &info);
        ck_assert_ptr_nonnull(s);
        memcpy(s->staging, out, sizeof out);
        ck_assert_int_eq(tci_staged_complete(&s), TCIO_SUCCESS);
        for (int e = 0; e < 7; e++) {
            ck_assert_int_eq(back[4 * e], 100 + 4 * e);
            ck_assert_int_eq(back[4 * e + 3], 100 + 4 * e + 3);
            ck_assert_int_eq(back[4 * e + 1], 0);
        }
    }
    tci_pack_piece_bytes = saved;
    MPI_Type_free(&pair);
}
END_TEST

static Suite *unit_suite(void)
{
    Suite *s = suite_create("tcio-unit");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, parse_accepts_plain_and_suffixed_sizes);
    tcase_add_test(tc, derived_contiguous_types_are_plain_bytes);
    tcase_add_test(tc, pack_and_unpack_in_pieces);
    tcase_add_test(tc, parse_rejects_malformed_sizes);
    tcase_add_test(tc, parse_count_accepts_positive_integers);
    tcase_add_test(tc, parse_count_rejects_the_rest);
    tcase_add_test(tc, parse_switch_accepts_on_and_off_in_any_case);
    tcase_add_test(tc, parse_switch_rejects_the_rest);
    tcase_add_test(tc, parse_placement_accepts_names_and_rank_lists);
    tcase_add_test(tc, parse_placement_rejects_bad_lists);
    tcase_add_test(tc, config_defaults_and_striping_unit);
    tcase_add_test(tc, config_info_keys_and_env_precedence);
    tcase_add_test(tc, config_rejects_invalid_values);
    tcase_add_test(tc, config_rejections_name_setting_source_and_value);
    tcase_add_test(tc, parse_transport_accepts_auto_rma_and_shm);
    tcase_add_test(tc, config_transport_from_info_and_env);
    tcase_add_test(tc, transport_chooser_auto_rma_shm);
    tcase_add_test(tc, rma_window_is_never_whole_pages);
    tcase_add_test(tc, last_error_keeps_the_last_failure);
    tcase_add_test(tc, error_classes_map_to_codes);
    tcase_add_test(tc, config_aggregator_settings_defaults);
    tcase_add_test(tc, config_aggregator_info_keys_and_env_precedence);
    tcase_add_test(tc, config_aggregator_count_and_list);
    tcase_add_test(tc, config_check_ranks_against_nprocs);
    tcase_add_test(tc, aggregators_default_count);
    tcase_add_test(tc, aggregators_choose_on_one_rank);
    tcase_add_test(tc, segmap_follows_the_paper_and_wraps_slots);
    tcase_add_test(tc, segmap_places_on_aggregators_and_inverts);
    tcase_add_test(tc, extents_merge_adjacent_and_overlapping_appends);
    tcase_add_test(tc, extents_normalize_sorts_and_merges);
    tcase_add_test(tc, extents_memory_stays_bounded_under_rewrites);
    tcase_add_test(tc, extents_random_against_a_byte_map);
    tcase_add_test(tc, level1_write_then_deliver_reads);
    tcase_add_test(tc, level1_marked_bitmap_against_a_byte_map);
    tcase_add_test(tc, copy_masked_stores_exactly_the_set_bytes);
    tcase_add_test(tc, bitmap_runs_match_a_byte_map);
    tcase_add_test(tc, state_word_round_trips_and_never_looks_locked);
    tcase_add_test(tc, loaded_span_round_trips);
    tcase_add_test(tc, datatype_checks_commit_and_contiguity);
    tcase_add_test(tc, unknown_environment_variables_are_reported);
    tcase_add_test(tc, unreadable_environment_values_are_reported);
    tcase_add_test(tc, unknown_info_keys_are_reported);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    SRunner *sr = srunner_create(unit_suite());
    srunner_set_fork_status(sr, CK_NOFORK);   /* never fork an MPI process */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    MPI_Finalize();
    return failed == 0 ? 0 : 1;
}
