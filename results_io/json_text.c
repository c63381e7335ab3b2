/* JSON text as json-glib prints it (see json_text.h). */
#include "results_io/json_text.h"
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

void json_text_init(struct json_text *j, GString *s, int level)
{
    j->s = s;
    j->base = j->level = level;
    j->empty = false;
    j->n = 0;
}

static void flush(struct json_text *j)
{
    g_string_append_len(j->s, j->buf, (gssize)j->n);
    j->n = 0;
}

static void put(struct json_text *j, const char *t, size_t len)
{
    if (j->n + len > sizeof j->buf) {
        flush(j);
        if (len > sizeof j->buf) {
            g_string_append_len(j->s, t, (gssize)len);
            return;
        }
    }
    memcpy(j->buf + j->n, t, len);
    j->n += len;
}

/* the value is complete: into s */
static void done_if_outermost(struct json_text *j)
{
    if (j->level == j->base)
        flush(j);
}

static void indent(struct json_text *j, int level)
{
    static const char spaces[] = "                                ";
    for (; level > 16; level -= 16)
        put(j, spaces, 32);
    put(j, spaces, 2 * (size_t)level);
}

/* A member or element starts on a line of its own, after a comma if one came before it. */
static void start(struct json_text *j, const char *name)
{
    if (j->level > j->base) {
        if (j->empty)
            put(j, "\n", 1);
        else
            put(j, ",\n", 2);
        indent(j, j->level);
    }
    j->empty = false;
    if (name) {
        put(j, "\"", 1);
        put(j, name, strlen(name));
        put(j, "\" : ", 4);
    }
}

static void open_(struct json_text *j, const char *name, char c)
{
    start(j, name);
    put(j, &c, 1);
    j->level++;
    j->empty = true;
}

/* json-glib closes an empty object with two spaces inside, "{  }", and an empty array with
 * none, "[]" */
static void close_(struct json_text *j, char c)
{
    j->level--;
    if (j->empty) {
        if (c == '}')
            put(j, "  }", 3);
        else
            put(j, "]", 1);
    } else {
        put(j, "\n", 1);
        indent(j, j->level);
        put(j, &c, 1);
    }
    j->empty = false;
    done_if_outermost(j);
}

size_t json_text_length(const struct json_text *j) { return j->s->len + j->n; }

void json_text_begin_object(struct json_text *j, const char *name) { open_(j, name, '{'); }
void json_text_end_object(struct json_text *j) { close_(j, '}'); }
void json_text_begin_array(struct json_text *j, const char *name) { open_(j, name, '['); }
void json_text_end_array(struct json_text *j) { close_(j, ']'); }

void json_text_quoted(struct json_text *j, const char *name, const char *quoted)
{
    start(j, name);
    put(j, quoted, strlen(quoted));
    done_if_outermost(j);
}

/* json-glib prints "%" G_GINT64_FORMAT; the digits here are the same without printf, which
 * parses its format for every number */
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
    put(j, d, (size_t)(e - d));
    done_if_outermost(j);
}

/* json-glib (1.6): g_ascii_dtostr ("%.17g") and ".0" when that has no '.', even after an
 * exponent ("1e-300.0", which JSON readers refuse; so are inf and nan: no figure here is
 * either, and what json-glib printed before is what is printed now) */
void json_text_dbl(struct json_text *j, const char *name, double v)
{
    start(j, name);
    if (v == 0 && !signbit(v)) { /* most ports' paused_fraction: no printf */
        put(j, "0.0", 3);
    } else {
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        g_ascii_dtostr(buf, sizeof buf, v);
        put(j, buf, strlen(buf));
        if (!strchr(buf, '.'))
            put(j, ".0", 2);
    }
    done_if_outermost(j);
}

/* Printable ASCII but the quote and the backslash is printed as it is (a node's name: host3,
 * leaf0); the rest goes through json-glib, whose generator for each string cost 1.2 us, 21 ms
 * of the 16384-host summary's 17 K names (2026-12-07). */
char *json_text_quote(const char *s)
{
    size_t len = 0;
    while (s[len] >= 0x20 && s[len] < 0x7f && s[len] != '"' && s[len] != '\\')
        len++;
    if (!s[len]) {
        char *q = g_malloc(len + 3);
        q[0] = '"';
        memcpy(q + 1, s, len);
        q[len + 1] = '"';
        q[len + 2] = 0;
        return q;
    }
    JsonNode *n = json_node_init_string(json_node_alloc(), s);
    char *q = json_to_string(n, FALSE);
    json_node_unref(n);
    return q;
}
