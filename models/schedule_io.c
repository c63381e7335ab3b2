/* Schedule file reader, writer and validator; the format is described in schedule_io.h. */
#include "models/schedule_io.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

G_DEFINE_QUARK(rocesim-schedule-io-error-quark, schedule_io_error)

static const char *const transfer_cols[] = { "id", "src", "dst", "bytes", "prio", "qp",
                                             "delay_ps", "deps", "job", "coll", "channel" };
#define NCOLS G_N_ELEMENTS(transfer_cols)
static const char *const job_cols[] = { "job", "index", "name", "op", "algorithm", "ranks" };
static const char *const coll_cols[] = { "coll", "index", "job", "iteration", "bytes", "first",
                                         "count" };

/* ---- writing ---- */

static gboolean write_file(const struct schedule *s, const GArray *qps, const uint32_t *qp_of,
                           const char *path, GError **err);

/* Names are single fields: percent-encode separators, controls and '%'; '-' means empty. */
static void put_name(FILE *f, const char *s)
{
    if (!s || !*s) {
        fputc('-', f);
        return;
    }
    if (strcmp(s, "-") == 0) {
        fputs("%2D", f);
        return;
    }
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p <= 0x20 || *p == 0x7f || *p == '%')
            fprintf(f, "%%%02X", *p);
        else
            fputc(*p, f);
    }
}

static void put_index(FILE *f, uint32_t v)
{
    if (v == SCHEDULE_NO_JOB)
        fputc('-', f);
    else
        fprintf(f, "%u", v);
}

static void write_meta(const struct sched_meta *m, FILE *f)
{
    if (!m->present)
        return;
    fprintf(f, "meta hosts %u\nmeta mtu %u\nmeta host_rate_bps %" G_GUINT64_FORMAT "\nmeta dscp ",
            m->hosts, m->mtu, m->host_rate_bps);
    for (int p = 0; p < 8; p++)
        fprintf(f, p ? ",%u" : "%u", m->dscp[p]);
    fprintf(f, "\nmeta topology %s\n", m->topology && *m->topology ? m->topology : "-");
}

static void write_rows(const struct schedule *s, const GArray *qps, const uint32_t *qp_of, FILE *f)
{
    fputs(SCHEDULE_FILE_VERSION_LINE "\n", f);
    fputs("# meta hosts|mtu|host_rate_bps|dscp|topology <value>\n", f);
    fputs("# qp <index> <src> <dst> <prio> <sport>\n", f);
    fputs("# job <index> <name> <op> <algorithm> <ranks>\n", f);
    fputs("# coll <index> <job> <iteration> <bytes> <first> <count>\n", f);
    fputs("#", f);
    for (size_t i = 0; i < NCOLS; i++)
        fprintf(f, " %s", transfer_cols[i]);
    fputc('\n', f);
    write_meta(&s->meta, f);
    for (guint i = 0; i < qps->len; i++) {
        const struct sched_qp *q = &g_array_index(qps, struct sched_qp, i);
        fprintf(f, "qp %u %u %u %u %u\n", i, q->src, q->dst, q->prio, q->sport);
    }
    for (guint i = 0; i < s->jobs->len; i++) {
        const struct sched_job *j = &g_array_index(s->jobs, struct sched_job, i);
        fprintf(f, "job %u ", i);
        put_name(f, j->name);
        fputc(' ', f);
        put_name(f, j->op);
        fputc(' ', f);
        put_name(f, j->algorithm);
        fprintf(f, " %u\n", j->ranks);
    }
    for (guint i = 0; i < s->colls->len; i++) {
        const struct sched_coll *c = &g_array_index(s->colls, struct sched_coll, i);
        fprintf(f, "coll %u %u %u %" G_GUINT64_FORMAT " %u %u\n", i, c->job, c->iteration,
                c->bytes, c->first, c->count);
    }
    for (uint32_t id = 0; id < schedule_count(s); id++) {
        const struct transfer *t = schedule_get(s, id);
        fprintf(f, "%u %u %u %" G_GUINT64_FORMAT " %u ", id, t->src, t->dst, t->bytes, t->prio);
        put_index(f, qp_of[id]);
        fprintf(f, " %" G_GUINT64_FORMAT " ", t->delay);
        if (t->ndeps == 0)
            fputc('-', f);
        const uint32_t *d = schedule_deps(s, t);
        for (uint32_t i = 0; i < t->ndeps; i++)
            fprintf(f, i ? ",%u" : "%u", d[i]);
        fputc(' ', f);
        put_index(f, t->job);
        fputc(' ', f);
        put_index(f, t->coll);
        fprintf(f, " %u\n", t->channel);
    }
}

