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

size_t tmi_table_count(void)
{
    return nentries;
}

tmi_entry *tmi_table_at(size_t i)
{
    return i < nentries ? entries[i] : NULL;
}
