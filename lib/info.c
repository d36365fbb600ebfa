/* info.c - what the library tells about itself: the settings in effect
 * for a file (tcio_get_info) and its version. */
#include <stdio.h>
#include <string.h>
#include "file.h"
#include "error.h"
#include "handle.h"
#include "background.h"

static int info_set_int(MPI_Info info, const char *key, long long value)
{
    char text[32];
    snprintf(text, sizeof text, "%lld", value);
    return MPI_Info_set(info, key, text);
}

/* "r0,r1,...", or "" when it would not fit an info value. */
static void rank_list_text(const tci_aggregators *a, char *text, size_t size)
{
    size_t used = 0;
    text[0] = '\0';
    for (int i = 0; i < a->count; i++) {
        int n = snprintf(text + used, size - used, "%s%d", i ? "," : "", a->ranks[i]);
        if (n < 0 || (size_t)n >= size - used) {
            text[0] = '\0';
            return;
        }
        used += (size_t)n;
    }
}

/* The tcio_* keys of FH's settings in effect, added to INFO. */
static int add_tcio_settings(const tcio_file *fh, MPI_Info info)
{
    const tci_config *c = &fh->config;
    static const char *const placements[] = { "spread", "node", "list" };
    static const char *const stats[] = { "off", "on", "json" };
    char ranks[MPI_MAX_INFO_VAL];   /* shorter than MPI_MAX_INFO_VAL, as above */
    rank_list_text(&fh->aggr, ranks, sizeof ranks);
    const tci_segmap *m = &fh->map;   /* the geometry in effect */
    int err = info_set_int(info, "tcio_segment_size", m->segment_size);
    if (err == MPI_SUCCESS)
        err = info_set_int(info, "tcio_segments_per_proc", m->nslots);
    if (err == MPI_SUCCESS)
        err = info_set_int(info, "tcio_level2_bytes",
                           m->segment_size * m->nslots * m->naggregators);
    if (err == MPI_SUCCESS)
        err = info_set_int(info, "tcio_node_segments", fh->config.node_segments);
    if (err == MPI_SUCCESS)
        err = info_set_int(info, "tcio_aggregators", fh->aggr.count);
    if (err == MPI_SUCCESS)
        err = MPI_Info_set(info, "tcio_aggregator_placement", placements[c->placement]);
    if (err == MPI_SUCCESS && ranks[0])
        err = MPI_Info_set(info, "tcio_aggregator_ranks", ranks);
    if (err == MPI_SUCCESS)
        err = MPI_Info_set(info, "tcio_early_drain",
                           c->early_drain == TCI_DRAIN_MOVER ? "mover"
                           : c->early_drain ? "on" : "off");
    if (err == MPI_SUCCESS)
        err = MPI_Info_set(info, "tcio_stats", stats[c->stats]);
    /* An info value must be shorter than MPI_MAX_INFO_VAL (Open MPI
     * refuses one of that length, MPICH does not; MPI_Info_set would fail
     * the whole call, or abort); such a name comes from TCIO_STATS_FILE,
     * or under MPICH from an info value of exactly MPI_MAX_INFO_VAL. */
    if (err == MPI_SUCCESS && c->stats_file && strlen(c->stats_file) < MPI_MAX_INFO_VAL)
        err = MPI_Info_set(info, "tcio_stats_file", c->stats_file);
    if (err == MPI_SUCCESS)
        err = MPI_Info_set(info, "tcio_transport", tci_handle_transport_name(fh));
    if (err == MPI_SUCCESS)
        err = info_set_int(info, "tcio_background_memory", tci_background_memory(fh));
    if (err == MPI_SUCCESS)
        err = info_set_int(info, "tcio_forward_staging", c->forward_staging);
    if (err == MPI_SUCCESS)
        err = MPI_Info_set(info, "tcio_target_progress",
                           fh->l2.t.needs_progress ? "needed" : "not needed");
    return err;
}

static int get_info_call(tcio_file *fh, MPI_Info *info)
{
    if (!fh || !tci_handle_is_open(fh))
        return tci_error_bad_handle(fh);
    if (!info)
        return tci_error_set(TCIO_ERR_BAD_ARG, "the info pointer is NULL");
    *info = MPI_INFO_NULL;
    /* The MPI-IO hints of the underlying file first (striping_unit,
     * cb_nodes, ...), as MPI_File_get_info gives them. */
    MPI_Info all;
    int rc = tci_error_from_mpi(MPI_File_get_info(fh->file, &all));
    if (rc != TCIO_SUCCESS)
        return rc;
    rc = tci_error_from_mpi(add_tcio_settings(fh, all));
    if (rc != TCIO_SUCCESS) {
        MPI_Info_free(&all);
        return rc;
    }
    *info = all;
    return TCIO_SUCCESS;
}

const char *tcio_version(void)
{
    return TCIO_VERSION;
}

int tcio_get_info(tcio_file *fh, MPI_Info *info)
{
    return tci_error_note("tcio_get_info", get_info_call(fh, info));
}