gboolean schedule_write(const struct schedule *s, const char *path, GError **err)
{
    GArray *qps = g_array_new(FALSE, FALSE, sizeof(struct sched_qp));
    uint32_t *qp_of = NULL;
    if (!schedule_derive_qps(s, qps, &qp_of, NULL, err)) {
        g_array_free(qps, TRUE);
        return FALSE;
    }
    gboolean ok = write_file(s, qps, qp_of, path, err);
    g_array_free(qps, TRUE);
    g_free(qp_of);
    return ok;
}

static gboolean write_file(const struct schedule *s, const GArray *qps, const uint32_t *qp_of,
                           const char *path, GError **err)
{
    char *tmp = g_strdup_printf("%s.tmp-XXXXXX", path);
    int fd = g_mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        g_set_error(err, SCHEDULE_IO_ERROR, SCHEDULE_IO_ERROR_IO,
                    "%s: cannot create a temporary file next to it: %s", path, g_strerror(e));
        g_free(tmp);
        return FALSE;
    }
    fchmod(fd, 0644); /* mkstemp makes it 0600; a schedule is meant to be shared */
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        unlink(tmp);
        g_set_error(err, SCHEDULE_IO_ERROR, SCHEDULE_IO_ERROR_IO, "%s: %s", path, g_strerror(e));
        g_free(tmp);
        return FALSE;
    }
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    write_rows(s, qps, qp_of, f);
    int e = 0;
    if (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0)
        e = errno ? errno : EIO;
    if (fclose(f) != 0 && !e)
        e = errno;
    if (!e && rename(tmp, path) != 0)
        e = errno;
    if (e) {
        unlink(tmp);
        g_set_error(err, SCHEDULE_IO_ERROR, SCHEDULE_IO_ERROR_IO, "%s: cannot write: %s", path,
                    g_strerror(e));
        g_free(tmp);
        return FALSE;
    }
    g_free(tmp);
    return TRUE;
}

/* ---- validation ---- */

/* Where a transfer came from, for messages: file and line, or nothing for an in-memory one. */
struct origin {
    const char *path;
    const GArray *tline, *cline, *jline; /* uint32_t line per transfer, coll, job */
};

static gboolean invalid(GError **err, const struct origin *o, const GArray *lines, uint32_t idx,
                        const char *fmt, ...) G_GNUC_PRINTF(5, 6);
static gboolean invalid(GError **err, const struct origin *o, const GArray *lines, uint32_t idx,
                        const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (o && o->path && lines && idx < lines->len)
        g_set_error(err, SCHEDULE_IO_ERROR, SCHEDULE_IO_ERROR_INVALID, "%s:%u: %s", o->path,
                    g_array_index(lines, uint32_t, idx), msg);
    else if (o && o->path)
        g_set_error(err, SCHEDULE_IO_ERROR, SCHEDULE_IO_ERROR_INVALID, "%s: %s", o->path, msg);
    else
        g_set_error(err, SCHEDULE_IO_ERROR, SCHEDULE_IO_ERROR_INVALID, "%s", msg);
    g_free(msg);
    return FALSE;
}

static char *index_str(uint32_t v)
{
    return v == SCHEDULE_NO_JOB ? g_strdup("-") : g_strdup_printf("%u", v);
}

#define TLINES(o) ((o) ? (o)->tline : NULL)
#define CLINES(o) ((o) ? (o)->cline : NULL)
#define JLINES(o) ((o) ? (o)->jline : NULL)

/* Kahn's algorithm; when some transfers never become ready, walk their unfinished
 * dependencies until one repeats and report that cycle. */
