/* Units and host lists: the first byte picks the parser, the rest is the text. A value that
 * parses must format to text that parses back to the same value. */
#include "models/scenario.h"
#include "sim/units.h"
#include "tests/fuzz/fuzz.h"

typedef gboolean (*parse_fn)(const char *, uint64_t *, char **);
typedef char *(*format_fn)(uint64_t, char *, size_t);

static void roundtrip(parse_fn parse, format_fn format, const char *text)
{
    uint64_t v = 0, back = 0;
    char *why = NULL;
    if (!parse(text, &v, &why)) {
        if (!why || !*why)
            abort(); /* a refusal always says why */
        g_free(why);
        return;
    }
    char buf[64];
    format(v, buf, sizeof buf);
    if (!parse(buf, &back, &why) || back != v)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *text = fuzz_string(data + 1, size - 1);
    switch (data[0] % 5) {
    case 0:
        roundtrip(units_parse_size, units_format_size, text);
        break;
    case 1:
        roundtrip(units_parse_rate, units_format_rate, text);
        break;
    case 2:
        roundtrip(units_parse_time, units_format_time, text);
        break;
    case 3: {
        double x;
        if (units_parse_real(text, &x) && !(x == x))
            abort(); /* never NaN */
        break;
    }
    default: {
        struct hostlist h;
        char *why = NULL;
        if (hostlist_parse(text, 1u << 16, &h, &why)) {
            for (uint32_t i = 0; i < h.n; i++)
                if (h.ids[i] >= 1u << 16)
                    abort();
            hostlist_clear(&h);
        } else {
            g_free(why);
        }
    }
    }
    g_free(text);
    return 0;
}
