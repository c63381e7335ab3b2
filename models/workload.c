/* Traffic patterns: incast, permutation, a flow list from CSV, and (through
 * models/collective) NCCL-style collectives. Each workload is one job in the schedule. */
#include "models/workload.h"
#include "models/collective.h"
#include "models/collective_hier.h"
#include "models/gdr_staging.h"
#include "models/workload_train.h"
#include "models/schedule_io.h"
#include <errno.h>
#include <string.h>
#include "sim/rng.h"
#include "sim/units.h"

/* The keys of a [workload NAME] per kind (sim/config.h struct cfg_kind); the kinds are built below. */
const struct cfg_kind workload_kinds[] = {
    { "*", "kind! prio start after" },
    { "incast", "senders! receiver! size!" },
    { "permutation", "hosts! size!" },
    { "flows", "file!" },
    { "schedule", "file!" },
    { "allreduce", "ranks! size! algorithm chunk channels iterations compute" },
    { "allgather", "ranks! size! algorithm chunk channels iterations compute" },
    { "reducescatter", "ranks! size! algorithm chunk channels iterations compute" },
    { "broadcast", "ranks! size! algorithm chunk channels iterations compute root" },
    { "alltoall", "ranks! size! algorithm chunk channels iterations compute" },
    { "sendrecv", "ranks! size! algorithm chunk channels iterations compute peer" },
    { "train", "ranks tp pp dp ep microbatches layers hidden seq batch dtype_bytes activation_bytes layer_params "
               "bucket fsdp fwd bwd" },
    { NULL, NULL },
};

struct wl_ctx {
    const struct scenario *sc;
    const struct topology *topo;
    struct schedule *sched;
    const struct named_section *w;
    char *group;               /* "workload NAME" for messages */
    uint32_t index;            /* workload number: part of the QP tag */
    uint8_t prio;
    simtime_t start;
    GArray *after;             /* transfer ids the roots wait for */
    GArray *job_of;            /* workload number -> its (first) job */
};

static const char *wl_get(const struct wl_ctx *c, const char *key)
{
    return g_hash_table_lookup(c->w->keys, key);
}

static gboolean wl_size(const struct wl_ctx *c, const char *key, uint64_t *out, GError **err)
{
    char *why = NULL;
    if (!units_parse_size(wl_get(c, key), out, &why)) {
        g_set_error(err, SCENARIO_ERROR, 1, "%s: [%s] %s: %s", c->sc->path, c->group, key, why);
        g_free(why);
        return FALSE;
    }
    if (*out == 0) {
        scenario_key_error(err, c->sc, c->group, key, wl_get(c, key), "expected a positive size");
        return FALSE;
    }
    if (*out > SCHEDULE_MAX_TRANSFER_BYTES) {
        scenario_key_error(err, c->sc, c->group, key, wl_get(c, key), "at most 16TiB");
        return FALSE;
    }
    return TRUE;
}

static gboolean wl_hosts(const struct wl_ctx *c, const char *key, struct hostlist *out, GError **err)
{
    char *why = NULL;
    if (c->topo->servers) { /* ranks are GPUs: server:gpu lists */
        out->ids = hier_parse_gpus(c->topo, wl_get(c, key), &out->n, &why);
        if (out->ids)
            return TRUE;
        scenario_key_error(err, c->sc, c->group, key, wl_get(c, key), "%s", why);
        g_free(why);
        return FALSE;
    }
    if (!hostlist_parse(wl_get(c, key), c->topo->nhosts, out, &why)) {
        scenario_key_error(err, c->sc, c->group, key, wl_get(c, key), "%s", why);
        g_free(why);
        return FALSE;
    }
    return TRUE;
}

/* Adds one root transfer of this workload (waiting for `after`, then `delay`). */
static uint32_t wl_add(struct wl_ctx *c, uint32_t job, uint32_t src, uint32_t dst, uint64_t bytes,
                       simtime_t start, uint32_t qp_tag)
{
    struct transfer t = { .src = src, .dst = dst, .bytes = bytes, .prio = c->prio,
                          .qp = (c->index << 20) | qp_tag, .delay = start, .job = job,
                          .coll = SCHEDULE_NO_JOB };
    return schedule_add(c->sched, &t, (const uint32_t *)c->after->data, c->after->len);
}

