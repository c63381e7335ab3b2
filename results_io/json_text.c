/* JSON text as json-glib prints it (see json_text.h). */
#include "results_io/json_text.h"
#include <json-glib/json-glib.h>
#include <string.h>

void json_text_init(struct json_text *j, GString *s, int level)
{
    *j = (struct json_text){ .s = s, .base = level, .level = level, .empty = false };
}

static void indent(GString *s, int level)
{
    static const char spaces[] = "                                ";
    for (; level > 16; level -= 16)
        g_string_append_len(s, spaces, 32);
    g_string_append_len(s, spaces, 2 * level);
}

/* A member or element starts on a line of its own, after a comma if one came before it. */
static void start(struct json_text *j, const char *name)
{
    if (j->level > j->base) {
        g_string_append(j->s, j->empty ? "\n" : ",\n");
        indent(j->s, j->level);
    }
    j->empty = false;
    if (name) {
        g_string_append_c(j->s, '"');
        g_string_append(j->s, name);
        g_string_append_len(j->s, "\" : ", 4);
    }
}

static void open_(struct json_text *j, const char *name, char c)
{
    start(j, name);
    g_string_append_c(j->s, c);
    j->level++;
    j->empty = true;
}

/* json-glib closes an empty object with two spaces inside, "{  }", and an empty array with
 * none, "[]" */
static void close_(struct json_text *j, char c)
{
    j->level--;
    if (j->empty) {
        g_string_append(j->s, c == '}' ? "  }" : "]");
    } else {
        g_string_append_c(j->s, '\n');
        indent(j->s, j->level);
        g_string_append_c(j->s, c);
    }
    j->empty = false;
}

void json_text_begin_object(struct json_text *j, const char *name) { open_(j, name, '{'); }
void json_text_end_object(struct json_text *j) { close_(j, '}'); }
void json_text_begin_array(struct json_text *j, const char *name) { open_(j, name, '['); }
void json_text_end_array(struct json_text *j) { close_(j, ']'); }

void json_text_quoted(struct json_text *j, const char *name, const char *quoted)
{
    start(j, name);
    g_string_append(j->s, quoted);
}

/* json-glib prints "%" G_GINT64_FORMAT; the digits here are the same without printf (a third
 * of the ports' text time at 16384 hosts was printf) */
void json_text_int(struct json_text *j, const char *name, int64_t v)
{
    start(j, name);
    char buf[24], *e = buf + sizeof buf, *d = e;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        *--d = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--d = '-';
    g_string_append_len(j->s, d, e - d);
}

/* json-glib (1.6): g_ascii_dtostr ("%.17g") and ".0" when that has no '.', even after an
 * exponent ("1e-300.0", which JSON readers refuse; so are inf and nan: no figure here is
 * either, and what json-glib printed before is what is printed now) */
void json_text_dbl(struct json_text *j, const char *name, double v)
{
    start(j, name);
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_dtostr(buf, sizeof buf, v);
    g_string_append(j->s, buf);
    if (!strchr(buf, '.'))
        g_string_append(j->s, ".0");
}

char *json_text_quote(const char *s)
{
    JsonNode *n = json_node_init_string(json_node_alloc(), s);
    char *q = json_to_string(n, FALSE);
    json_node_unref(n);
    return q;
}
