/* JSON text written directly, as json-glib's pretty generator prints the same values (two
 * spaces a level, " : " after a name, members and elements one a line), for the parts of
 * summary.json too large for its builder: a run's per-port figures at 16384 hosts are 65 K
 * objects, which json-glib built and printed in 0.5 s, longer than the rest of the results
 * together (2026-12-07). Strings are quoted by json-glib itself (json_text_quote);
 * tests/test_json_text.c checks the text against json-glib's on the same values. */
#ifndef ROCESIM_RESULTS_JSON_TEXT_H
#define ROCESIM_RESULTS_JSON_TEXT_H
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

struct json_text {
    GString *s;                /* the text, appended to */
    int base;                  /* the level of the value written */
    int level;                 /* base + the objects and arrays open */
    bool empty;                /* the innermost of them has no member or element yet */
    size_t n;                  /* text in buf not yet in s: appended in pieces of 4 KB, not
                                * a GString call for every name, comma and number */
    char buf[4096];
};

/* Starts writing one value into s (appended to what it holds), as json-glib prints a value
 * nested `level` deep: 0 for a document, 1 for a document's member (its first line goes on
 * the current line, after the member's name). The value is all in s once its outermost
 * object or array is closed (or, for a number or string, once written). */
void json_text_init(struct json_text *j, GString *s, int level);
/* Members take a name (plain ASCII: no quote, backslash or control character); elements of an
 * array take NULL. */
void json_text_begin_object(struct json_text *j, const char *name);
void json_text_end_object(struct json_text *j);
void json_text_begin_array(struct json_text *j, const char *name);
void json_text_end_array(struct json_text *j);
/* The length s will have once what is written so far is in it: where the next value's text
 * (its separator first) begins. */
size_t json_text_length(const struct json_text *j);
/* `quoted`: a string as json_text_quote returns it */
void json_text_quoted(struct json_text *j, const char *name, const char *quoted);
void json_text_int(struct json_text *j, const char *name, int64_t v);
void json_text_dbl(struct json_text *j, const char *name, double v);
/* s as a JSON string, quotes included, escaped as json-glib escapes it (g_free it) */
char *json_text_quote(const char *s);

#endif
