/* json_string.h - a string as a JSON string literal, for the statistics'
 * JSON lines of libtcio (lib/stats.c) and of the MPI-IO interposer
 * (mpiio/stats.c), which links libtcio but sees only its public names:
 * so it lives here, inline, as romio_prefix.h does.  File names may hold
 * any byte but NUL: a tab or a newline written raw would break the line
 * a tool parses (JSON Lines). */
#ifndef TCIO_JSON_STRING_H
#define TCIO_JSON_STRING_H

#include <stdio.h>

/* TEXT in double quotes, with '"' and '\\' escaped and every control
 * character as \u00XX; other bytes as they are (UTF-8 passes through). */
static inline void tci_print_json_string(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

#endif
