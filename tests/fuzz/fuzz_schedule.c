/* Schedule files: what reads must write and read back the same (byte-identical on the
 * second write). */
#include "models/schedule.h"
#include "models/schedule_io.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = fuzz_file("in.sched", data, size);
    GError *err = NULL;
    struct schedule *s = schedule_read(in, 0, &err);
    if (!s) {
        if (!err || !strstr(err->message, in))
            abort(); /* the error names the file */
        g_error_free(err);
        g_free(in);
        return 0;
    }
    char *a = g_build_filename(fuzz_dir(), "a.sched", NULL), *b = g_build_filename(fuzz_dir(), "b.sched", NULL);
    if (!schedule_write(s, a, NULL))
        abort();
    struct schedule *back = schedule_read(a, 0, NULL);
    if (!back || schedule_count(back) != schedule_count(s))
        abort();
    for (uint32_t i = 0; i < schedule_count(s); i++) {
        const struct transfer *x = schedule_get(s, i), *y = schedule_get(back, i);
        if (x->src != y->src || x->dst != y->dst || x->bytes != y->bytes || x->prio != y->prio ||
            x->delay != y->delay || x->ndeps != y->ndeps || x->job != y->job || x->coll != y->coll)
            abort();
        if (x->ndeps && memcmp(schedule_deps(s, x), schedule_deps(back, y), x->ndeps * sizeof(uint32_t)))
            abort();
    }
    if (!schedule_write(back, b, NULL))
        abort();
    gchar *ta = NULL, *tb = NULL;
    gsize la = 0, lb = 0;
    if (!g_file_get_contents(a, &ta, &la, NULL) || !g_file_get_contents(b, &tb, &lb, NULL) || la != lb ||
        memcmp(ta, tb, la))
        abort();
    g_free(ta);
    g_free(tb);
    schedule_free(back);
    schedule_free(s);
    g_free(a);
    g_free(b);
    g_free(in);
    return 0;
}