static gboolean check_acyclic(const struct schedule *s, const struct origin *o, GError **err)
{
    const uint32_t n = schedule_count(s);
    uint32_t *indeg = g_new(uint32_t, n ? n : 1);
    uint32_t *off = g_new0(uint32_t, n + 1); /* successors in CSR form */
    for (uint32_t id = 0; id < n; id++) {
        const struct transfer *t = schedule_get(s, id);
        indeg[id] = t->ndeps;
        const uint32_t *d = schedule_deps(s, t);
        for (uint32_t i = 0; i < t->ndeps; i++)
            off[d[i] + 1]++;
    }
    for (uint32_t id = 0; id < n; id++)
        off[id + 1] += off[id];
    uint32_t *succ = g_new(uint32_t, off[n] ? off[n] : 1);
    uint32_t *fill = g_memdup2(off, sizeof(uint32_t) * (n + 1));
    for (uint32_t id = 0; id < n; id++) {
        const struct transfer *t = schedule_get(s, id);
        const uint32_t *d = schedule_deps(s, t);
        for (uint32_t i = 0; i < t->ndeps; i++)
            succ[fill[d[i]]++] = id;
    }
    uint32_t *queue = fill; /* reused: n slots are enough */
    uint32_t head = 0, tail = 0;
    for (uint32_t id = 0; id < n; id++)
        if (indeg[id] == 0)
            queue[tail++] = id;
    while (head < tail) {
        uint32_t u = queue[head++];
        for (uint32_t k = off[u]; k < off[u + 1]; k++)
            if (--indeg[succ[k]] == 0)
                queue[tail++] = succ[k];
    }
    gboolean ok = tail == n;
    if (!ok) {
        /* Every transfer left over still waits for a left-over one, so the walk must loop. */
        uint32_t u = 0;
        while (indeg[u] == 0)
            u++;
        int32_t *seen = g_new(int32_t, n); /* position in the walk, or -1 */
        for (uint32_t i = 0; i < n; i++)
            seen[i] = -1;
        GArray *walk = g_array_new(FALSE, FALSE, sizeof(uint32_t));
        while (seen[u] < 0) {
            seen[u] = (int32_t)walk->len;
            g_array_append_val(walk, u);
            const struct transfer *t = schedule_get(s, u);
            const uint32_t *d = schedule_deps(s, t);
            uint32_t next = u;
            for (uint32_t i = 0; i < t->ndeps; i++)
                if (indeg[d[i]] > 0) {
                    next = d[i];
                    break;
                }
            u = next;
        }
        const uint32_t *cyc = &g_array_index(walk, uint32_t, (guint)seen[u]);
        uint32_t len = walk->len - (uint32_t)seen[u], low = 0;
        for (uint32_t i = 1; i < len; i++)
            if (cyc[i] < cyc[low])
                low = i;
        GString *g = g_string_new(NULL);
        for (uint32_t i = 0; i <= len && i <= 12; i++) {
            if (i == 12 && i < len) {
                g_string_append(g, " ...");
                break;
            }
            g_string_append_printf(g, i ? " waits for %u" : "%u", cyc[(low + i) % len]);
        }
        invalid(err, o, TLINES(o), cyc[low], "transfer %u is on a dependency cycle: %s",
                cyc[low], g->str);
        g_string_free(g, TRUE);
        g_array_free(walk, TRUE);
        g_free(seen);
    }
    g_free(indeg);
    g_free(off);
    g_free(succ);
    g_free(fill);
    return ok;
}

/* A QP has one service level: every transfer on it must have the same priority (the
 * simulator would otherwise send them all on the first one's). */
static gboolean check_one_prio_per_qp(const struct schedule *s, const struct origin *o,
                                      GError **err)
{
    GArray *qps = g_array_new(FALSE, FALSE, sizeof(struct sched_qp));
    GError *e = NULL;
    uint32_t bad = 0;
    gboolean ok = schedule_derive_qps(s, qps, NULL, &bad, &e);
    g_array_free(qps, TRUE);
    if (!ok) {
        invalid(err, o, TLINES(o), bad, "%s", e->message);
        g_error_free(e);
    }
    return ok;
}

