/* test_unit.c - unit tests of the pieces that need no communication:
 * size parsing and configuration, the segment map, extent lists and the
 * written-byte bitmaps.  Runs as a singleton MPI process (MPI_Info and
 * datatypes need MPI initialised). */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "tcio.h"
#include "configuration.h"
#include "segmap.h"
#include "level1.h"
#include "level2.h"
#include "datatype.h"

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

/* ---- configuration from environment, info and striping ---- */

static void clear_env(void)
{
    unsetenv("TCIO_SEGMENT_SIZE");
    unsetenv("TCIO_SEGMENTS_PER_PROC");
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

    MPI_Info pass;
    MPI_Info_set(info, "cb_nodes", "2");
    ck_assert_int_eq(tci_config_passthrough_info(info, &pass), MPI_SUCCESS);
    int nkeys = 0, found = 0;
    char value[16];
    MPI_Info_get_nkeys(pass, &nkeys);
    ck_assert_int_eq(nkeys, 1);
    MPI_Info_get(pass, "cb_nodes", 15, value, &found);
    ck_assert(found && strcmp(value, "2") == 0);
    MPI_Info_free(&pass);
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
    ck_assert_int_eq(tci_level1_write(&l1, 3, "hello", 5), 0);
    ck_assert_mem_eq(l1.buf + 3, "hello", 5);
    ck_assert_int_eq(l1.extents.count, 1);
    tci_level1_reset(&l1);
    ck_assert_int_eq(l1.extents.count, 0);
    ck_assert_int_eq(l1.segment, -1);

    char a[4] = "....", b[2] = "..";
    memcpy(l1.buf, "abcdefgh", 8);
    ck_assert_int_eq(tci_level1_add_read(&l1, 2, a, 4), 0);
    ck_assert_int_eq(tci_level1_add_read(&l1, 6, b, 2), 0);
    tci_level1_deliver_reads(&l1);
    ck_assert_mem_eq(a, "cdef", 4);
    ck_assert_mem_eq(b, "gh", 2);
    ck_assert_int_eq(l1.extents.count, 1);   /* [2,6) and [6,8) merged */
    tci_level1_free(&l1);
}
END_TEST

/* ---- written-byte bitmaps ---- */

START_TEST(bitmap_runs_match_a_byte_map)
{
    enum { SIZE = 203 };
    unsigned seed = 99;
    for (int round = 0; round < 300; round++) {
        unsigned char bitmap[(SIZE + 7) / 8] = { 0 }, ref[SIZE] = { 0 };
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
    }
}
END_TEST

/* ---- slot state words ---- */

START_TEST(state_word_round_trips_and_never_looks_locked)
{
    const int64_t segments[] = { TCI_SLOT_EMPTY, 0, 1, 12345, INT64_C(1) << 40,
                                 TCI_MAX_SEGMENT };
    for (size_t i = 0; i < sizeof segments / sizeof segments[0]; i++)
        for (int flags = 0; flags < 4; flags++) {
            tci_slot_header h = { .segment = segments[i], .flags = flags };
            int64_t word = tci_state_encode(&h);
            ck_assert(word != TCI_STATE_LOCKED);
            ck_assert_int_ge(word, 0);
            tci_slot_header back = tci_state_decode(word);
            ck_assert_int_eq(back.segment, h.segment);
            ck_assert_int_eq(back.flags, h.flags);
        }
    tci_slot_header empty = { .segment = TCI_SLOT_EMPTY, .flags = 0 };
    ck_assert_int_eq(tci_state_encode(&empty), 0);   /* a zeroed window is empty */
}
END_TEST

/* ---- datatypes ---- */

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
    ck_assert_int_eq(tci_type_pack(in, 1, vec, out, sizeof out), TCIO_SUCCESS);
    ck_assert_int_eq(out[0], 1);
    ck_assert_int_eq(out[1], 3);
    ck_assert_int_eq(out[2], 5);
    MPI_Type_free(&vec);
}
END_TEST

static Suite *unit_suite(void)
{
    Suite *s = suite_create("tcio-unit");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, parse_accepts_plain_and_suffixed_sizes);
    tcase_add_test(tc, parse_rejects_malformed_sizes);
    tcase_add_test(tc, config_defaults_and_striping_unit);
    tcase_add_test(tc, config_info_keys_and_env_precedence);
    tcase_add_test(tc, config_rejects_invalid_values);
    tcase_add_test(tc, segmap_follows_the_paper_and_wraps_slots);
    tcase_add_test(tc, segmap_places_on_aggregators_and_inverts);
    tcase_add_test(tc, extents_merge_adjacent_and_overlapping_appends);
    tcase_add_test(tc, extents_normalize_sorts_and_merges);
    tcase_add_test(tc, extents_memory_stays_bounded_under_rewrites);
    tcase_add_test(tc, extents_random_against_a_byte_map);
    tcase_add_test(tc, level1_write_then_deliver_reads);
    tcase_add_test(tc, bitmap_runs_match_a_byte_map);
    tcase_add_test(tc, state_word_round_trips_and_never_looks_locked);
    tcase_add_test(tc, datatype_checks_commit_and_contiguity);
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
