/* CSV quoting (see csv.h). */
#include "results_io/csv.h"
#include <string.h>

void results_csv_quote(GString *g, const char *v)
{
    if (!strpbrk(v, ",\"\n\r")) {
        g_string_append(g, v);
        return;
    }
    g_string_append_c(g, '"');
    for (const char *c = v; *c; c++) {
        if (*c == '"')
            g_string_append_c(g, '"');
        g_string_append_c(g, *c);
    }
    g_string_append_c(g, '"');
}