static gboolean validate_impl(const struct schedule *s, uint32_t nhosts, const struct origin *o,
                              GError **err)
{
    if (nhosts == 0 && s->meta.present)
        nhosts = s->meta.hosts;
    const uint32_t n = schedule_count(s), njobs = s->jobs->len, ncolls = s->colls->len;
    for (uint32_t i = 0; i < njobs; i++) {
        const struct sched_job *j = &g_array_index(s->jobs, struct sched_job, i);
        if (!j->name || !*j->name)
            return invalid(err, o, JLINES(o), i, "job %u has no name", i);
        if (!j->op || !*j->op)
            return invalid(err, o, JLINES(o), i, "job %u (%s) has no op", i, j->name);
    }
    for (uint32_t i = 0; i < ncolls; i++) {
        const struct sched_coll *c = &g_array_index(s->colls, struct sched_coll, i);
        if (c->job >= njobs)
            return invalid(err, o, CLINES(o), i, "coll %u: job %u does not exist (%u jobs)", i,
                           c->job, njobs);
        if (c->count == 0 || c->first >= n || c->count > n - c->first)
            return invalid(err, o, CLINES(o), i,
                           "coll %u: first %u, count %u is not a non-empty range of the %u "
                           "transfers", i, c->first, c->count, n);
        for (uint32_t id = c->first; id < c->first + c->count; id++)
            if (schedule_get(s, id)->coll != i) {
                char *has = index_str(schedule_get(s, id)->coll);
                invalid(err, o, TLINES(o), id,
                        "transfer %u lies in coll %u's range (%u..%u) but its coll is %s", id, i,
                        c->first, c->first + c->count - 1, has);
                g_free(has);
                return FALSE;
            }
    }
    uint32_t *stamp = g_new0(uint32_t, n ? n : 1); /* id+1 of the transfer that last named it */
    gboolean ok = TRUE;
    for (uint32_t id = 0; id < n && ok; id++) {
        const struct transfer *t = schedule_get(s, id);
        const GArray *L = TLINES(o);
        if (nhosts && (t->src >= nhosts || t->dst >= nhosts))
            ok = invalid(err, o, L, id, "transfer %u: %s %u is not a host (hosts are 0..%u)", id,
                         t->src >= nhosts ? "src" : "dst", t->src >= nhosts ? t->src : t->dst,
                         nhosts - 1);
        else if (t->bytes > 0 && t->src == t->dst)
            ok = invalid(err, o, L, id,
                         "transfer %u: sends %" G_GUINT64_FORMAT " B from host %u to itself "
                         "(only markers, bytes 0, may have src = dst)", id, t->bytes, t->src);
        else if (t->prio > 7)
            ok = invalid(err, o, L, id, "transfer %u: prio %u is out of range (0..7)", id, t->prio);
        else if (t->job != SCHEDULE_NO_JOB && t->job >= njobs)
            ok = invalid(err, o, L, id, "transfer %u: job %u does not exist (%u jobs)", id, t->job,
                         njobs);
        else if (t->coll != SCHEDULE_NO_JOB && t->coll >= ncolls)
            ok = invalid(err, o, L, id, "transfer %u: coll %u does not exist (%u colls)", id,
                         t->coll, ncolls);
        else if (t->coll != SCHEDULE_NO_JOB) {
            const struct sched_coll *c = &g_array_index(s->colls, struct sched_coll, t->coll);
            if (id < c->first || id - c->first >= c->count)
                ok = invalid(err, o, L, id, "transfer %u: coll %u covers transfers %u..%u only",
                             id, t->coll, c->first, c->first + c->count - 1);
            else if (t->job != c->job) {
                char *has = index_str(t->job);
                ok = invalid(err, o, L, id, "transfer %u: job %s differs from its coll %u's job %u",
                             id, has, t->coll, c->job);
                g_free(has);
            }
        }
        if (!ok)
            break;
        if ((uint64_t)t->deps_off + t->ndeps > s->deps->len) {
            ok = invalid(err, o, L, id, "transfer %u: dependency list out of bounds", id);
            break;
        }
        const uint32_t *d = schedule_deps(s, t);
        for (uint32_t i = 0; i < t->ndeps && ok; i++) {
            if (d[i] >= n)
                ok = invalid(err, o, L, id,
                             "transfer %u: depends on transfer %u, which does not exist "
                             "(%u transfers)", id, d[i], n);
            else if (stamp[d[i]] == id + 1)
                ok = invalid(err, o, L, id, "transfer %u: depends on transfer %u twice", id, d[i]);
            else
                stamp[d[i]] = id + 1;
        }
    }
    g_free(stamp);
    return ok && check_one_prio_per_qp(s, o, err) && check_acyclic(s, o, err);
}

gboolean schedule_validate(const struct schedule *s, uint32_t nhosts, GError **err)
{
    return validate_impl(s, nhosts, NULL, err);
}

