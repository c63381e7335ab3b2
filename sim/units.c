#include "sim/units.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct unit {
    const char *name;
    uint64_t scale; /* base units per unit, exact */
};

static const struct unit size_units[] = {
    { "B", 1 },      { "KB", 1000 },   { "KiB", 1024 }, { "MB", 1000000 },
    { "MiB", 1048576 }, { "GB", 1000000000 }, { "GiB", 1073741824 }, { NULL, 0 },
};
static const struct unit rate_units[] = {
    { "bps", 1 }, { "Kbps", 1000 }, { "Mbps", 1000000 }, { "Gbps", 1000000000 }, { "Tbps", 1000000000000 }, { NULL, 0 },
};
static const struct unit time_units[] = {
    { "ps", 1 }, { "ns", 1000 }, { "us", 1000000 }, { "ms", 1000000000 }, { "s", 1000000000000 }, { NULL, 0 },
};

/* A decimal number read exactly: value = digits x 10^exp10. */
struct decimal {
    unsigned __int128 digits; /* significant digits, at most 24 of them */
    int64_t exp10;
};

/* Reads DIGITS[.DIGITS][(e|E)[-]DIGITS] at *p; FALSE (with *p unchanged) if it is not one.
 * No sign, no hexadecimal, no "inf"/"nan": only what a person writes as a quantity. */
static gboolean read_decimal(const char **p, struct decimal *d, int *beyond)
{
    const char *q = *p;
    d->digits = 0;
    d->exp10 = 0;
    *beyond = 0; /* more digits than kept: 1 the value is too large, 2 it is not whole */
    int ndig = 0;
    if (!g_ascii_isdigit(*q))
        return FALSE;
    for (; g_ascii_isdigit(*q); q++) {
        if (d->digits == 0 && *q == '0')
            continue; /* leading zeros carry nothing */
        if (ndig < 24) {
            d->digits = d->digits * 10 + (unsigned)(*q - '0');
            ndig++;
        } else {
            *beyond = 1; /* 25 integer digits: far above 2^64 */
        }
    }
    if (*q == '.') {
        q++;
        if (!g_ascii_isdigit(*q))
            return FALSE;
        for (; g_ascii_isdigit(*q); q++) {
            if (d->digits == 0 && *q == '0') {
                d->exp10--;
                continue;
            }
            if (ndig < 24) {
                d->digits = d->digits * 10 + (unsigned)(*q - '0');
                ndig++;
                d->exp10--;
            } else if (*q != '0' && !*beyond) {
                *beyond = 2;
            }
        }
    }
    if (*q == 'e' || *q == 'E') {
        const char *e = q + 1;
        gboolean neg = *e == '-';
        if (neg)
            e++;
        if (!g_ascii_isdigit(*e))
            return FALSE;
        int64_t x = 0;
        for (; g_ascii_isdigit(*e); e++)
            if (x < 100000)
                x = x * 10 + (*e - '0');
        d->exp10 += neg ? -x : x;
        q = e;
    }
    *p = q;
    return TRUE;
}

/* digits x 10^exp10 x scale as a whole uint64_t: 0 ok, 1 too large, 2 not whole. */
static int decimal_to_u64(const struct decimal *d, uint64_t scale, uint64_t *out)
{
    unsigned __int128 v = d->digits * scale; /* < 10^24 x 10^12 < 2^128 */
    const unsigned __int128 max = UINT64_MAX;
    if (v == 0) {
        *out = 0;
        return 0;
    }
    int64_t e = d->exp10;
    for (; e > 0; e--) {
        if (v > max)
            return 1;
        v *= 10;
    }
    for (; e < 0; e++) {
        if (v % 10)
            return 2;
        v /= 10;
    }
    if (v > max)
        return 1;
    *out = (uint64_t)v;
    return 0;
}

static gboolean is_blank(char c) { return c == ' ' || c == '\t'; }

static char *unit_names(const struct unit *units)
{
    GString *names = g_string_new(NULL);
    for (const struct unit *u = units; u->name; u++)
        g_string_append_printf(names, "%s%s", u == units ? "" : ", ", u->name);
    return g_string_free(names, FALSE);
}

/* Parses "<number><unit>", blanks (space, tab) allowed around and between. The number is
 * decimal, read exactly (no binary floating point), with an optional fraction and exponent;
 * the value in the base unit must be a whole number that fits in uint64_t. */
