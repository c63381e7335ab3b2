/* The flows CSV of a fixed 16-host scenario. */
#include "models/topology.h"
#include "models/workload.h"
#include "models/schedule.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *csv = fuzz_file("f.csv", data, size);
    static const char sc[] = "[workload f]\nkind = flows\nfile = f.csv\nstart = 1us\n";
    char *ini = fuzz_file("s.ini", (const uint8_t *)sc, sizeof sc - 1);
    GError *err = NULL;
    struct scenario *s = scenario_load(ini, NULL, &err);
    struct topology *t = s ? topology_build(s, &err) : NULL;
    if (!t)
        abort();
    struct schedule *sched = workload_build_all(s, t, &err);
    if (sched) {
        for (uint32_t i = 0; i < schedule_count(sched); i++) {
            const struct transfer *x = schedule_get(sched, i);
            if (x->src >= t->nhosts || x->dst >= t->nhosts || x->bytes > SCHEDULE_MAX_TRANSFER_BYTES)
                abort();
        }
    } else if (!err || !strstr(err->message, "f.csv")) {
        abort(); /* the error names the file */
    }
    g_clear_error(&err);
    schedule_free(sched);
    topology_free(t);
    scenario_free(s);
    g_free(ini);
    g_free(csv);
    return 0;
}