/* ---- reading ---- */

struct reader {
    const char *path;
    uint32_t line;
    int version;            /* 1 or 2, from the first line */
    GError **err;
};

static gboolean parse_error(struct reader *r, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static gboolean parse_error(struct reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(r->err, SCHEDULE_IO_ERROR, SCHEDULE_IO_ERROR_PARSE, "%s:%u: %s", r->path, r->line,
                msg);
    g_free(msg);
    return FALSE;
}

/* An unsigned decimal no larger than max. */
static gboolean parse_u64(struct reader *r, const char *field, const char *s, uint64_t max,
                          uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    if (!*p)
        return parse_error(r, "%s: empty, expected an unsigned integer", field);
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return parse_error(r, "%s: '%s' is not a number (expected an unsigned integer)",
                               field, s);
        unsigned dgt = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - dgt) / 10)
            return parse_error(r, "%s: '%s' is too large (at most %" G_GUINT64_FORMAT ")", field,
                               s, max);
        v = v * 10 + dgt;
    }
    if (v > max)
        return parse_error(r, "%s: %" G_GUINT64_FORMAT " is out of range (0..%" G_GUINT64_FORMAT
                           ")", field, v, max);
    *out = v;
    return TRUE;
}

static gboolean parse_u32(struct reader *r, const char *field, const char *s, uint32_t max,
                          uint32_t *out)
{
    uint64_t v;
    if (!parse_u64(r, field, s, max, &v))
        return FALSE;
    *out = (uint32_t)v;
    return TRUE;
}

/* A job or coll index, or '-' for none. */
static gboolean parse_index(struct reader *r, const char *field, const char *s, uint32_t *out)
{
    if (strcmp(s, "-") == 0) {
        *out = SCHEDULE_NO_JOB;
        return TRUE;
    }
    return parse_u32(r, field, s, SCHEDULE_NO_JOB - 1, out);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static char *parse_name(struct reader *r, const char *field, const char *s)
{
    if (strcmp(s, "-") == 0)
        return g_strdup("");
    GString *g = g_string_new(NULL);
    for (const char *p = s; *p; p++) {
        if (*p != '%') {
            g_string_append_c(g, *p);
            continue;
        }
        int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
            parse_error(r, "%s: bad escape in '%s' (expected %%XX with two hex digits, not %%00)",
                        field, s);
            g_string_free(g, TRUE);
            return NULL;
        }
        g_string_append_c(g, (char)(hi * 16 + lo));
        p += 2;
    }
    return g_string_free(g, FALSE);
}

#define MAX_FIELDS 16

/* Splits a line in place on spaces and tabs. Returns the field count (up to MAX_FIELDS + 1,
 * which means "too many"). */
static int split_fields(char *line, char **f)
{
    int n = 0;
    char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            return n;
        if (n == MAX_FIELDS + 1)
            return n;
        f[n++] = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if (*p)
            *p++ = '\0';
    }
}

static gboolean field_count(struct reader *r, const char *what, const char *const *cols, int ncols,
                            int n)
{
    if (n == ncols)
        return TRUE;
    GString *g = g_string_new(NULL);
    for (int i = 0; i < ncols; i++)
        g_string_append_printf(g, i ? " %s" : "%s", cols[i]);
    if (n < ncols)
        parse_error(r, "%s has %d fields, expected %d: missing %s (columns: %s)", what, n, ncols,
                    cols[n], g->str);
    else
        parse_error(r, "%s has %s%d fields, expected %d (columns: %s)", what,
                    n > MAX_FIELDS ? "more than " : "", n > MAX_FIELDS ? MAX_FIELDS : n, ncols,
                    g->str);
    g_string_free(g, TRUE);
    return FALSE;
}

static gboolean read_job(struct reader *r, struct schedule *s, char **f, int nf, GArray *jline)
{
    uint32_t idx, ranks;
    if (!field_count(r, "job line", job_cols, G_N_ELEMENTS(job_cols), nf) ||
        !parse_u32(r, "job index", f[1], UINT32_MAX - 1, &idx))
        return FALSE;
    if (idx != s->jobs->len)
        return parse_error(r, "job index %u out of order: expected %u (job lines count up from 0)",
                           idx, s->jobs->len);
    if (!parse_u32(r, "job ranks", f[5], UINT32_MAX, &ranks))
        return FALSE;
    char *name = parse_name(r, "job name", f[2]);
    char *op = name ? parse_name(r, "job op", f[3]) : NULL;
    char *algo = op ? parse_name(r, "job algorithm", f[4]) : NULL;
    if (algo)
        schedule_add_job(s, name, op, algo, ranks);
    gboolean ok = algo != NULL;
    g_free(name);
    g_free(op);
    g_free(algo);
    if (ok)
        g_array_append_val(jline, r->line);
    return ok;
}

