/* striping.c - stripe size and count of an open file.
 *
 * MPI-IO reports striping through the info object of an open file; ROMIO
 * fills striping_unit and striping_factor on Lustre and GPFS, and echoes
 * the hints given at creation elsewhere.  On Lustre the file system itself
 * is asked as well (configure enables it when lustre/lustreapi.h is
 * found), because a file created by another program carries its layout
 * but no hints. */
#include <config.h>
#include <stdlib.h>
#include "striping.h"
#include "configuration.h"
#ifdef TCIO_HAVE_LUSTREAPI
#include <lustre/lustreapi.h>
#endif

static int64_t info_value(MPI_Info info, const char *key)
{
    char buf[MPI_MAX_INFO_VAL + 1];
    int found = 0;
    int64_t value = 0;
    if (MPI_Info_get(info, key, MPI_MAX_INFO_VAL, buf, &found) != MPI_SUCCESS || !found ||
        tci_parse_size(buf, &value) != 0)
        return 0;
    return value;
}

static tci_striping from_mpi_info(MPI_File file)
{
    tci_striping s = { 0, 0 };
    MPI_Info info;
    if (MPI_File_get_info(file, &info) != MPI_SUCCESS)
        return s;
    s.unit = info_value(info, "striping_unit");
    s.factor = info_value(info, "striping_factor");
    MPI_Info_free(&info);
    return s;
}

#ifdef TCIO_HAVE_LUSTREAPI
/* The layout Lustre records for FNAME; leaves *S alone where it cannot
 * tell (not a Lustre file, or a composite layout without a plain value). */
static void from_lustre(const char *fname, tci_striping *s)
{
    struct llapi_layout *layout = llapi_layout_get_by_path(fname, 0);
    if (!layout)
        return;
    uint64_t size = 0, count = 0;
    if (llapi_layout_stripe_size_get(layout, &size) == 0 && size > 0 && size < INT64_MAX)
        s->unit = (int64_t)size;
    if (llapi_layout_stripe_count_get(layout, &count) == 0 && count > 0 && count < 65536)
        s->factor = (int64_t)count;
    llapi_layout_free(layout);
}
#endif

tci_striping tci_striping_read(MPI_File file, const char *fname)
{
    tci_striping s = from_mpi_info(file);
#ifdef TCIO_HAVE_LUSTREAPI
    from_lustre(fname, &s);
#else
    (void)fname;
#endif
    return s;
}
