/* Edge-list topologies: the input is the edge file of a fixed scenario. */
#include "models/topology.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *topo = fuzz_file("t.topo", data, size);
    static const char sc[] = "[topology]\nkind = edges\nfile = t.topo\n"
                             "[workload w]\nkind = incast\nsenders = 0\nreceiver = 0\nsize = 4KB\n";
    char *ini = fuzz_file("s.ini", (const uint8_t *)sc, sizeof sc - 1);
    GError *err = NULL;
    struct scenario *s = scenario_load(ini, NULL, &err);
    if (!s)
        abort(); /* the fixed scenario itself is valid */
    struct topology *t = topology_build(s, &err);
    if (t) {
        /* every host reaches every other: routes exist from each host's switch */
        for (uint32_t h = 1; h < t->nhosts; h++)
            if (topology_hops(t, 0, h) == UINT32_MAX)
                abort();
    } else if (!err || !*err->message) {
        abort();
    }
    g_clear_error(&err);
    topology_free(t);
    scenario_free(s);
    g_free(ini);
    g_free(topo);
    return 0;
}