static gboolean read_coll(struct reader *r, struct schedule *s, char **f, int nf, GArray *cline)
{
    struct sched_coll c;
    uint32_t idx;
    if (!field_count(r, "coll line", coll_cols, G_N_ELEMENTS(coll_cols), nf) ||
        !parse_u32(r, "coll index", f[1], UINT32_MAX - 1, &idx))
        return FALSE;
    if (idx != s->colls->len)
        return parse_error(r,
                           "coll index %u out of order: expected %u (coll lines count up from 0)",
                           idx, s->colls->len);
    if (!parse_u32(r, "coll job", f[2], UINT32_MAX - 1, &c.job) ||
        !parse_u32(r, "coll iteration", f[3], UINT32_MAX, &c.iteration) ||
        !parse_u64(r, "coll bytes", f[4], UINT64_MAX, &c.bytes) ||
        !parse_u32(r, "coll first", f[5], UINT32_MAX - 1, &c.first) ||
        !parse_u32(r, "coll count", f[6], UINT32_MAX, &c.count))
        return FALSE;
    g_array_append_val(s->colls, c);
    g_array_append_val(cline, r->line);
    return TRUE;
}

/* v2: the qp column names a qp line ('-' for a marker), whose ends and priority must be the
 * transfer's. The in-memory tag is then the QP index, which groups transfers the same way. */
static gboolean parse_qp_ref(struct reader *r, const struct schedule *s, const char *f,
                             struct transfer *t, uint32_t prio)
{
    if (strcmp(f, "-") == 0) {
        if (t->bytes != 0)
            return parse_error(r, "qp: '-' (no QP) is only for markers (bytes 0), this transfer "
                               "has %" G_GUINT64_FORMAT " bytes", t->bytes);
        t->qp = SCHEDULE_NO_QP;
        return TRUE;
    }
    if (!parse_u32(r, "qp", f, UINT32_MAX - 1, &t->qp))
        return FALSE;
    if (t->bytes == 0)
        return parse_error(r, "qp: a marker (bytes 0) uses no QP, expected '-', found %u", t->qp);
    if (t->qp >= s->qps->len)
        return parse_error(r, "qp %u has no qp line before it (%u qp lines so far)", t->qp,
                           s->qps->len);
    const struct sched_qp *q = &g_array_index(s->qps, struct sched_qp, t->qp);
    if (q->src != t->src || q->dst != t->dst || q->prio != prio)
        return parse_error(r, "qp %u is src %u dst %u prio %u, but this transfer is src %u dst %u "
                           "prio %u", t->qp, q->src, q->dst, q->prio, t->src, t->dst, prio);
    return TRUE;
}

static const char *const qp_cols[] = { "qp", "index", "src", "dst", "prio", "sport" };

static gboolean read_qp(struct reader *r, struct schedule *s, char **f, int nf)
{
    uint32_t idx, prio, sport;
    struct sched_qp q = { 0 };
    if (r->version < 2)
        return parse_error(r, "qp lines need a v2 schedule (this file says v1)");
    if (!field_count(r, "qp line", qp_cols, G_N_ELEMENTS(qp_cols), nf) ||
        !parse_u32(r, "qp index", f[1], UINT32_MAX - 1, &idx))
        return FALSE;
    if (idx != s->qps->len)
        return parse_error(r, "qp index %u out of order: expected %u (qp lines count up from 0)",
                           idx, s->qps->len);
    if (!parse_u32(r, "qp src", f[2], UINT32_MAX, &q.src) ||
        !parse_u32(r, "qp dst", f[3], UINT32_MAX, &q.dst) ||
        !parse_u32(r, "qp prio", f[4], 7, &prio) ||
        !parse_u32(r, "qp sport", f[5], 0xFFFF, &sport))
        return FALSE;
    if (sport < 0xC000)
        return parse_error(r, "qp sport: %u is outside the RoCEv2 entropy range 49152..65535",
                           sport);
    if (q.src == q.dst)
        return parse_error(r, "qp %u: src and dst are both host %u", idx, q.src);
    q.prio = (uint8_t)prio;
    q.sport = (uint16_t)sport;
    g_array_append_val(s->qps, q);
    return TRUE;
}

