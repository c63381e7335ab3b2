/* Units: sizes (KB = 1000 B, KiB = 1024 B), rates and times, the errors a scenario author
 * sees for bad text, and the canonical formatting (format then parse gives the same value). */
#include <string.h>
#include "sim/rng.h"
#include "sim/units.h"
#include "tests/testutil.h"

typedef gboolean (*parse_fn)(const char *, uint64_t *, char **);
typedef char *(*format_fn)(uint64_t, char *, size_t);

struct ok_case {
    const char *text;
    uint64_t value;
};

static void check_ok(parse_fn parse, const struct ok_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t v = 12345;
        char *why = NULL;
        gboolean ok = parse(c[i].text, &v, &why);
        if (!ok || v != c[i].value)
            fprintf(stderr, "\n  '%s' -> ok=%d value=%" G_GUINT64_FORMAT " (want %" G_GUINT64_FORMAT ") %s\n",
                    c[i].text, ok, v, c[i].value, why ? why : "");
        CU_ASSERT(ok);
        CU_ASSERT_EQUAL(v, c[i].value);
        CU_ASSERT_PTR_NULL(why);
        g_free(why);
    }
}

struct bad_case {
    const char *text;
    const char *expect; /* a phrase the message must contain */
};

static void check_bad(parse_fn parse, const struct bad_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t v = 12345;
        char *why = NULL;
        gboolean ok = parse(c[i].text, &v, &why);
        CU_ASSERT_FALSE(ok);
        CU_ASSERT_EQUAL(v, 12345); /* the output is left alone on error */
        CU_ASSERT_PTR_NOT_NULL(why);
        if (why && !strstr(why, c[i].expect)) {
            fprintf(stderr, "\n  '%s': message '%s' lacks '%s'\n", c[i].text ? c[i].text : "(null)", why, c[i].expect);
            CU_FAIL("error message does not say what is wrong");
        }
        /* the message quotes the bad text so the author can find it */
        if (why && c[i].text && *c[i].text && !strstr(why, c[i].text)) {
            fprintf(stderr, "\n  message '%s' does not quote '%s'\n", why, c[i].text);
            CU_FAIL("error message does not quote the value");
        }
        g_free(why);
    }
}

/* ---- sizes ---- */

static void test_sizes(void)
{
    static const struct ok_case c[] = {
        { "0B", 0 },           { "1B", 1 },               { "1500B", 1500 },
        { "32767B", 32767 },   { "4KB", 4000 },           { "4KiB", 4096 },
        { "1MB", 1000000 },    { "1MiB", 1048576 },       { "32MB", 32000000 },
        { "1GB", 1000000000 }, { "2GiB", 2147483648ull }, { "1.5KB", 1500 },
        { "1.5KiB", 1536 },    { "0.5MB", 500000 },       { "2.25MiB", 2359296 },
        { "100 KB", 100000 },  { " 64KiB ", 65536 },      { "0.001KB", 1 },
        { "400KB", 400000 },   { "1600KB", 1600000 },
    };
    check_ok(units_parse_size, c, G_N_ELEMENTS(c));
}

static void test_size_errors(void)
{
    static const struct bad_case c[] = {
        { "4096", "no unit" },             /* a bare number */
        { "50", "no unit" },
        { "-4KB", "negative" },
        { "-1B", "negative" },
        { "4XB", "unknown unit" },
        { "4kb", "unknown unit" },          /* units are case-sensitive: KB, not kb */
        { "4Gbps", "unknown unit" },        /* a rate where a size belongs */
        { "", "empty" },
        { "KB", "not a size" },
        { "banana", "not a size" },
        { "0.5B", "not a whole number" },   /* half a byte */
        { "1.0001KB", "not a whole number" },
        { "1e30B", "too large" },
    };
    check_bad(units_parse_size, c, G_N_ELEMENTS(c));
    /* NULL is an empty value, not a crash */
    uint64_t v = 0;
    char *why = NULL;
    CU_ASSERT_FALSE(units_parse_size(NULL, &v, &why));
    CU_ASSERT_PTR_NOT_NULL(why);
    g_free(why);
    /* no message wanted (why NULL): the answer alone, for bad and good values (an edge list's
     * "100Gbp" once wrote its message through NULL; fuzz_edges, 2026-12-06) */
    simtime_t t = 0;
    CU_ASSERT_FALSE(units_parse_rate("100Gbp", &v, NULL));
    CU_ASSERT_FALSE(units_parse_time("1uus", &t, NULL));
    CU_ASSERT_FALSE(units_parse_size("", &v, NULL));
    CU_ASSERT_FALSE(units_parse_size("0.5B", &v, NULL));
    CU_ASSERT(units_parse_rate("100Gbps", &v, NULL) && v == 100000000000ull);
    CU_ASSERT(units_parse_time("1.5us", &t, NULL) && t == 1500000);
}

/* ---- rates ---- */

static void test_rates(void)
{
    static const struct ok_case c[] = {
        { "0bps", 0 },
        { "1bps", 1 },
        { "1Kbps", 1000 },
        { "5Mbps", 5000000 },
        { "1000Mbps", 1000000000 },
        { "25Gbps", 25000000000ull },
        { "100Gbps", 100000000000ull },
        { "400Gbps", 400000000000ull },
        { "1Tbps", 1000000000000ull },
        { "1.6Tbps", 1600000000000ull },
        { "0.5Gbps", 500000000 },
        { "12.8Tbps", 12800000000000ull },
    };
    check_ok(units_parse_rate, c, G_N_ELEMENTS(c));
    static const struct bad_case b[] = {
        { "100", "no unit" },
        { "100G", "unknown unit" },
        { "100GB", "unknown unit" },  /* a size where a rate belongs */
        { "-1Gbps", "negative" },
        { "", "empty" },
        { "fast", "not a rate" },
        { "0.5bps", "not a whole number" },
    };
    check_bad(units_parse_rate, b, G_N_ELEMENTS(b));
}

