/* summary.json (see summary.h). */
#include "results_io/summary.h"
#include "results_io/outcome.h"
#include "results_io/format.h"
#include "sim/version.h"

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

gboolean summary_write(const char *dir, JsonBuilder *b, GError **err)
{
    json_builder_end_object(b);
    char *text = outcome_json_text(b);
    char *path = g_build_filename(dir, RESULTS_SUMMARY, NULL);
    gboolean ok = g_file_set_contents(path, text, -1, err);
    g_free(path);
    g_free(text);
    return ok;
}