static gboolean read_meta(struct reader *r, struct schedule *s, char **f, int nf)
{
    struct sched_meta *m = &s->meta;
    uint32_t v;
    if (r->version < 2)
        return parse_error(r, "meta lines need a v2 schedule (this file says v1)");
    if (nf != 3)
        return parse_error(r, "meta line has %d fields, expected 3: meta KEY VALUE", nf);
    m->present = TRUE;
    if (!strcmp(f[1], "hosts"))
        return parse_u32(r, "meta hosts", f[2], UINT32_MAX, &m->hosts);
    if (!strcmp(f[1], "mtu")) {
        if (!parse_u32(r, "meta mtu", f[2], 65535, &m->mtu))
            return FALSE;
        return m->mtu ? TRUE : parse_error(r, "meta mtu: 0 is not a payload size (expected 1..65535)");
    }
    if (!strcmp(f[1], "host_rate_bps"))
        return parse_u64(r, "meta host_rate_bps", f[2], UINT64_MAX, &m->host_rate_bps);
    if (!strcmp(f[1], "topology")) {
        g_free(m->topology);
        m->topology = g_strdup(strcmp(f[2], "-") ? f[2] : "");
        return TRUE;
    }
    if (!strcmp(f[1], "dscp")) {
        char **d = g_strsplit(f[2], ",", -1);
        gboolean ok = g_strv_length(d) == 8;
        if (!ok)
            parse_error(r, "meta dscp: '%s' has %u values, expected 8 (the DSCP of priorities 0..7, "
                        "comma-separated)", f[2], g_strv_length(d));
        for (int p = 0; ok && p < 8; p++)
            if ((ok = parse_u32(r, "meta dscp", d[p], 63, &v)))
                m->dscp[p] = (uint8_t)v;
        g_strfreev(d);
        return ok;
    }
    return parse_error(r, "unknown meta key '%.40s' (expected hosts, mtu, host_rate_bps, dscp or "
                       "topology)", f[1]);
}

static gboolean read_transfer(struct reader *r, struct schedule *s, char **f, int nf,
                              GArray *deps, GArray *tline)
{
    struct transfer t = { 0 };
    uint32_t id, prio, channel;
    if (!field_count(r, "transfer row", transfer_cols, NCOLS, nf) ||
        !parse_u32(r, "id", f[0], UINT32_MAX - 1, &id))
        return FALSE;
    if (id != schedule_count(s))
        return parse_error(r, "id %u out of order: expected %u (ids count up from 0, one per row)",
                           id, schedule_count(s));
    if (!parse_u32(r, "src", f[1], UINT32_MAX, &t.src) ||
        !parse_u32(r, "dst", f[2], UINT32_MAX, &t.dst) ||
        !parse_u64(r, "bytes", f[3], UINT64_MAX, &t.bytes) ||
        !parse_u32(r, "prio", f[4], 7, &prio) ||
        !(r->version == 1 ? parse_u32(r, "qp", f[5], UINT32_MAX, &t.qp)
                          : parse_qp_ref(r, s, f[5], &t, prio)) ||
        !parse_u64(r, "delay_ps", f[6], UINT64_MAX, &t.delay))
        return FALSE;
    t.prio = (uint8_t)prio;
    g_array_set_size(deps, 0);
    if (strcmp(f[7], "-") != 0) {
        char *p = f[7];
        for (;;) {
            char *comma = strchr(p, ',');
            if (comma)
                *comma = '\0';
            uint32_t d;
            if (!parse_u32(r, "deps", p, UINT32_MAX - 1, &d))
                return FALSE;
            g_array_append_val(deps, d);
            if (!comma)
                break;
            p = comma + 1;
        }
    }
    if (!parse_index(r, "job", f[8], &t.job) || !parse_index(r, "coll", f[9], &t.coll) ||
        !parse_u32(r, "channel", f[10], UINT16_MAX, &channel))
        return FALSE;
    t.channel = (uint16_t)channel;
    schedule_add(s, &t, (const uint32_t *)deps->data, deps->len);
    g_array_append_val(tline, r->line);
    return TRUE;
}

