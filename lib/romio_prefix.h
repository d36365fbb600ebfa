/* romio_prefix.h - ROMIO's file-system prefixes ("ufs:", "lustre:", ...),
 * which ROMIO takes off a file name before it opens the file (Open MPI's
 * ompio takes the name as it is), and the file a name reaches on disk,
 * for libtcio (the background drain's descriptor, the sieve reader, a
 * reopen's wait) and the MPI-IO interposer (mpiio/served.c: the key files
 * are matched by), which links libtcio but sees only its public names: so
 * they live here, inline. */
#ifndef TCIO_ROMIO_PREFIX_H
#define TCIO_ROMIO_PREFIX_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* NAME past one of ROMIO's prefixes, in any case, or NULL.  With
 * POSIX_ONLY only the prefixes of drivers that write through the
 * operating system's file system, so that a descriptor of the rest
 * reaches the bytes MPI-IO writes: not testfs, daos, ime, gridftp, pvfs2,
 * quobyte..., whose files are not, or not coherently, the local path of
 * the same name. */
static inline const char *tci_past_romio_prefix(const char *name, bool posix_only)
{
    static const struct {
        const char *name;
        bool        posix;
    } prefixes[] = {
        { "ufs", true },     { "nfs", true },    { "xfs", true },        { "gpfs", true },
        { "panfs", true },   { "lustre", true }, { "pvfs2", false },     { "daos", false },
        { "testfs", false }, { "ime", false },   { "quobyte", false },   { "pfs", false },
        { "piofs", false },  { "hfs", false },   { "sfs", false },       { "bgl", false },
        { "bglockless", false },                 { "gridftp", false },
    };
    const char *colon = name ? strchr(name, ':') : NULL;
    if (!colon)
        return NULL;
    size_t n = (size_t)(colon - name);
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if ((prefixes[i].posix || !posix_only) && strlen(prefixes[i].name) == n &&
            strncasecmp(name, prefixes[i].name, n) == 0)
            return colon + 1;
    return NULL;
}

/* The name under which POSIX calls reach the file that the MPI-IO file
 * name NAME opens, with its status in *ST: NAME itself where it names a
 * file, or, where NAME starts with one of ROMIO's prefixes (POSIX_ONLY:
 * tci_past_romio_prefix's), the rest after it, which ROMIO opens.  NULL
 * where neither names a file, or where both do and are different files
 * (which one MPI-IO opened depends on its component): the callers then do
 * without (no helper thread, no sieve reader, a reopen that waits only
 * for the same name, the interposer's key by name). */
static inline const char *tci_file_system_name(const char *name, struct stat *st,
                                               bool posix_only)
{
    if (!name)
        return NULL;
    bool literal = stat(name, st) == 0;
    const char *rest = tci_past_romio_prefix(name, posix_only);
    struct stat other;
    if (!rest || stat(rest, &other) != 0)
        return literal ? name : NULL;
    if (literal && (st->st_dev != other.st_dev || st->st_ino != other.st_ino))
        return NULL;
    *st = other;
    return rest;
}

#endif
