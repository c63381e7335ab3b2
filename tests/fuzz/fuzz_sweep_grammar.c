/* What sweep and tune read from the command line and the [sweep] section: --vary
 * SECTION.KEY=VALUES (lists, geometric and linear ranges with units) and constraints
 * (METRIC OP NUMBER). The first byte picks the parser. A refusal says why; an accepted range
 * expands to at least one value and to no more than the grammar's cap; every point of an
 * accepted dimension gets a folder name that stays in the points folder (no '/', no leading
 * '.', at most SWEEP_NAME_MAX bytes). */
#include "tune/sweep.h"
#include "tests/fuzz/fuzz.h"

static void refused(GError *e)
{
    if (!e || !e->message || !*e->message)
        abort(); /* a refusal always says why */
    g_error_free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *text = fuzz_string(data + 1, size - 1);
    GError *e = NULL;
    switch (data[0] % 3) {
    case 0: {
        GPtrArray *v = sweep_expand_values(text, &e);
        if (!v)
            refused(e);
        else if (v->len == 0 || v->len > SWEEP_MAX_VALUES)
            abort();
        else
            g_ptr_array_unref(v);
        break;
    }
    case 1: {
        struct sweep_dim *d = sweep_dim_parse(text, &e);
        if (!d) {
            refused(e);
            break;
        }
        GPtrArray *dims = g_ptr_array_new_with_free_func(sweep_dim_free);
        g_ptr_array_add(dims, d);
        if (!sweep_dims_prepare(dims, &e))
            abort(); /* one dimension cannot repeat a key */
        for (guint i = 0; i < d->values->len; i++) {
            char *name = sweep_point_name(dims, &i);
            if (!*name || strchr(name, '/') || name[0] == '.' || strlen(name) > SWEEP_NAME_MAX)
                abort();
            g_free(name);
        }
        g_ptr_array_unref(dims);
        break;
    }
    default: {
        struct sweep_constraint c;
        if (sweep_constraint_parse(text, &c, &e)) {
            sweep_constraint_holds(&c, 0.0);
            sweep_constraint_clear(&c);
        } else {
            refused(e);
        }
    }
    }
    g_free(text);
    return 0;
}
