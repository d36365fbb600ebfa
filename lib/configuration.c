/* configuration.c - segment size and level-2 capacity from the environment, the
 * info object and the file system's striping. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "tcio.h"
#include "configuration.h"

#define KEY_SEGMENT_SIZE      "tcio_segment_size"
#define KEY_SEGMENTS_PER_PROC "tcio_segments_per_proc"
#define ENV_SEGMENT_SIZE      "TCIO_SEGMENT_SIZE"
#define ENV_SEGMENTS_PER_PROC "TCIO_SEGMENTS_PER_PROC"

int tci_parse_size(const char *text, int64_t *value)
{
    if (!text || !isdigit((unsigned char)text[0]))
        return -1;
    errno = 0;
    char *end;
    long long n = strtoll(text, &end, 10);
    if (errno == ERANGE || n <= 0)
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

/* One setting: the environment wins over the info key.  Returns 0, or -1
 * for a value that is present but invalid. */
static int read_setting(MPI_Info info, const char *key, const char *env, int64_t *value)
{
    const char *text = getenv(env);
    char buf[MPI_MAX_INFO_VAL + 1];
    if (!text && info != MPI_INFO_NULL) {
        int found = 0;
        if (MPI_Info_get(info, key, MPI_MAX_INFO_VAL, buf, &found) == MPI_SUCCESS && found)
            text = buf;
    }
    if (!text)
        return 0;
    return tci_parse_size(text, value);
}

static int check_limits(const tci_config *cfg)
{
    if (cfg->segment_size < 0 || cfg->segment_size > TCI_MAX_SEGMENT_SIZE)
        return TCIO_ERR_BAD_CONFIG;
    if (cfg->segments_per_proc < 0 || cfg->segments_per_proc > TCI_MAX_SEGMENTS_PER_PROC)
        return TCIO_ERR_BAD_CONFIG;
    return TCIO_SUCCESS;
}

int tci_config_from_user(MPI_Info info, tci_config *cfg)
{
    cfg->segment_size = 0;
    cfg->segments_per_proc = 0;
    if (read_setting(info, KEY_SEGMENT_SIZE, ENV_SEGMENT_SIZE, &cfg->segment_size) != 0 ||
        read_setting(info, KEY_SEGMENTS_PER_PROC, ENV_SEGMENTS_PER_PROC,
                     &cfg->segments_per_proc) != 0)
        return TCIO_ERR_BAD_CONFIG;
    return check_limits(cfg);
}

int tci_config_finish(tci_config *cfg, int64_t striping_unit)
{
    if (cfg->segment_size == 0)
        cfg->segment_size = (striping_unit > 0 && striping_unit <= TCI_MAX_SEGMENT_SIZE)
                                ? striping_unit : TCI_DEFAULT_SEGMENT_SIZE;
    if (cfg->segments_per_proc == 0)
        cfg->segments_per_proc = TCI_DEFAULT_SEGMENTS_PER_PROC;
    return check_limits(cfg);
}

int64_t tci_config_striping_unit(MPI_File file)
{
    MPI_Info info;
    if (MPI_File_get_info(file, &info) != MPI_SUCCESS)
        return 0;
    char buf[MPI_MAX_INFO_VAL + 1];
    int found = 0;
    int64_t unit = 0;
    if (MPI_Info_get(info, "striping_unit", MPI_MAX_INFO_VAL, buf, &found) == MPI_SUCCESS &&
        found && tci_parse_size(buf, &unit) != 0)
        unit = 0;
    MPI_Info_free(&info);
    return unit;
}

int tci_config_passthrough_info(MPI_Info info, MPI_Info *out)
{
    *out = MPI_INFO_NULL;
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    int err = MPI_Info_dup(info, out);
    if (err != MPI_SUCCESS)
        return err;
    const char *keys[] = { KEY_SEGMENT_SIZE, KEY_SEGMENTS_PER_PROC };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        int len, found = 0;
        MPI_Info_get_valuelen(*out, keys[i], &len, &found);
        if (found)
            MPI_Info_delete(*out, keys[i]);
    }
    return MPI_SUCCESS;
}
