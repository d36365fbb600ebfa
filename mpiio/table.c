/* table.c - the handle table: real MPI_File -> served libtcio file.
 *
 * A program has few files open at once, so a linear array in open order
 * is enough; the order matters at MPI_Finalize, which closes the files
 * still open in the same order on every rank (each close is collective). */
#include <stdlib.h>
#include <string.h>
#include "tmi.h"

static tmi_entry **entries;
static size_t nentries, capacity;
tmi_entry *tmi_hot;

tmi_entry *tmi_served_search(MPI_File fh)
{
    for (size_t i = 0; i < nentries; i++)
        if (entries[i]->real == fh)
            return tmi_hot = entries[i];
    return NULL;
}

tmi_entry *tmi_table_add(MPI_File real)
{
    if (nentries == capacity) {
        size_t n = capacity ? 2 * capacity : 8;
        tmi_entry **p = realloc(entries, n * sizeof *p);
        if (!p)
            return NULL;
        entries = p;
        capacity = n;
    }
    tmi_entry *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->real = real;
    e->comm = MPI_COMM_NULL;
    e->last_type = MPI_DATATYPE_NULL;
    tmi_view_default(&e->view);
    entries[nentries++] = e;
    return e;
}

void tmi_table_drop(tmi_entry *e)
{
    if (tmi_hot == e)
        tmi_hot = NULL;
    for (size_t i = 0; i < nentries; i++) {
        if (entries[i] != e)
            continue;
        memmove(entries + i, entries + i + 1, (nentries - i - 1) * sizeof *entries);
        nentries--;
        break;
    }
    if (e->own_comm && e->comm != MPI_COMM_NULL)
        MPI_Comm_free(&e->comm);
    else if (e->comm != MPI_COMM_NULL)
        tmi_comm_give_back(e->comm);
    tmi_view_free(&e->view);
    free(e->cache);
    free(e->name);
    free(e->key);
    free(e->stats_file);
    free(e);
}

tmi_entry *tmi_table_find_key(const char *key)
{
    for (size_t i = 0; i < nentries; i++)
        if (strcmp(entries[i]->key, key) == 0)
            return entries[i];
    return NULL;
}

tmi_entry *tmi_table_first(void)
{
    return nentries ? entries[0] : NULL;
}

/* ---- handles of files this process has open and does not serve ---- */

typedef struct unserved {
    MPI_File real;
    char    *key;
} unserved;

static unserved *others;
static size_t nothers, others_capacity;

void tmi_unserved_add(MPI_File real, const char *key, int amode)
{
    /* A read-only handle cannot leave a served one's bytes stale; and
     * under MPI_THREAD_MULTIPLE no file is served, while this record has
     * no lock for concurrent opens. */
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    if (!key || (amode & MPI_MODE_RDONLY) || level == MPI_THREAD_MULTIPLE)
        return;
    if (nothers == others_capacity) {
        size_t n = others_capacity ? 2 * others_capacity : 8;
        unserved *p = realloc(others, n * sizeof *p);
        if (!p)
            return;   /* not recorded: a later open of the file may be served */
        others = p;
        others_capacity = n;
    }
    char *copy = strdup(key);
    if (!copy)
        return;
    others[nothers++] = (unserved){ .real = real, .key = copy };
}

void tmi_unserved_drop(MPI_File real)
{
    for (size_t i = 0; i < nothers; i++) {
        if (others[i].real != real)
            continue;
        free(others[i].key);
        others[i] = others[--nothers];
        return;
    }
}

int tmi_unserved_open(const char *key)
{
    for (size_t i = 0; key && i < nothers; i++)
        if (strcmp(others[i].key, key) == 0)
            return 1;
    return 0;
}

size_t tmi_table_count(void)
{
    return nentries;
}

tmi_entry *tmi_table_at(size_t i)
{
    return i < nentries ? entries[i] : NULL;
}
