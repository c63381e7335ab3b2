/* Sampling NIC counters during a replay (see sampler.h). */
#include "replay/sampler.h"
#include <string.h>

/* Appends a row per counter of cur (its increase since prev, paired by name: a firmware may
 * add counters as PFC is configured), then makes cur the previous sample. */
static void take(struct sampler *s, struct counter_set *prev, struct counter_set *cur,
                 unsigned port, int64_t now, gboolean rows)
{
    for (guint i = 0; rows && i < cur->names->len; i++) {
        const char *n = g_ptr_array_index(cur->names, i);
        uint64_t before = 0;
        for (guint j = 0; prev->names && j < prev->names->len; j++)
            if (!strcmp(g_ptr_array_index(prev->names, j), n)) {
                before = g_array_index(prev->values, uint64_t, j);
                break;
            }
        g_string_append_printf(s->rows, "%" G_GINT64_FORMAT ",%u,%s,%" G_GUINT64_FORMAT "\n", now, port,
                               n, counter_delta(before, g_array_index(cur->values, uint64_t, i)));
    }
    counter_set_clear(prev);
    *prev = *cur;
    memset(cur, 0, sizeof *cur);
}

static void sample(struct sampler *s, int64_t now, gboolean rows)
{
    struct counter_set c = { 0 };
    if (s->device && nic_hw_counters(s->ib_root, s->device, s->port, &c, NULL))
        take(s, &s->hw, &c, s->port, now, rows);
    counter_set_clear(&c);
    /* ethtool statistics are the netdev's: port 0 in counters.csv */
    if (s->netdev && nic_ethtool_stats(s->netdev, &c, NULL))
        take(s, &s->eth, &c, 0, now, rows);
    counter_set_clear(&c);
}

void sampler_begin(struct sampler *s, const char *ib_root, const char *device, unsigned port,
                   const char *netdev, int64_t interval_ns, int64_t now)
{
    memset(s, 0, sizeof *s);
    s->ib_root = g_strdup(ib_root ? ib_root : "/sys/class/infiniband");
    s->device = device && strcmp(device, "-") ? g_strdup(device) : NULL;
    s->netdev = netdev && strcmp(netdev, "-") && strcmp(netdev, "lo") ? g_strdup(netdev) : NULL;
    s->port = port ? port : 1;
    s->interval_ns = interval_ns;
    s->rows = g_string_new(NULL);
    g_mutex_init(&s->lock);
    g_cond_init(&s->wake);
    sample(s, now, FALSE);
    s->next = interval_ns > 0 ? now + interval_ns : INT64_MAX;
}

int64_t sampler_tick(struct sampler *s, int64_t now)
{
    if (now >= s->next) {
        sample(s, now, TRUE);
        /* a late tick does not make up for the samples it missed */
        s->next = MAX(s->next + s->interval_ns, now + 1);
    }
    return s->next;
}

static gpointer sampler_thread(gpointer p)
{
    struct sampler *s = p;
    g_mutex_lock(&s->lock);
    while (!s->stopping) {
        int64_t now = g_get_monotonic_time() * 1000; /* CLOCK_MONOTONIC, as the replay's */
        if (now >= s->next) {
            sampler_tick(s, now);
            continue;
        }
        g_cond_wait_until(&s->wake, &s->lock, s->next / 1000);
    }
    g_mutex_unlock(&s->lock);
    return NULL;
}

void sampler_run(struct sampler *s)
{
    if (s->interval_ns > 0 && (s->device || s->netdev))
        s->thread = g_thread_new("sampler", sampler_thread, s);
}

char *sampler_end(struct sampler *s, int64_t now)
{
    if (s->thread) {
        g_mutex_lock(&s->lock);
        s->stopping = TRUE;
        g_cond_signal(&s->wake);
        g_mutex_unlock(&s->lock);
        g_thread_join(s->thread);
        s->thread = NULL;
    }
    sample(s, now, TRUE);
    s->next = INT64_MAX;
    return g_strdup(s->rows->str);
}

void sampler_clear(struct sampler *s)
{
    if (s->thread)
        g_free(sampler_end(s, 0));
    if (s->rows) {
        g_mutex_clear(&s->lock);
        g_cond_clear(&s->wake);
    }
    counter_set_clear(&s->hw);
    counter_set_clear(&s->eth);
    if (s->rows)
        g_string_free(s->rows, TRUE);
    g_free(s->ib_root);
    g_free(s->device);
    g_free(s->netdev);
    memset(s, 0, sizeof *s);
}
