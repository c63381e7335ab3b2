/* Generic configuration loading: a GLib key file read with precise errors, and tables of
 * typed keys that fill the structs their owners declare. sim/ knows no model: every section,
 * key, default and range comes from a table that a model (or the command line) hands in.
 * Errors read "FILE: [section] key = 'value': what was expected". */
#ifndef ROCESIM_CONFIG_H
#define ROCESIM_CONFIG_H
#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CFG_ERROR cfg_error_quark()
GQuark cfg_error_quark(void);

enum cfg_type { CFG_STR, CFG_UINT, CFG_DOUBLE, CFG_SIZE, CFG_RATE, CFG_TIME, CFG_BOOL, CFG_ENUM };

/* One key. `offset` is into the block the table is bound to; `deflt` NULL means "derived
 * from other keys" (the owner fills it in). */
struct cfg_key {
    const char *section, *key;
    enum cfg_type type;
    size_t offset;
    const char *deflt;
    const char *choices;   /* CFG_ENUM: "a|b|c" or "|a|b|c" (index stored as int) */
    double min, max;       /* bounds for CFG_UINT / CFG_DOUBLE */
    int width;             /* CFG_UINT: 1, 4 or 8 bytes */
};

/* The length of a table that ends with an entry whose section is NULL. */
size_t cfg_count(const struct cfg_key *keys);
/* The entry that ends such a table. */
#define CFG_END { .section = NULL }

/* A table of keys bound to the storage its values go to. */
struct cfg_block {
    const struct cfg_key *keys;
    size_t n;
    void *base;
};

/* The key SECTION.KEY of a block (KEY NULL: its first key of SECTION), or NULL. */
const struct cfg_key *cfg_find(const struct cfg_block *b, const char *section, const char *key);

/* Formats an error for a key (value and key may be NULL). */
void cfg_key_error(GError **err, const char *path, const char *section, const char *key, const char *value,
                   const char *fmt, ...) G_GNUC_PRINTF(6, 7);
/* Digits only: no sign, no blank, no 0x; FALSE on overflow. */
gboolean cfg_parse_uint(const char *text, uint64_t *out);
/* Parses VALUE as K's type into the block; PATH names the file in errors. */
gboolean cfg_set_value(const struct cfg_block *b, const struct cfg_key *k, const char *path, const char *value,
                       GError **err);
/* Canonical text of a key's current value (for the expanded configuration). */
char *cfg_format_value(const struct cfg_block *b, const struct cfg_key *k);
/* Frees the block's CFG_STR values. */
void cfg_free_strings(const struct cfg_block *b);

/* Reads PATH as a key file: refuses an empty file, a [group] written twice (GLib would merge
 * them silently) and what is not a key file; then applies SETS ("section.key=value", where
 * "workload.NAME" stands for [workload NAME]). NULL with *err on failure. */
GKeyFile *cfg_read(const char *path, const char *const *sets, GError **err);

/* A [TYPE NAME] section (or a whole-text section such as [server]) kept as validated key/value
 * text, because each kind has its own keys; its model turns it into something else. */
struct named_section {
    char *name;         /* NAME (or the group, for a whole-text section) */
    char *kind;
    GHashTable *keys;   /* key -> value (stripped strings) */
    GPtrArray *order;   /* key names in file order, for printing */
};

/* Keys allowed per kind of a named section; kind "*" lists the keys common to all, a trailing
 * '!' marks a required key. A table ends with { NULL, NULL }. */
struct cfg_kind {
    const char *kind;
    const char *keys;      /* space separated */
};

/* [TYPE NAME] GROUP checked against TABLE: it has a name, a known kind, only that kind's keys,
 * and every required key. */
struct named_section *cfg_load_named(GKeyFile *kf, const char *path, const char *group, const char *type,
                                     const struct cfg_kind *table, GError **err);
/* Any section, keys unchecked (its owner checks them). */
struct named_section *cfg_load_raw(GKeyFile *kf, const char *group);
void named_section_free(gpointer section);

#endif
