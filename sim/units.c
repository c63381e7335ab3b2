#include "sim/units.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct unit {
    const char *name;
    double scale;
};

static const struct unit size_units[] = {
    { "B", 1 },      { "KB", 1e3 },   { "KiB", 1024.0 }, { "MB", 1e6 },
    { "MiB", 1048576.0 }, { "GB", 1e9 }, { "GiB", 1073741824.0 }, { NULL, 0 },
};
static const struct unit rate_units[] = {
    { "bps", 1 }, { "Kbps", 1e3 }, { "Mbps", 1e6 }, { "Gbps", 1e9 }, { "Tbps", 1e12 }, { NULL, 0 },
};
static const struct unit time_units[] = {
    { "ps", 1 }, { "ns", 1e3 }, { "us", 1e6 }, { "ms", 1e9 }, { "s", 1e12 }, { NULL, 0 },
};

/* Parses "<number><unit>" with optional spaces between; the number may have a fraction.
 * The product must be a non-negative integer in the base unit (after rounding to nearest,
 * allowing tiny float error) that fits in uint64_t. */
static gboolean parse_with_units(const char *text, const struct unit *units, const char *what,
                                 const char *example, uint64_t *out, char **why)
{
    if (!text || !*text) {
        *why = g_strdup_printf("empty value: expected a %s such as %s", what, example);
        return FALSE;
    }
    while (g_ascii_isspace(*text))
        text++;
    if (*text == '-') {
        *why = g_strdup_printf("'%s' is negative: expected a %s such as %s", text, what, example);
        return FALSE;
    }
    char *end = NULL;
    errno = 0;
    double v = g_ascii_strtod(text, &end);
    if (end == text || errno == ERANGE || !isfinite(v)) {
        *why = g_strdup_printf("'%s' is not a %s: expected a number with a unit, such as %s", text,
                               what, example);
        return FALSE;
    }
    while (g_ascii_isspace(*end))
        end++;
    char unitbuf[16];
    size_t ul = strlen(end);
    while (ul > 0 && g_ascii_isspace(end[ul - 1]))
        ul--;
    if (ul == 0) {
        GString *names = g_string_new(NULL);
        for (const struct unit *u = units; u->name; u++)
            g_string_append_printf(names, "%s%s", u == units ? "" : ", ", u->name);
        *why = g_strdup_printf("'%s' has no unit: a %s needs one of %s, e.g. %s", text, what,
                               names->str, example);
        g_string_free(names, TRUE);
        return FALSE;
    }
    if (ul >= sizeof unitbuf) {
        *why = g_strdup_printf("'%s': unknown unit, expected a %s such as %s", text, what, example);
        return FALSE;
    }
    memcpy(unitbuf, end, ul);
    unitbuf[ul] = 0;
    for (const struct unit *u = units; u->name; u++) {
        if (strcmp(u->name, unitbuf) != 0)
            continue;
        double base = v * u->scale;
        double rounded = floor(base + 0.5);
        if (rounded > 1.8e19) {
            *why = g_strdup_printf("'%s' is too large for a %s", text, what);
            return FALSE;
        }
        /* whole base units only; the slack covers binary rounding of decimal fractions */
        if (fabs(base - rounded) > 1e-3 + 4e-16 * rounded) {
            *why = g_strdup_printf("'%s' is not a whole number of %s", text, units[0].name);
            return FALSE;
        }
        *out = (uint64_t)rounded;
        return TRUE;
    }
    GString *names = g_string_new(NULL);
    for (const struct unit *u = units; u->name; u++)
        g_string_append_printf(names, "%s%s", u == units ? "" : ", ", u->name);
    *why = g_strdup_printf("'%s': unknown unit '%s' for a %s, expected one of %s", text, unitbuf,
                           what, names->str);
    g_string_free(names, TRUE);
    return FALSE;
}

gboolean units_parse_size(const char *text, uint64_t *bytes, char **why)
{
    return parse_with_units(text, size_units, "size", "4KB or 1MiB", bytes, why);
}

gboolean units_parse_rate(const char *text, uint64_t *bps, char **why)
{
    if (!parse_with_units(text, rate_units, "rate", "100Gbps", bps, why))
        return FALSE;
    return TRUE;
}

gboolean units_parse_time(const char *text, simtime_t *ps, char **why)
{
    return parse_with_units(text, time_units, "time", "1.5us or 10ms", ps, why);
}

/* Picks the largest unit that divides the value exactly; falls back to the base unit. */
static char *format_exact(uint64_t v, const struct unit *units, char *buf, size_t len)
{
    const struct unit *best = &units[0];
    for (const struct unit *u = units; u->name; u++) {
        uint64_t s = (uint64_t)u->scale;
        if (s > 0 && v % s == 0 && v / s > 0 && s >= (uint64_t)best->scale)
            best = u;
    }
    if (v == 0)
        best = &units[0];
    snprintf(buf, len, "%" G_GUINT64_FORMAT "%s", v / (uint64_t)best->scale, best->name);
    return buf;
}

char *units_format_size(uint64_t bytes, char *buf, size_t len)
{
    return format_exact(bytes, size_units, buf, len);
}

char *units_format_rate(uint64_t bps, char *buf, size_t len)
{
    return format_exact(bps, rate_units, buf, len);
}

/* Times read better with a fraction ("1.5us") than in the base unit. */
char *units_format_time(simtime_t ps, char *buf, size_t len)
{
    const struct unit *best = &time_units[0];
    for (const struct unit *u = time_units; u->name; u++)
        if (ps >= (uint64_t)u->scale)
            best = u;
    uint64_t s = (uint64_t)best->scale;
    if (ps % s == 0) {
        snprintf(buf, len, "%" G_GUINT64_FORMAT "%s", ps / s, best->name);
    } else {
        /* exact decimal: integer part and the remainder with trailing zeros trimmed */
        char frac[32];
        unsigned digits = 0; /* at most 12: the largest unit is 1e12 ps */
        for (uint64_t t = s; t > 1 && digits < 12; t /= 10)
            digits++;
        snprintf(frac, sizeof frac, "%0*" G_GUINT64_FORMAT, (int)(digits & 15u), ps % s);
        for (int i = (int)digits - 1; i > 0 && frac[i] == '0'; i--)
            frac[i] = 0;
        snprintf(buf, len, "%" G_GUINT64_FORMAT ".%s%s", ps / s, frac, best->name);
    }
    return buf;
}