static gboolean parse_explained(const char *text, const struct unit *units, const char *what,
                                const char *example, uint64_t *out, char **why)
{
    if (!text || !*text) {
        *why = g_strdup_printf("empty value: expected a %s such as %s", what, example);
        return FALSE;
    }
    for (const char *c = text; *c; c++)
        if ((unsigned char)*c < 0x20 && *c != '\t') {
            *why = g_strdup_printf("'%s' holds a control character (byte 0x%02x): expected a %s such as %s", text,
                                   (unsigned char)*c, what, example);
            return FALSE;
        }
    const char *p = text;
    while (is_blank(*p))
        p++;
    if (*p == '-') {
        *why = g_strdup_printf("'%s' is negative: expected a %s such as %s", text, what, example);
        return FALSE;
    }
    if (*p == '+' || *p == '.') {
        *why = g_strdup_printf("'%s': a number starts with digits (no sign, no leading '.'): expected a %s such as %s",
                               text, what, example);
        return FALSE;
    }
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        *why = g_strdup_printf("'%s' is not a decimal number: expected a %s such as %s", text, what, example);
        return FALSE;
    }
    struct decimal d;
    int beyond;
    const char *num = p;
    if (!read_decimal(&p, &d, &beyond)) {
        if (g_ascii_isdigit(*num))
            *why = g_strdup_printf("'%s': expected digits after '.' or 'e' in a %s such as %s", text, what, example);
        else
            *why = g_strdup_printf("'%s' is not a %s: expected a number with a unit, such as %s", text, what, example);
        return FALSE;
    }
    while (is_blank(*p))
        p++;
    size_t ul = strlen(p);
    while (ul > 0 && is_blank(p[ul - 1]))
        ul--;
    if (ul == 0) {
        char *names = unit_names(units);
        *why = g_strdup_printf("'%s' has no unit: a %s needs one of %s, e.g. %s", text, what, names, example);
        g_free(names);
        return FALSE;
    }
    for (const struct unit *u = units; u->name; u++) {
        if (strlen(u->name) != ul || strncmp(u->name, p, ul) != 0)
            continue;
        uint64_t v = 0;
        int r = beyond ? beyond : decimal_to_u64(&d, u->scale, &v);
        if (r == 1) {
            *why = g_strdup_printf("'%s' is too large for a %s (at most %" G_GUINT64_FORMAT "%s)", text, what,
                                   (uint64_t)UINT64_MAX, units[0].name);
            return FALSE;
        }
        if (r == 2) {
            *why = g_strdup_printf("'%s' is not a whole number of %s", text, units[0].name);
            return FALSE;
        }
        *out = v;
        return TRUE;
    }
    char *names = unit_names(units);
    char *unit = g_strndup(p, ul);
    *why = g_strdup_printf("'%s': unknown unit '%s' for a %s, expected one of %s", text, unit, what, names);
    g_free(unit);
    g_free(names);
    return FALSE;
}

gboolean units_parse_real(const char *text, double *out)
{
    if (!text)
        return FALSE;
    const char *p = text;
    while (is_blank(*p))
        p++;
    if (*p == '-')
        p++;
    struct decimal d;
    int beyond;
    if (!read_decimal(&p, &d, &beyond))
        return FALSE;
    while (is_blank(*p))
        p++;
    if (*p)
        return FALSE;
    /* the text is plain decimal now, which strtod reads as written */
    double v = g_ascii_strtod(text, NULL);
    if (!isfinite(v))
        return FALSE;
    *out = v;
    return TRUE;
}

/* parse_explained, with why NULL when the caller wants no message */
static gboolean parse_with_units(const char *text, const struct unit *units, const char *what,
                                 const char *example, uint64_t *out, char **why)
{
    char *msg = NULL;
    gboolean ok = parse_explained(text, units, what, example, out, why ? why : &msg);
    g_free(msg);
    return ok;
}

gboolean units_parse_size(const char *text, uint64_t *bytes, char **why)
{
    return parse_with_units(text, size_units, "size", "4KB or 1MiB", bytes, why);
}

gboolean units_parse_rate(const char *text, uint64_t *bps, char **why)
{
    return parse_with_units(text, rate_units, "rate", "100Gbps", bps, why);
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
        uint64_t s = u->scale;
        if (s > 0 && v % s == 0 && v / s > 0 && s >= best->scale)
            best = u;
    }
    if (v == 0)
        best = &units[0];
    snprintf(buf, len, "%" G_GUINT64_FORMAT "%s", v / best->scale, best->name);
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
        if (ps >= u->scale)
            best = u;
    uint64_t s = best->scale;
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
