/* summary.json (see summary.h). */
#include "results_io/summary.h"
#include "results_io/outcome.h"
#include "results_io/format.h"
#include "results_io/json_text.h"
#include "sim/version.h"
#include <string.h>

JsonBuilder *summary_begin(void)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "rocesim_version");
    json_builder_add_string_value(b, ROCESIM_VERSION);
    return b;
}

void summary_scenario(JsonBuilder *b, GKeyFile *expanded)
{
    json_builder_set_member_name(b, "scenario");
    json_builder_begin_object(b);
    gsize ng;
    char **groups = g_key_file_get_groups(expanded, &ng);
    for (gsize g = 0; g < ng; g++) {
        json_builder_set_member_name(b, groups[g]);
        json_builder_begin_object(b);
        gsize nk;
        char **keys = g_key_file_get_keys(expanded, groups[g], &nk, NULL);
        for (gsize k = 0; k < nk; k++) {
            char *v = g_key_file_get_value(expanded, groups[g], keys[k], NULL);
            json_builder_set_member_name(b, keys[k]);
            json_builder_add_string_value(b, v);
            g_free(v);
        }
        g_strfreev(keys);
        json_builder_end_object(b);
    }
    g_strfreev(groups);
    json_builder_end_object(b);
}

void summary_warnings(JsonBuilder *b, const GPtrArray *warnings)
{
    json_builder_set_member_name(b, "warnings");
    json_builder_begin_array(b);
    for (guint i = 0; i < warnings->len; i++)
        json_builder_add_string_value(b, g_ptr_array_index(warnings, i));
    json_builder_end_array(b);
}

static gboolean write_text(const char *dir, const char *text, gssize len, GError **err)
{
    char *path = g_build_filename(dir, RESULTS_SUMMARY, NULL);
    gboolean ok = g_file_set_contents(path, text, len, err);
    g_free(path);
    return ok;
}

char *summary_text(JsonBuilder *b)
{
    json_builder_end_object(b);
    return outcome_json_text(b);
}

gboolean summary_write(const char *dir, JsonBuilder *b, GError **err)
{
    char *text = summary_text(b);
    gboolean ok = write_text(dir, text, -1, err);
    g_free(text);
    return ok;
}

/* a document's text: "{\n", its members, "\n}" (json-glib prints "{  }" for none: the
 * documents here all have members) */
static size_t checked_len(const char *text)
{
    size_t len = strlen(text);
    if (len < 4 || strncmp(text, "{\n", 2) || strcmp(text + len - 2, "\n}"))
        g_error("summary: a document's text is not \"{\\n\" members \"\\n}\"");
    return len;
}

GString *summary_text_open(char *text)
{
    size_t len = checked_len(text);
    GString *doc = g_string_new_len(text, (gssize)len - 2); /* (g_string_new_take is GLib 2.78) */
    g_free(text);
    return doc;
}

void summary_text_member(GString *doc, const char *name)
{
    char *q = json_text_quote(name);
    g_string_append(doc, ",\n  ");
    g_string_append(doc, q);
    g_string_append(doc, " : ");
    g_free(q);
}

void summary_text_members(GString *doc, char *text)
{
    size_t len = checked_len(text);
    g_string_append(doc, ",\n");
    g_string_append_len(doc, text + 2, (gssize)len - 4);
    g_free(text);
}

/* No string holds a raw newline: the member's text, two spaces deeper after each newline, is
 * what the generator would have put there. */
gboolean summary_write_with(const char *dir, GString *doc, const char *name, JsonBuilder *member,
                            GError **err)
{
    summary_text_member(doc, name);
    json_builder_end_object(member);
    char *m = outcome_json_text(member);
    for (const char *c = m; *c; c++) {
        g_string_append_c(doc, *c);
        if (*c == '\n')
            g_string_append(doc, "  ");
    }
    g_free(m);
    g_string_append(doc, "\n}");
    return write_text(dir, doc->str, (gssize)doc->len, err);
}