/* ---- times ---- */

static void test_times(void)
{
    static const struct ok_case c[] = {
        { "0ps", 0 },
        { "1ps", 1 },
        { "1ns", 1000 },
        { "1us", 1000000 },
        { "1ms", 1000000000 },
        { "1s", 1000000000000ull },
        { "1.5us", 1500000 },
        { "55us", 55000000 },
        { "0.001ns", 1 },
        { "4.096us", 4096000 },
        { "10ms", 10000000000ull },
        { "2.5s", 2500000000000ull },
    };
    check_ok(units_parse_time, c, G_N_ELEMENTS(c));
    static const struct bad_case b[] = {
        { "10", "no unit" },
        { "-1us", "negative" },
        { "3min", "unknown unit" },
        { "1 sec", "unknown unit" },
        { "", "empty" },
        { "soon", "not a time" },
        { "1.5ps", "not a whole number" },
        { "0.0001ns", "not a whole number" },
    };
    check_bad(units_parse_time, b, G_N_ELEMENTS(b));
}

/* ---- formatting ---- */

static void test_format_examples(void)
{
    char buf[64];
    CU_ASSERT_STRING_EQUAL(units_format_size(65536, buf, sizeof buf), "64KiB");
    CU_ASSERT_STRING_EQUAL(units_format_size(100000, buf, sizeof buf), "100KB");
    CU_ASSERT_STRING_EQUAL(units_format_size(1500, buf, sizeof buf), "1500B");
    CU_ASSERT_STRING_EQUAL(units_format_size(0, buf, sizeof buf), "0B");
    CU_ASSERT_STRING_EQUAL(units_format_size(32000000, buf, sizeof buf), "32MB");
    CU_ASSERT_STRING_EQUAL(units_format_size(1048576, buf, sizeof buf), "1MiB");
    CU_ASSERT_STRING_EQUAL(units_format_rate(100000000000ull, buf, sizeof buf), "100Gbps");
    CU_ASSERT_STRING_EQUAL(units_format_rate(5000000, buf, sizeof buf), "5Mbps");
    CU_ASSERT_STRING_EQUAL(units_format_rate(0, buf, sizeof buf), "0bps");
    CU_ASSERT_STRING_EQUAL(units_format_time(1500000, buf, sizeof buf), "1.5us");
    CU_ASSERT_STRING_EQUAL(units_format_time(1000000, buf, sizeof buf), "1us");
    CU_ASSERT_STRING_EQUAL(units_format_time(999, buf, sizeof buf), "999ps");
    CU_ASSERT_STRING_EQUAL(units_format_time(1001, buf, sizeof buf), "1.001ns");
    CU_ASSERT_STRING_EQUAL(units_format_time(0, buf, sizeof buf), "0ps");
    CU_ASSERT_STRING_EQUAL(units_format_time(8063360, buf, sizeof buf), "8.06336us");
}

static void roundtrip(parse_fn parse, format_fn format, uint64_t v, unsigned *bad)
{
    char buf[64];
    format(v, buf, sizeof buf);
    uint64_t back = 0;
    char *why = NULL;
    if (!parse(buf, &back, &why) || back != v) {
        if (*bad < 5)
            fprintf(stderr, "\n  %" G_GUINT64_FORMAT " -> '%s' -> %" G_GUINT64_FORMAT " %s\n", v, buf, back,
                    why ? why : "");
        (*bad)++;
    }
    g_free(why);
}

/* Values a scenario uses (up to 1e15: a petabyte, a Pb/s, 1000 s) round-trip exactly. */
static void test_format_roundtrip(void)
{
    struct rng g;
    rng_init(&g, 9, 9);
    unsigned bad_size = 0, bad_rate = 0, bad_time = 0;
    static const uint64_t scales[] = { 1, 1000, 1024, 1000000, 1048576, 1000000000, 1073741824ull };
    for (int i = 0; i < 20000; i++) {
        uint64_t mag = 1ull << rng_below(&g, 50);     /* spread over magnitudes */
        uint64_t v = rng_below(&g, mag) + 1;
        uint64_t s = scales[rng_below(&g, G_N_ELEMENTS(scales))];
        uint64_t scaled = v * s <= 1000000000000000ull ? v * s : v;
        roundtrip(units_parse_size, units_format_size, v, &bad_size);
        roundtrip(units_parse_size, units_format_size, scaled, &bad_size);
        roundtrip(units_parse_rate, units_format_rate, v, &bad_rate);
        roundtrip(units_parse_rate, units_format_rate, scaled, &bad_rate);
        roundtrip(units_parse_time, units_format_time, v, &bad_time);
        roundtrip(units_parse_time, units_format_time, scaled, &bad_time);
    }
    CU_ASSERT_EQUAL(bad_size, 0);
    CU_ASSERT_EQUAL(bad_rate, 0);
    CU_ASSERT_EQUAL(bad_time, 0);
}

static CU_TestInfo tests[] = {
    { "sizes: B, KB=1000, KiB=1024, MB, MiB, GB, fractions", test_sizes },
    { "sizes: bare, negative, unknown unit, empty, garbage, 0.5B", test_size_errors },
    { "rates: bps to Tbps, and errors", test_rates },
    { "times: ps to s, 1.5us, and errors", test_times },
    { "formatting: canonical text", test_format_examples },
    { "formatting: format then parse round trip", test_format_roundtrip },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("units", tests)
