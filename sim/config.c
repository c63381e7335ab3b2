/* Generic key tables and key-file reading (see sim/config.h). */
#include "sim/config.h"
#include <string.h>
#include "sim/simtime.h"
#include "sim/units.h"

G_DEFINE_QUARK(rocesim-scenario-error, cfg_error)

void cfg_key_error(GError **err, const char *path, const char *section, const char *key, const char *value,
                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (value)
        g_set_error(err, CFG_ERROR, 1, "%s: [%s] %s = '%s': %s", path, section, key, value, what);
    else if (key)
        g_set_error(err, CFG_ERROR, 1, "%s: [%s] %s: %s", path, section, key, what);
    else
        g_set_error(err, CFG_ERROR, 1, "%s: [%s]: %s", path, section, what);
    g_free(what);
}

gboolean cfg_parse_uint(const char *v, uint64_t *out)
{
    if (!v || !*v)
        return FALSE;
    uint64_t x = 0;
    for (const char *p = v; *p; p++) { /* digits only: no sign, no blank, no 0x */
        if (!g_ascii_isdigit(*p) || x > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
            return FALSE;
        x = x * 10 + (uint64_t)(*p - '0');
    }
    *out = x;
    return TRUE;
}

/* A choice list may start with a bar (lists built by macros): "|a|b" is "a|b". */
static const char *enum_choices(const struct cfg_key *kd) { return kd->choices + (kd->choices[0] == '|'); }

gboolean cfg_set_value(const struct cfg_block *b, const struct cfg_key *kd, const char *path, const char *value,
                       GError **err)
{
    char *base = (char *)b->base + kd->offset;
    char *why = NULL;
    switch (kd->type) {
    case CFG_STR:
        g_free(*(char **)base);
        *(char **)base = g_strdup(value);
        return TRUE;
    case CFG_UINT: {
        uint64_t x;
        if (!cfg_parse_uint(value, &x)) {
            cfg_key_error(err, path, kd->section, kd->key, value, "expected a whole number%s",
                               value && value[0] == '-' ? " that is not negative" : "");
            return FALSE;
        }
        /* bounds compared as integers: 2^64 - 1 is not a double */
        uint64_t lo = (uint64_t)kd->min, hi = kd->max >= 1.8e19 ? UINT64_MAX : (uint64_t)kd->max;
        if (x < lo || x > hi) {
            if (hi == UINT64_MAX)
                cfg_key_error(err, path, kd->section, kd->key, value, "expected a number from %" G_GUINT64_FORMAT
                                   " to %" G_GUINT64_FORMAT, lo, hi);
            else
                cfg_key_error(err, path, kd->section, kd->key, value, "expected a number from %.0f to %.0f",
                                   kd->min, kd->max);
            return FALSE;
        }
        if (kd->width == 1)
            *(uint8_t *)base = (uint8_t)x;
        else if (kd->width == 4)
            *(uint32_t *)base = (uint32_t)x;
        else
            *(uint64_t *)base = x;
        return TRUE;
    }
    case CFG_DOUBLE: {
        double x = 0;
        if (!units_parse_real(value, &x)) {
            cfg_key_error(err, path, kd->section, kd->key, value, "expected a number such as 0.2");
            return FALSE;
        }
        if (x < kd->min || x > kd->max) {
            cfg_key_error(err, path, kd->section, kd->key, value, "expected a number from %g to %g",
                               kd->min, kd->max);
            return FALSE;
        }
        *(double *)base = x;
        return TRUE;
    }
    case CFG_SIZE:
        if (!units_parse_size(value, (uint64_t *)base, &why))
            goto bad;
        return TRUE;
    case CFG_RATE:
        if (!units_parse_rate(value, (uint64_t *)base, &why))
            goto bad;
        return TRUE;
    case CFG_TIME:
        if (!units_parse_time(value, (simtime_t *)base, &why))
            goto bad;
        return TRUE;
    case CFG_BOOL:
        if (!g_strcmp0(value, "on") || !g_strcmp0(value, "true") || !g_strcmp0(value, "yes"))
            *(bool *)base = true;
        else if (!g_strcmp0(value, "off") || !g_strcmp0(value, "false") || !g_strcmp0(value, "no"))
            *(bool *)base = false;
        else {
            cfg_key_error(err, path, kd->section, kd->key, value, "expected on or off");
            return FALSE;
        }
        return TRUE;
    case CFG_ENUM: {
        char **choices = g_strsplit(enum_choices(kd), "|", -1);
        int idx = -1;
        for (int i = 0; choices[i]; i++)
            if (!g_strcmp0(choices[i], value))
                idx = i;
        g_strfreev(choices);
        if (idx < 0) {
            char *list = g_strdelimit(g_strdup(enum_choices(kd)), "|", ',');
            cfg_key_error(err, path, kd->section, kd->key, value, "expected one of %s", list);
            g_free(list);
            return FALSE;
        }
        *(int *)base = idx;
        return TRUE;
    }
    }
    return FALSE;
bad:
    g_set_error(err, CFG_ERROR, 1, "%s: [%s] %s: %s", path, kd->section, kd->key, why);
    g_free(why);
    return FALSE;
}

char *cfg_format_value(const struct cfg_block *b, const struct cfg_key *kd)
{
    const char *base = (const char *)b->base + kd->offset;
    char buf[64];
    switch (kd->type) {
    case CFG_STR:
        return g_strdup(*(char *const *)base ? *(char *const *)base : "");
    case CFG_UINT:
        if (kd->width == 1)
            return g_strdup_printf("%u", *(const uint8_t *)base);
        if (kd->width == 4)
            return g_strdup_printf("%u", *(const uint32_t *)base);
        return g_strdup_printf("%" G_GUINT64_FORMAT, *(const uint64_t *)base);
    case CFG_DOUBLE:
        g_ascii_formatd(buf, sizeof buf, "%.10g", *(const double *)base);
        return g_strdup(buf);
    case CFG_SIZE:
        return g_strdup(units_format_size(*(const uint64_t *)base, buf, sizeof buf));
    case CFG_RATE:
        return g_strdup(units_format_rate(*(const uint64_t *)base, buf, sizeof buf));
    case CFG_TIME:
        return g_strdup(units_format_time(*(const simtime_t *)base, buf, sizeof buf));
    case CFG_BOOL:
        return g_strdup(*(const bool *)base ? "on" : "off");
    case CFG_ENUM: {
        char **choices = g_strsplit(enum_choices(kd), "|", -1);
        char *r = g_strdup(choices[*(const int *)base]);
        g_strfreev(choices);
        return r;
    }
    }
    return g_strdup("");
}

void named_section_free(gpointer p)
{
    struct named_section *n = p;
    g_free(n->name);
    g_free(n->kind);
    g_hash_table_unref(n->keys);
    g_ptr_array_unref(n->order);
    g_free(n);
}

/* Applies one "section.key=value" override to the key file. */
static gboolean apply_set(GKeyFile *kf, const char *set, GError **err)
{
    const char *eq = strchr(set, '=');
    const char *dot = NULL;
    for (const char *p = set; eq && p < eq; p++)
        if (*p == '.')
            dot = p;
    if (!eq || !dot || dot == set || dot + 1 == eq) {
        g_set_error(err, CFG_ERROR, 1,
                    "--set '%s': expected section.key=value, e.g. switch.ecn_kmin=50KB or "
                    "'workload incast.size=1MB'", set);
        return FALSE;
    }
    char *section = g_strndup(set, (gsize)(dot - set));
    char *key = g_strndup(dot + 1, (gsize)(eq - dot - 1));
    /* "workload.NAME" and "fault.NAME" stand for the sections with a space. */
    if (g_str_has_prefix(section, "workload.") || g_str_has_prefix(section, "fault."))
        *strchr(section, '.') = ' ';
    g_key_file_set_value(kf, section, key, eq + 1);
    g_free(section);
    g_free(key);
    return TRUE;
}

static gboolean kind_allows(const struct cfg_kind *table, const char *kind, const char *key,
                            bool *known_kind)
{
    *known_kind = false;
    gboolean ok = FALSE;
    for (const struct cfg_kind *k = table; k->kind; k++) {
        bool match = !strcmp(k->kind, "*") || !strcmp(k->kind, kind);
        if (strcmp(k->kind, "*") && !strcmp(k->kind, kind))
            *known_kind = true;
        if (!match)
            continue;
        char **list = g_strsplit(k->keys, " ", -1);
        for (int i = 0; list[i]; i++) {
            size_t l = strlen(list[i]);
            if (l && list[i][l - 1] == '!')
                list[i][l - 1] = 0;
            if (!strcmp(list[i], key))
                ok = TRUE;
        }
        g_strfreev(list);
    }
    return ok;
}

static char *kind_names(const struct cfg_kind *table)
{
    GString *g = g_string_new(NULL);
    for (const struct cfg_kind *k = table; k->kind; k++)
        if (strcmp(k->kind, "*"))
            g_string_append_printf(g, "%s%s", g->len ? ", " : "", k->kind);
    return g_string_free(g, FALSE);
}

struct named_section *cfg_load_named(GKeyFile *kf, const char *path, const char *group, const char *type,
                                     const struct cfg_kind *table, GError **err)
{
    const char *name = group + strlen(type); /* "" for a bare [workload], else " NAME" */
    while (*name == ' ')
        name++;
    if (!*name) {
        cfg_key_error(err, path, group, NULL, NULL, "a %s section needs a name, e.g. [%s incast]", type, type);
        return NULL;
    }
    char *kind = g_key_file_get_value(kf, group, "kind", NULL);
    if (!kind) {
        char *names = kind_names(table);
        cfg_key_error(err, path, group, "kind", NULL, "missing: expected one of %s", names);
        g_free(names);
        return NULL;
    }
    g_strstrip(kind);
    bool known;
    kind_allows(table, kind, "kind", &known);
    if (!known) {
        char *names = kind_names(table);
        cfg_key_error(err, path, group, "kind", kind, "unknown %s kind: expected one of %s", type, names);
        g_free(names);
        g_free(kind);
        return NULL;
    }
    struct named_section *n = g_new0(struct named_section, 1);
    n->name = g_strdup(name);
    n->kind = kind;
    n->keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    n->order = g_ptr_array_new_with_free_func(g_free);
    gsize nk = 0;
    char **ks = g_key_file_get_keys(kf, group, &nk, NULL);
    for (gsize i = 0; i < nk; i++) {
        if (!kind_allows(table, kind, ks[i], &known)) {
            cfg_key_error(err, path, group, ks[i], NULL, "unknown key for a %s of kind %s", type, kind);
            goto fail;
        }
        char *v = g_key_file_get_value(kf, group, ks[i], NULL);
        g_strstrip(v);
        g_hash_table_replace(n->keys, g_strdup(ks[i]), v);
        g_ptr_array_add(n->order, g_strdup(ks[i]));
    }
    /* required keys */
    for (const struct cfg_kind *k = table; k->kind; k++) {
        if (strcmp(k->kind, "*") && strcmp(k->kind, kind))
            continue;
        char **list = g_strsplit(k->keys, " ", -1);
        for (int i = 0; list[i]; i++) {
            size_t l = strlen(list[i]);
            if (l && list[i][l - 1] == '!') {
                list[i][l - 1] = 0;
                if (!g_hash_table_contains(n->keys, list[i])) {
                    cfg_key_error(err, path, group, list[i], NULL, "missing: a %s of kind %s needs it", type, kind);
                    g_strfreev(list);
                    goto fail;
                }
            }
        }
        g_strfreev(list);
    }
    g_strfreev(ks);
    return n;
fail:
    g_strfreev(ks);
    named_section_free(n);
    return NULL;
}

struct named_section *cfg_load_raw(GKeyFile *kf, const char *group)
{
    struct named_section *n = g_new0(struct named_section, 1);
    n->name = g_strdup(group);
    n->keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    n->order = g_ptr_array_new_with_free_func(g_free);
    gsize nk = 0;
    char **ks = g_key_file_get_keys(kf, group, &nk, NULL);
    for (gsize i = 0; i < nk; i++) {
        char *v = g_key_file_get_value(kf, group, ks[i], NULL);
        g_hash_table_replace(n->keys, g_strdup(ks[i]), g_strstrip(v));
        g_ptr_array_add(n->order, g_strdup(ks[i]));
    }
    g_strfreev(ks);
    return n;
}

/* GLib merges a [group] that appears twice into one, so the second's keys silently override
 * the first's: refused here, naming both lines. */
static gboolean no_duplicate_groups(const char *path, const char *contents, GError **err)
{
    GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    char **lines = g_strsplit(contents, "\n", -1);
    gboolean ok = TRUE;
    for (int i = 0; lines[i] && ok; i++) {
        char *l = g_strchug(lines[i]);
        char *close = *l == '[' ? strrchr(l, ']') : NULL;
        if (!close)
            continue;
        char *name = g_strndup(l + 1, (gsize)(close - l - 1));
        gpointer first = g_hash_table_lookup(seen, name);
        if (first) {
            g_set_error(err, CFG_ERROR, 1,
                        "%s: [%s] at line %d repeats the section of line %d: write each section once",
                        path, name, i + 1, GPOINTER_TO_INT(first));
            ok = FALSE;
            g_free(name);
        } else {
            g_hash_table_insert(seen, name, GINT_TO_POINTER(i + 1));
        }
    }
    g_strfreev(lines);
    g_hash_table_destroy(seen);
    return ok;
}


const struct cfg_key *cfg_find(const struct cfg_block *b, const char *section, const char *key)
{
    for (size_t i = 0; i < b->n; i++)
        if (!strcmp(b->keys[i].section, section) && (!key || !strcmp(b->keys[i].key, key)))
            return &b->keys[i];
    return NULL;
}

size_t cfg_count(const struct cfg_key *keys)
{
    size_t n = 0;
    while (keys && keys[n].section)
        n++;
    return n;
}

void cfg_free_strings(const struct cfg_block *b)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->keys[i].type == CFG_STR) {
            char **slot = (char **)((char *)b->base + b->keys[i].offset);
            g_free(*slot);
            *slot = NULL;
        }
}

