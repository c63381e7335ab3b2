/* `rocesim schedule`: the exact transfer DAG a scenario produces, as a schedule file that
 * `[workload NAME] kind=schedule` and the replay module read back. */
#include <stdio.h>
#include "models/schedule_io.h"
#include "models/schedule_meta.h"
#include "models/topology.h"
#include "models/workload.h"
#include "cli/commands.h"

int cmd_schedule(int argc, char **argv)
{
    char **sets = NULL;
    char *out = NULL;
    GOptionEntry entries[] = {
        { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "Schedule file to write (required)", "FILE" },
        { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Override a scenario key (repeatable)", "SECTION.KEY=VALUE" },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    GOptionContext *ctx = g_option_context_new("SCENARIO -o FILE");
    g_option_context_set_summary(ctx, "Write the transfer schedule (DAG) of a scenario's workloads.");
    g_option_context_add_main_entries(ctx, entries, NULL);
    GError *err = NULL;
    int rc = 2;
    if (!g_option_context_parse(ctx, &argc, &argv, &err) || argc != 2 || !out) {
        fprintf(stderr, "rocesim schedule: %s\n", err ? err->message : "expected SCENARIO and -o FILE");
        g_clear_error(&err);
        goto done;
    }
    struct scenario *sc = scenario_load(argv[1], (const char *const *)sets, &err);
    struct topology *t = sc ? topology_build(sc, &err) : NULL;
    struct schedule *s = t ? workload_build_all(sc, t, &err) : NULL;
    if (s)
        schedule_set_meta(s, sc, t);
    if (s && schedule_write(s, out, &err)) {
        printf("%u transfers, %u jobs -> %s\n", schedule_count(s), s->jobs->len, out);
        rc = 0;
    } else {
        fprintf(stderr, "rocesim: %s\n", err->message);
        g_clear_error(&err);
        rc = s ? 1 : 2;
    }
    schedule_free(s);
    topology_free(t);
    scenario_free(sc);
done:
    g_option_context_free(ctx);
    g_strfreev(sets);
    g_free(out);
    return rc;
}
