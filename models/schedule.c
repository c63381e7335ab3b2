#include "models/schedule.h"
#include <string.h>

struct schedule *schedule_new(void)
{
    struct schedule *s = g_new0(struct schedule, 1);
    s->transfers = g_array_new(FALSE, FALSE, sizeof(struct transfer));
    s->deps = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    s->jobs = g_array_new(FALSE, FALSE, sizeof(struct sched_job));
    s->colls = g_array_new(FALSE, FALSE, sizeof(struct sched_coll));
    return s;
}

void schedule_free(struct schedule *s)
{
    if (!s)
        return;
    for (guint i = 0; i < s->jobs->len; i++) {
        struct sched_job *j = &g_array_index(s->jobs, struct sched_job, i);
        g_free(j->name);
        g_free(j->op);
        g_free(j->algorithm);
    }
    g_array_free(s->transfers, TRUE);
    g_array_free(s->deps, TRUE);
    g_array_free(s->jobs, TRUE);
    g_array_free(s->colls, TRUE);
    g_free(s);
}

uint32_t schedule_add_job(struct schedule *s, const char *name, const char *op,
                          const char *algorithm, uint32_t ranks)
{
    struct sched_job j = { g_strdup(name), g_strdup(op), g_strdup(algorithm ? algorithm : ""), ranks };
    g_array_append_val(s->jobs, j);
    return s->jobs->len - 1;
}

uint32_t schedule_add(struct schedule *s, const struct transfer *t, const uint32_t *deps,
                      uint32_t ndeps)
{
    struct transfer c = *t;
    c.deps_off = s->deps->len;
    c.ndeps = ndeps;
    if (ndeps)
        g_array_append_vals(s->deps, deps, ndeps);
    g_array_append_val(s->transfers, c);
    return s->transfers->len - 1;
}

GArray *schedule_job_sinks(const struct schedule *s, uint32_t job)
{
    uint32_t n = s->transfers->len;
    guint8 *waited = g_new0(guint8, n ? n : 1);
    for (uint32_t id = 0; id < n; id++) {
        const struct transfer *t = schedule_get(s, id);
        if (t->job != job)
            continue;
        const uint32_t *d = schedule_deps(s, t);
        for (uint32_t i = 0; i < t->ndeps; i++)
            if (d[i] < n && schedule_get(s, d[i])->job == job)
                waited[d[i]] = 1;
    }
    GArray *out = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (uint32_t id = 0; id < n; id++)
        if (schedule_get(s, id)->job == job && !waited[id])
            g_array_append_val(out, id);
    g_free(waited);
    return out;
}