static gboolean build_incast(struct wl_ctx *c, GError **err)
{
    struct hostlist senders;
    uint64_t size;
    if (!wl_hosts(c, "senders", &senders, err))
        return FALSE;
    const char *rv = wl_get(c, "receiver");
    struct hostlist recv;
    char *why = NULL;
    if (!hostlist_parse(rv, c->topo->nhosts, &recv, &why) || recv.n != 1) {
        scenario_key_error(err, c->sc, c->group, "receiver", rv, "%s", why ? why : "expected one host");
        g_free(why);
        hostlist_clear(&recv);
        hostlist_clear(&senders);
        return FALSE;
    }
    uint32_t r = recv.ids[0];
    hostlist_clear(&recv);
    for (uint32_t i = 0; i < senders.n; i++)
        if (senders.ids[i] == r) {
            scenario_key_error(err, c->sc, c->group, "senders", wl_get(c, "senders"),
                               "the receiver (host %u) cannot also be a sender", r);
            hostlist_clear(&senders);
            return FALSE;
        }
    if (!wl_size(c, "size", &size, err)) {
        hostlist_clear(&senders);
        return FALSE;
    }
    uint32_t job = schedule_add_job(c->sched, c->w->name, "incast", "", senders.n + 1);
    for (uint32_t i = 0; i < senders.n; i++)
        wl_add(c, job, senders.ids[i], r, size, c->start, 0);
    hostlist_clear(&senders);
    return TRUE;
}

