/* results_io/json_text.c writes summary.json's largest parts without json-glib's builder, and
 * must print what json-glib's pretty generator prints for the same values: the reference here
 * is json-glib itself, building the same document. */
#include <json-glib/json-glib.h>
#include <math.h>
#include "results_io/json_text.h"
#include "results_io/outcome.h"
#include "tests/testutil.h"

/* json-glib's pretty text of the document b holds (consumed): what summary.json's other
 * members go through (outcome_json_text) */
static char *glib_text(JsonBuilder *b)
{
    return outcome_json_text(b);
}

static const char *const strings[] = { "leaf0", "", "a\"b", "back\\slash", "tab\there", "nl\nx", "\x01\x1f\x7f",
                                       "slash/", "micro \xc2\xb5s", "spine127",
                                       " !#$%&'()*+,-./0123456789:;<=>?@AZ[]^_`az{|}~", "del\x7f" };
static const double doubles[] = { 0.0, 1.0, -2.5, 0.1, 1.0 / 3.0, 1e-300, 1e300, 123456789.0, 0.33742293815869828,
                                  -0.0, 5e-324, 1.7976931348623157e308 };
static const int64_t ints[] = { 0, 1, -1, 4224, INT64_MAX, INT64_MIN, 1019302 };

/* A document like summary.json's: members of every kind, an array of objects (the ports),
 * empty arrays and objects, nesting three deep. */
static void both(struct json_text *j, JsonBuilder *b)
{
    json_text_begin_object(j, NULL);
    json_builder_begin_object(b);
    json_text_begin_array(j, "ports");
    json_builder_set_member_name(b, "ports");
    json_builder_begin_array(b);
    for (size_t i = 0; i < G_N_ELEMENTS(strings); i++) {
        json_text_begin_object(j, NULL);
        json_builder_begin_object(b);
        char *q = json_text_quote(strings[i]);
        json_text_quoted(j, "node", q);
        g_free(q);
        json_builder_set_member_name(b, "node");
        json_builder_add_string_value(b, strings[i]);
        json_text_int(j, "port", ints[i % G_N_ELEMENTS(ints)]);
        json_builder_set_member_name(b, "port");
        json_builder_add_int_value(b, ints[i % G_N_ELEMENTS(ints)]);
        json_text_dbl(j, "utilisation", doubles[i % G_N_ELEMENTS(doubles)]);
        json_builder_set_member_name(b, "utilisation");
        json_builder_add_double_value(b, doubles[i % G_N_ELEMENTS(doubles)]);
        json_text_end_object(j);
        json_builder_end_object(b);
    }
    json_text_end_array(j);
    json_builder_end_array(b);
    json_text_begin_array(j, "doubles");
    json_builder_set_member_name(b, "doubles");
    json_builder_begin_array(b);
    for (size_t i = 0; i < G_N_ELEMENTS(doubles); i++) {
        json_text_dbl(j, NULL, doubles[i]);
        json_builder_add_double_value(b, doubles[i]);
    }
    json_text_end_array(j);
    json_builder_end_array(b);
    json_text_begin_array(j, "empty_array");
    json_text_end_array(j);
    json_builder_set_member_name(b, "empty_array");
    json_builder_begin_array(b);
    json_builder_end_array(b);
    json_text_begin_object(j, "empty_object");
    json_text_end_object(j);
    json_builder_set_member_name(b, "empty_object");
    json_builder_begin_object(b);
    json_builder_end_object(b);
    json_text_begin_object(j, "nested");
    json_builder_set_member_name(b, "nested");
    json_builder_begin_object(b);
    json_text_begin_array(j, "list");
    json_builder_set_member_name(b, "list");
    json_builder_begin_array(b);
    json_text_begin_array(j, NULL);
    json_builder_begin_array(b);
    json_text_int(j, NULL, 7);
    json_builder_add_int_value(b, 7);
    json_text_end_array(j);
    json_builder_end_array(b);
    json_text_end_array(j);
    json_builder_end_array(b);
    json_text_end_object(j);
    json_builder_end_object(b);
    json_text_end_object(j);
    json_builder_end_object(b);
}

static void test_same_text_as_json_glib(void)
{
    GString *mine = g_string_new(NULL);
    struct json_text j;
    json_text_init(&j, mine, 0);
    JsonBuilder *b = json_builder_new();
    both(&j, b);
    char *want = glib_text(b);
    CU_ASSERT_STRING_EQUAL(mine->str, want);
    if (strcmp(mine->str, want))
        fprintf(stderr, "json_text:\n%s\njson-glib:\n%s\n", mine->str, want);
    g_free(want);
    g_string_free(mine, TRUE);
}

/* A value written as a document's member (level 1, after its name) is the document's text. */
static void test_member_value_at_level_one(void)
{
    GString *mine = g_string_new("{\n  \"a\" : 1,\n  \"ports\" : ");
    struct json_text j;
    json_text_init(&j, mine, 1);
    json_text_begin_array(&j, NULL);
    for (int i = 0; i < 3; i++) {
        json_text_begin_object(&j, NULL);
        json_text_int(&j, "port", i);
        json_text_dbl(&j, "paused_fraction", i / 4.0);
        json_text_end_object(&j);
    }
    json_text_end_array(&j);
    g_string_append(mine, "\n}");

    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "a");
    json_builder_add_int_value(b, 1);
    json_builder_set_member_name(b, "ports");
    json_builder_begin_array(b);
    for (int i = 0; i < 3; i++) {
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "port");
        json_builder_add_int_value(b, i);
        json_builder_set_member_name(b, "paused_fraction");
        json_builder_add_double_value(b, i / 4.0);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    char *want = glib_text(b);
    CU_ASSERT_STRING_EQUAL(mine->str, want);
    g_free(want);
    g_string_free(mine, TRUE);
}

/* A run's summary.json, put together from json-glib's text, json_text's and the engine object
 * added last (results_io/summary_run.c), is what json-glib prints for the document it holds:
 * parsed and printed again, the same bytes. The scenario (a 16-to-1 incast) has ECN marks,
 * a warning and ports with integral and fractional figures. */
static void test_run_summary_is_json_glib_text(void)
{
    struct test_outdir d = test_outdir_new();
    char *scen = test_data_path("incast16.ini");
    const char *args[] = { "run", scen, "-o", d.out, NULL };
    const char *extra[] = { "--no-plots", "--quiet", NULL };
    CU_ASSERT_EQUAL_FATAL(test_rocesim(args, extra, NULL, NULL), 0);
    char *path = g_build_filename(d.out, "summary.json", NULL), *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(path, &text, NULL, NULL));
    JsonParser *jp = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(jp, text, -1, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(jp));
    CU_ASSERT(json_array_get_length(json_object_get_array_member(root, "ports")) > 0);
    JsonGenerator *g = json_generator_new();
    json_generator_set_pretty(g, TRUE);
    json_generator_set_root(g, json_parser_get_root(jp));
    char *again = json_generator_to_data(g, NULL);
    CU_ASSERT_STRING_EQUAL(text, again);
    g_free(again);
    g_object_unref(g);
    g_object_unref(jp);
    g_free(text);
    g_free(path);
    g_free(scen);
    test_outdir_free(&d);
}

static CU_TestInfo tests[] = {
    { "a run's summary.json: json-glib's text for what it holds", test_run_summary_is_json_glib_text },
    { "the same text as json-glib's pretty generator", test_same_text_as_json_glib },
    { "a document's member, one level deep", test_member_value_at_level_one },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("json_text", tests)