GKeyFile *cfg_read(const char *path, const char *const *sets, GError **err)
{
    GKeyFile *kf = g_key_file_new();
    GError *e = NULL;
    char *contents = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &contents, &len, &e)) {
        g_set_error(err, CFG_ERROR, 1, "%s: cannot read the scenario: %s", path, e->message);
        g_error_free(e);
        goto fail;
    }
    if (len == 0 || strspn(contents, " \t\r\n") == len) {
        g_set_error(err, CFG_ERROR, 1, "%s: the scenario file is empty: expected sections such as [topology] and [workload NAME]", path);
        goto fail;
    }
    if (!no_duplicate_groups(path, contents, err))
        goto fail;
    if (!g_key_file_load_from_data(kf, contents, len, G_KEY_FILE_NONE, &e)) {
        char *msg = g_utf8_make_valid(e->message, -1); /* a binary file's bytes end up in the message */
        g_set_error(err, CFG_ERROR, 1, "%s: not a scenario key file (INI with [section] and key = value lines): %s",
                    path, msg);
        g_free(msg);
        g_error_free(e);
        goto fail;
    }
    g_free(contents);
    for (int i = 0; sets && sets[i]; i++)
        if (!apply_set(kf, sets[i], err)) {
            g_key_file_unref(kf);
            return NULL;
        }
    return kf;
fail:
    g_free(contents);
    g_key_file_unref(kf);
    return NULL;
}