static gboolean build_permutation(struct wl_ctx *c, GError **err)
{
    struct hostlist hosts;
    uint64_t size;
    if (!wl_hosts(c, "hosts", &hosts, err))
        return FALSE;
    if (hosts.n < 2) {
        scenario_key_error(err, c->sc, c->group, "hosts", wl_get(c, "hosts"), "a permutation needs at least 2 hosts");
        hostlist_clear(&hosts);
        return FALSE;
    }
    if (!wl_size(c, "size", &size, err)) {
        hostlist_clear(&hosts);
        return FALSE;
    }
    /* A random derangement (no host sends to itself): Sattolo's algorithm gives a single
     * cycle, which is a derangement, drawn from the workload's own random stream. */
    struct rng rng;
    rng_init(&rng, c->sc->seed, RNG_STREAM_WORKLOAD + c->index);
    uint32_t *perm = g_new(uint32_t, hosts.n);
    for (uint32_t i = 0; i < hosts.n; i++)
        perm[i] = i;
    for (uint32_t i = hosts.n - 1; i > 0; i--) {
        uint32_t j = (uint32_t)rng_below(&rng, i);
        uint32_t tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
    uint32_t job = schedule_add_job(c->sched, c->w->name, "permutation", "", hosts.n);
    for (uint32_t i = 0; i < hosts.n; i++)
        wl_add(c, job, hosts.ids[i], hosts.ids[perm[i]], size, c->start, 0);
    g_free(perm);
    hostlist_clear(&hosts);
    return TRUE;
}

static char *resolve_path(const struct scenario *sc, const char *file)
{
    return g_path_is_absolute(file) ? g_strdup(file) : g_build_filename(sc->dir, file, NULL);
}

static gboolean parse_host_field(const char *text, uint32_t nhosts, uint32_t *out)
{
    char *end;
    errno = 0;
    if (!text || !g_ascii_isdigit(*text))
        return FALSE;
    guint64 v = g_ascii_strtoull(text, &end, 10);
    if (errno || *end || v >= nhosts)
        return FALSE;
    *out = (uint32_t)v;
    return TRUE;
}

/* flows file: CSV with header src,dst,bytes,start; sizes and times carry units. */
static gboolean build_flows(struct wl_ctx *c, GError **err)
{
    char *path = resolve_path(c->sc, wl_get(c, "file"));
    char *text = NULL;
    GError *e = NULL;
    if (!g_file_get_contents(path, &text, NULL, &e)) {
        scenario_key_error(err, c->sc, c->group, "file", wl_get(c, "file"), "cannot read: %s", e->message);
        g_error_free(e);
        g_free(path);
        return FALSE;
    }
    /* a UTF-8 byte order mark (spreadsheet exports) is invisible in a message: skip it */
    const char *body = g_str_has_prefix(text, "\xEF\xBB\xBF") ? text + 3 : text;
    char **lines = g_strsplit(body, "\n", -1);
    g_free(text);
    gboolean ok = TRUE;
    uint32_t job = SCHEDULE_NO_JOB, count = 0;
    int header_seen = 0;
    for (int ln = 0; lines[ln] && ok; ln++) {
        char *line = g_strstrip(lines[ln]);
        if (!*line || line[0] == '#')
            continue;
        if (!header_seen) {
            if (strcmp(line, "src,dst,bytes,start") != 0) {
                g_set_error(err, SCENARIO_ERROR, 1, "%s:%d: expected the header 'src,dst,bytes,start', found '%s'",
                            path, ln + 1, line);
                ok = FALSE;
            }
            header_seen = 1;
            job = schedule_add_job(c->sched, c->w->name, "flows", "", 0);
            continue;
        }
        char **f = g_strsplit(line, ",", -1);
        guint nf = g_strv_length(f);
        uint32_t src, dst;
        uint64_t bytes;
        simtime_t start;
        char *why = NULL;
        if (nf != 4) {
            g_set_error(err, SCENARIO_ERROR, 1, "%s:%d: expected 4 fields src,dst,bytes,start, found %u", path, ln + 1, nf);
            ok = FALSE;
        } else if (!parse_host_field(g_strstrip(f[0]), c->topo->nhosts, &src) ||
                   !parse_host_field(g_strstrip(f[1]), c->topo->nhosts, &dst)) {
            g_set_error(err, SCENARIO_ERROR, 1, "%s:%d: src '%s' / dst '%s': expected host numbers from 0 to %u",
                        path, ln + 1, f[0], f[1], c->topo->nhosts - 1);
            ok = FALSE;
        } else if (src == dst) {
            g_set_error(err, SCENARIO_ERROR, 1, "%s:%d: src and dst are both host %u", path, ln + 1, src);
            ok = FALSE;
        } else if (!units_parse_size(g_strstrip(f[2]), &bytes, &why) || bytes == 0 ||
                   bytes > SCHEDULE_MAX_TRANSFER_BYTES) {
            g_set_error(err, SCENARIO_ERROR, 1, "%s:%d: bytes: %s", path, ln + 1,
                        why ? why : bytes ? "at most 16TiB per flow" : "expected a positive size");
            ok = FALSE;
        } else if (!units_parse_time(g_strstrip(f[3]), &start, &why)) {
            g_set_error(err, SCENARIO_ERROR, 1, "%s:%d: start: %s", path, ln + 1, why);
            ok = FALSE;
        } else if (start > SIMTIME_NEVER - 1 - c->start) {
            g_set_error(err, SCENARIO_ERROR, 1,
                        "%s:%d: start: '%s' after the workload's start is past the end of simulated time "
                        "(2^64 ps, about 213 days)", path, ln + 1, f[3]);
            ok = FALSE;
        } else {
            wl_add(c, job, src, dst, bytes, c->start + start, count++);
        }
        g_free(why);
        g_strfreev(f);
    }
    if (ok && count == 0) {
        g_set_error(err, SCENARIO_ERROR, 1, "%s: no flows: expected the header src,dst,bytes,start and one line per flow", path);
        ok = FALSE;
    }
    g_strfreev(lines);
    g_free(path);
    return ok;
}

static gboolean wl_uint(const struct wl_ctx *c, const char *key, uint64_t min, uint64_t max, uint32_t *out,
                        GError **err)
{
    const char *v = wl_get(c, key);
    if (!v)
        return TRUE;
    char *end;
    errno = 0;
    guint64 x = g_ascii_strtoull(v, &end, 10);
    if (!*v || !g_ascii_isdigit(*v) || *end || errno || x < min || x > max) {
        scenario_key_error(err, c->sc, c->group, key, v, "expected a whole number from %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT,
                           min, max);
        return FALSE;
    }
    *out = (uint32_t)x;
    return TRUE;
}

/* allreduce, allgather, reducescatter, broadcast, alltoall, sendrecv (models/collective). */
static gboolean build_collective(struct wl_ctx *c, GError **err)
{
    struct collective_spec spec;
    collective_spec_init(&spec);
    GError *e = NULL;
    char *key = g_strdup_printf("%s: [%s] kind", c->sc->path, c->group);
    gboolean ok = collective_op_parse(c->w->kind, key, &spec.op, &e);
    g_free(key);
    if (!ok)
        goto cerr;
    spec.algorithm = collective_default_algo(spec.op);
    if (wl_get(c, "algorithm")) {
        key = g_strdup_printf("%s: [%s] algorithm", c->sc->path, c->group);
        ok = collective_algo_parse(wl_get(c, "algorithm"), key, &spec.algorithm, &e);
        g_free(key);
        if (!ok)
            goto cerr;
    }
    struct hostlist ranks;
    if (!wl_hosts(c, "ranks", &ranks, err))
        return FALSE;
    spec.name = c->w->name;
    spec.ranks = ranks.ids;
    spec.nranks = ranks.n;
    spec.prio = c->prio;
    spec.start = c->start;
    spec.after = (const uint32_t *)c->after->data;
    spec.nafter = c->after->len;
    char *why = NULL;
    const char *v;
    ok = wl_size(c, "size", &spec.size, err);
    if (ok && (v = wl_get(c, "chunk")) && (!units_parse_size(v, &spec.chunk, &why) || spec.chunk == 0)) {
        scenario_key_error(err, c->sc, c->group, "chunk", v, "%s", why ? why : "expected a positive size");
        ok = FALSE;
    }
    if (ok && (v = wl_get(c, "compute")) && !units_parse_time(v, &spec.compute, &why)) {
        scenario_key_error(err, c->sc, c->group, "compute", v, "%s", why);
        ok = FALSE;
    }
    g_free(why);
    ok = ok && wl_uint(c, "channels", 1, COLLECTIVE_MAX_CHANNELS, &spec.channels, err) &&
         wl_uint(c, "iterations", 1, 1000000, &spec.iterations, err) &&
         wl_uint(c, "root", 0, ranks.n ? ranks.n - 1 : 0, &spec.root, err) &&
         wl_uint(c, "peer", 0, ranks.n ? ranks.n - 1 : 0, &spec.peer, err);
    /* the tree shrinks its chunk for small sizes as NCCL does, unless the scenario sets one */
    if (ok && spec.algorithm == COLL_ALGO_TREE && !wl_get(c, "chunk"))
        spec.chunk = collective_tree_chunk(spec.size, spec.channels, spec.nranks);
    /* GPUs of several servers: NCCL's rings, one channel per NIC unless `channels` says */
    uint32_t *ring = NULL;
    int *tparent = NULL, *tchild = NULL;
    if (ok && c->topo->servers && hier_spans_servers(c->topo, ranks.ids, ranks.n)) {
        if (!wl_get(c, "channels"))
            spec.channels = c->topo->nics_per_server;
        if (spec.algorithm == COLL_ALGO_RING)
            spec.ring_order = ring = hier_ring_order(c->topo, ranks.ids, ranks.n, spec.channels);
        if (spec.algorithm == COLL_ALGO_TREE) {
            hier_tree(c->topo, ranks.ids, ranks.n, spec.channels, &tparent, &tchild);
            spec.tree_parent = tparent;
            spec.tree_child = tchild;
        }
    }
    if (ok && !collective_build(c->sched, &spec, &e)) {
        g_free(ring);
        g_free(tparent);
        g_free(tchild);
        hostlist_clear(&ranks);
        goto cerr;
    }
    if (ok) {
        /* what the scenario left out, as resolved here */
        GString *d = g_string_new(NULL);
        char b[32];
        if (!wl_get(c, "algorithm"))
            g_string_append_printf(d, "algorithm = %s\n", collective_algo_name(spec.algorithm));
        if (!wl_get(c, "chunk"))
            g_string_append_printf(d, "chunk = %s%s\n", units_format_size(spec.chunk, b, sizeof b),
                                   spec.algorithm == COLL_ALGO_TREE ? "   (NCCL's tree rule for this size)" : "");
        if (!wl_get(c, "channels"))
            g_string_append_printf(d, "channels = %u\n", spec.channels);
        if (!wl_get(c, "iterations"))
            g_string_append_printf(d, "iterations = %u\n", spec.iterations);
        if (!wl_get(c, "compute"))
            g_string_append_printf(d, "compute = %s\n", units_format_time(spec.compute, b, sizeof b));
        if (spec.op == COLL_BROADCAST && !wl_get(c, "root"))
            g_string_append_printf(d, "root = %u\n", spec.root);
        if (spec.op == COLL_SENDRECV && !wl_get(c, "peer"))
            g_string_append_printf(d, "peer = %u\n", spec.peer);
        struct sched_job *j = &g_array_index(c->sched->jobs, struct sched_job, c->sched->jobs->len - 1);
        g_free(j->defaults);
        j->defaults = g_string_free(d, FALSE);
    }
    g_free(ring);
    g_free(tparent);
    g_free(tchild);
    hostlist_clear(&ranks);
    return ok;
cerr:
    /* the builder names the key; prefix the file and section */
    if (g_str_has_prefix(e->message, c->sc->path))
        g_propagate_error(err, e);
    else if (e->message[0] == '[') {
        g_set_error(err, SCENARIO_ERROR, 1, "%s: %s", c->sc->path, e->message);
        g_error_free(e);
    } else {
        g_set_error(err, SCENARIO_ERROR, 1, "%s: [%s] %s", c->sc->path, c->group, e->message);
        g_error_free(e);
    }
    return FALSE;
}

/* The transfers an earlier workload ends with, by name, for `after =`. */
static gboolean collect_after(struct wl_ctx *c, GPtrArray *names, GError **err)
{
    const char *after = wl_get(c, "after");
    if (!after)
        return TRUE;
    for (guint i = 0; i < names->len; i++)
        if (!strcmp(g_ptr_array_index(names, i), after)) {
            GArray *sinks = schedule_job_sinks(c->sched, g_array_index(c->job_of, uint32_t, i));
            g_array_append_vals(c->after, sinks->data, sinks->len);
            g_array_free(sinks, TRUE);
            return TRUE;
        }
    scenario_key_error(err, c->sc, c->group, "after", after,
                       "no earlier workload has this name (after = must name a workload above this one)");
    return FALSE;
}

struct schedule *workload_build_all(const struct scenario *sc, const struct topology *topo, GError **err)
{
    /* A schedule file (`rocesim schedule` output) replays exactly what was exported. */
    if (sc->workloads->len == 1) {
        const struct named_section *w = g_ptr_array_index(sc->workloads, 0);
        if (!strcmp(w->kind, "schedule")) {
            for (const char *const *k = (const char *const[]){ "after", "prio", "start", NULL }; *k; k++)
                if (g_hash_table_contains(w->keys, *k)) {
                    char *group = g_strdup_printf("workload %s", w->name);
                    scenario_key_error(err, sc, group, *k, g_hash_table_lookup(w->keys, *k),
                                       "a schedule file carries its own timing and priorities");
                    g_free(group);
                    return NULL;
                }
            char *path = resolve_path(sc, g_hash_table_lookup(w->keys, "file"));
            struct schedule *s = schedule_read(path, topo->nhosts, err);
            /* a schedule file may describe any size (replay); the simulator takes up to the cap */
            for (uint32_t t = 0; s && t < schedule_count(s); t++)
                if (schedule_get(s, t)->bytes > SCHEDULE_MAX_TRANSFER_BYTES) {
                    g_set_error(err, SCENARIO_ERROR, 1, "%s: transfer %u: %" G_GUINT64_FORMAT
                                " bytes: the simulator takes at most 16TiB per transfer", path, t,
                                schedule_get(s, t)->bytes);
                    schedule_free(s);
                    s = NULL;
                }
            g_free(path);
            return s;
        }
    }
    struct schedule *sched = schedule_new();
    GPtrArray *names = g_ptr_array_new();
    GArray *job_of = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    gboolean ok = TRUE;
    for (guint i = 0; i < sc->workloads->len && ok; i++) {
        struct wl_ctx c = { .sc = sc, .topo = topo, .sched = sched, .w = g_ptr_array_index(sc->workloads, i),
                            .index = sched->jobs->len, .prio = sc->data_priority, .job_of = job_of };
        c.group = g_strdup_printf("workload %s", c.w->name);
        c.after = g_array_new(FALSE, FALSE, sizeof(uint32_t));
        const char *v;
        char *why = NULL;
        if ((v = wl_get(&c, "prio"))) {
            char *end;
            guint64 p = g_ascii_strtoull(v, &end, 10);
            if (!*v || *end || p > 7) {
                scenario_key_error(err, sc, c.group, "prio", v, "expected a priority from 0 to 7");
                ok = FALSE;
            }
            c.prio = (uint8_t)p;
        }
        if (ok && (v = wl_get(&c, "start")) && !units_parse_time(v, &c.start, &why)) {
            g_set_error(err, SCENARIO_ERROR, 1, "%s: [%s] start: %s", sc->path, c.group, why);
            g_free(why);
            ok = FALSE;
        }
        if (ok)
            ok = collect_after(&c, names, err);
        if (ok) {
            const char *kind = c.w->kind;
            if (!strcmp(kind, "incast"))
                ok = build_incast(&c, err);
            else if (!strcmp(kind, "permutation"))
                ok = build_permutation(&c, err);
            else if (!strcmp(kind, "flows"))
                ok = build_flows(&c, err);
            else if (!strcmp(kind, "schedule")) {
                scenario_key_error(err, sc, c.group, "kind", kind,
                                   "a schedule file must be the scenario's only workload");
                ok = FALSE;
            } else if (!strcmp(kind, "train")) {
                ok = train_build(sc, topo, sched, c.w, c.prio, c.start, (const uint32_t *)c.after->data, c.after->len, err);
            } else {
                ok = build_collective(&c, err); /* the scenario loader admits only known kinds */
            }
        }
        if (ok && sched->jobs->len) {
            /* the keys every kind has */
            struct sched_job *j = &g_array_index(sched->jobs, struct sched_job, sched->jobs->len - 1);
            GString *d = g_string_new(NULL);
            char b[32];
            if (!wl_get(&c, "prio"))
                g_string_append_printf(d, "prio = %u   ([nic] data_priority)\n", c.prio);
            if (!wl_get(&c, "start"))
                g_string_append_printf(d, "start = %s\n", units_format_time(c.start, b, sizeof b));
            if (j->defaults)
                g_string_append(d, j->defaults);
            g_free(j->defaults);
            j->defaults = g_string_free(d, FALSE);
        }
        g_ptr_array_add(names, c.w->name);
        g_array_append_val(job_of, c.index);
        g_array_free(c.after, TRUE);
        g_free(c.group);
    }
    g_ptr_array_free(names, TRUE);
    g_array_free(job_of, TRUE);
    if (!ok) {
        schedule_free(sched);
        return NULL;
    }
    return gdr_staging_apply(sched, topo); /* servers without GPUDirect stage through host memory */
}
