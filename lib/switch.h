/* switch.h - the words of an on/off setting, for libtcio's settings
 * (configuration.c) and the MPI-IO interposer's (mpiio/served.c), which
 * links libtcio but sees only its public names: so the one parser lives
 * here, inline. */
#ifndef TCIO_SWITCH_H
#define TCIO_SWITCH_H

#include <stddef.h>
#include <strings.h>

/* Parse an on/off switch: 1/on/yes/true or 0/off/no/false, in any case.
 * Returns 0 and stores 1 or 0, or -1 (TEXT NULL or another word). */
static inline int tci_parse_switch(const char *text, int *value)
{
    static const char *const on[] = { "1", "on", "yes", "true" };
    static const char *const off[] = { "0", "off", "no", "false" };
    if (!text)
        return -1;
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
        if (strcasecmp(text, on[i]) == 0) {
            *value = 1;
            return 0;
        }
        if (strcasecmp(text, off[i]) == 0) {
            *value = 0;
            return 0;
        }
    }
    return -1;
}

#endif
