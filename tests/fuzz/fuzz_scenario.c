/* The scenario loader with topology and workload building. The input is the scenario text,
 * optionally followed by files it names ("----- NAME" lines, see fuzz.h). Fabrics and
 * workloads past a size the fuzzer can build in milliseconds are loaded but not built. */
#include "models/topology.h"
#include "models/workload.h"
#include "models/schedule.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *dir = fuzz_tree("scenario", data, size);
    char *path = g_build_filename(dir, "main", NULL);
    GError *err = NULL;
    struct scenario *s = scenario_load(path, NULL, &err);
    if (!s) {
        if (!err || !strstr(err->message, path))
            abort(); /* every refusal names the file */
        g_error_free(err);
    } else if (s->topo == TOPO_EDGES || (uint64_t)s->leaves * (s->hosts_per_leaf + s->spines) <= 4096) {
        struct topology *t = topology_build(s, &err);
        if (t && t->nhosts <= 4096) {
            struct schedule *sc = workload_build_all(s, t, &err);
            schedule_free(sc);
        }
        topology_free(t);
        g_clear_error(&err);
    }
    scenario_free(s);
    g_free(path);
    g_free(dir);
    return 0;
}
