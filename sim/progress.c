#include "sim/progress.h"
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include "sim/engine.h"

#define PROGRESS_EVERY_S 0.25
#define PROGRESS_MIN_DONE 0.005 /* below it the pace is mostly the run's start */
#define PROGRESS_MIN_ELAPSED_S 1.0

double progress_done(const struct progress_view *v)
{
    double d = -1;
    if (v->stop && v->stop != SIMTIME_NEVER)
        d = MIN((double)v->now / (double)v->stop, 1.0);
    if (v->work >= 0)
        d = MAX(d, MIN(v->work, 1.0));
    return d;
}

double progress_left_s(const struct progress_view *v)
{
    double d = progress_done(v);
    if (d < PROGRESS_MIN_DONE || v->elapsed_s < PROGRESS_MIN_ELAPSED_S)
        return -1;
    return v->elapsed_s * (1 - d) / d;
}

/* 42 s, 4:05, 1:02:03 */
static void format_duration(char *buf, size_t len, double s)
{
    unsigned long t = (unsigned long)lround(s);
    if (t < 60)
        g_snprintf(buf, len, "%lu s", t);
    else if (t < 3600)
        g_snprintf(buf, len, "%lu:%02lu", t / 60, t % 60);
    else
        g_snprintf(buf, len, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
}

void progress_format(char *buf, size_t len, const struct progress_view *v)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "  sim %10.3f us", (double)v->now / PS_PER_US);
    double d = progress_done(v);
    if (d >= 0)
        g_string_append_printf(s, "  %5.1f%% %s", 100 * d, v->work >= 0 ? "done" : "of stop");
    double left = progress_left_s(v);
    if (left >= 0 && left < 0.5) {
        g_string_append(s, "  <1 s left");
    } else if (left >= 0) {
        char t[32];
        format_duration(t, sizeof t, left);
        g_string_append_printf(s, "  ~%s left", t);
    }
    if (v->events_per_s >= 0)
        g_string_append_printf(s, "  %6.2f M events/s", v->events_per_s / 1e6);
    if (v->workers > 1)
        g_string_append_printf(s, "  %u workers", v->workers);
    g_strlcpy(buf, s->str, len);
    g_string_free(s, TRUE);
}

void progress_start(struct progress_line *l, uint64_t events)
{
    *l = (struct progress_line){ .start = engine_wall_seconds(), .last_events = events };
    l->last = l->start;
}

bool progress_due(const struct progress_line *l) { return engine_wall_seconds() - l->last >= PROGRESS_EVERY_S; }

void progress_show(struct progress_line *l, simtime_t now, simtime_t stop, double work, uint64_t events,
                   uint32_t workers)
{
    double w = engine_wall_seconds();
    struct progress_view v = { .now = now, .stop = stop, .work = work, .elapsed_s = w - l->start,
                               .events_per_s = -1, .workers = workers };
    if (events != UINT64_MAX && w > l->last)
        v.events_per_s = (double)(events - l->last_events) / (w - l->last);
    char line[160];
    progress_format(line, sizeof line, &v);
    /* pad over what a longer previous line left */
    fprintf(stderr, "\r%-78s", line);
    l->last = w;
    l->last_events = events;
    l->shown = true;
}

void progress_end(struct progress_line *l)
{
    if (l->shown)
        fprintf(stderr, "\r%78s\r", "");
    l->shown = false;
}