static gboolean check_version(struct reader *r, const char *line)
{
    static const char prefix[] = "# rocesim-schedule ";
    if (strcmp(line, SCHEDULE_FILE_VERSION_LINE) == 0) {
        r->version = 2;
        return TRUE;
    }
    if (strcmp(line, SCHEDULE_FILE_VERSION_LINE_V1) == 0) {
        r->version = 1;
        return TRUE;
    }
    if (strncmp(line, prefix, sizeof prefix - 1) == 0)
        return parse_error(r, "unsupported schedule version '%s' (this rocesim reads 'v1' and '%s')",
                           line + sizeof prefix - 1, &SCHEDULE_FILE_VERSION_LINE[sizeof prefix - 1]);
    return parse_error(r, "not a rocesim schedule: the first line must be '%s', found '%.60s%s'",
                       SCHEDULE_FILE_VERSION_LINE, line, strlen(line) > 60 ? "..." : "");
}

struct schedule *schedule_read(const char *path, uint32_t nhosts, GError **err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        int e = errno;
        g_set_error(err, SCHEDULE_IO_ERROR, SCHEDULE_IO_ERROR_IO, "%s: cannot open: %s", path,
                    g_strerror(e));
        return NULL;
    }
    struct reader r = { .path = path, .line = 0, .err = err };
    struct schedule *s = schedule_new();
    GArray *deps = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    GArray *tline = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    GArray *cline = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    GArray *jline = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    gboolean ok = TRUE;
    while (ok && (len = getline(&line, &cap, f)) >= 0) {
        r.line++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
                           line[len - 1] == ' ' || line[len - 1] == '\t'))
            line[--len] = '\0';
        if ((size_t)len != strlen(line)) {
            ok = parse_error(&r, "the line contains a NUL byte");
            break;
        }
        if (r.line == 1) {
            ok = check_version(&r, line);
            continue;
        }
        char *fl[MAX_FIELDS + 1];
        int nf = split_fields(line, fl);
        if (nf == 0 || fl[0][0] == '#')
            continue;
        if (strcmp(fl[0], "job") == 0)
            ok = read_job(&r, s, fl, nf, jline);
        else if (strcmp(fl[0], "coll") == 0)
            ok = read_coll(&r, s, fl, nf, cline);
        else if (strcmp(fl[0], "qp") == 0)
            ok = read_qp(&r, s, fl, nf);
        else if (strcmp(fl[0], "meta") == 0)
            ok = read_meta(&r, s, fl, nf);
        else if (fl[0][0] >= '0' && fl[0][0] <= '9')
            ok = read_transfer(&r, s, fl, nf, deps, tline);
        else
            ok = parse_error(&r, "unknown line '%.40s': expected a transfer row (starting with "
                             "its id), a 'meta', 'qp', 'job' or 'coll' line, or a '#' comment", fl[0]);
    }
    if (ok && ferror(f)) {
        int e = errno;
        g_set_error(err, SCHEDULE_IO_ERROR, SCHEDULE_IO_ERROR_IO, "%s: read error: %s", path,
                    g_strerror(e));
        ok = FALSE;
    }
    if (ok && r.line == 0) {
        g_set_error(err, SCHEDULE_IO_ERROR, SCHEDULE_IO_ERROR_PARSE,
                    "%s: empty file, expected '%s' as the first line", path,
                    SCHEDULE_FILE_VERSION_LINE);
        ok = FALSE;
    }
    free(line);
    fclose(f);
    if (ok) {
        struct origin o = { .path = path, .tline = tline, .cline = cline, .jline = jline };
        ok = validate_impl(s, nhosts, &o, err);
        /* v1 has no qp lines: the QPs are the simulator's (validation checked priorities) */
        if (ok && r.version == 1)
            ok = schedule_derive_qps(s, s->qps, NULL, NULL, err);
        else if (ok)
            schedule_number_qps(s->qps);
    }
    g_array_free(deps, TRUE);
    g_array_free(tline, TRUE);
    g_array_free(cline, TRUE);
    g_array_free(jline, TRUE);
    if (!ok) {
        schedule_free(s);
        return NULL;
    }
    return s;
}
