/* Schedule file: round trips, malformed files refused with the right line, validation,
 * atomic writing. */
#include <string.h>
#include <sys/stat.h>
#include "models/collective.h"
#include "models/schedule_io.h"
#include "tests/testutil.h"

static void assert_same(const struct schedule *a, const struct schedule *b)
{
    CU_ASSERT_EQUAL_FATAL(schedule_count(a), schedule_count(b));
    CU_ASSERT_EQUAL_FATAL(a->jobs->len, b->jobs->len);
    CU_ASSERT_EQUAL_FATAL(a->colls->len, b->colls->len);
    CU_ASSERT_EQUAL_FATAL(a->deps->len, b->deps->len);
    for (uint32_t id = 0; id < schedule_count(a); id++) {
        const struct transfer *x = schedule_get(a, id), *y = schedule_get(b, id);
        CU_ASSERT_EQUAL(x->src, y->src);
        CU_ASSERT_EQUAL(x->dst, y->dst);
        CU_ASSERT_EQUAL(x->bytes, y->bytes);
        CU_ASSERT_EQUAL(x->prio, y->prio);
        CU_ASSERT_EQUAL(x->qp, y->qp);
        CU_ASSERT_EQUAL(x->deps_off, y->deps_off);
        CU_ASSERT_EQUAL(x->ndeps, y->ndeps);
        CU_ASSERT_EQUAL(x->delay, y->delay);
        CU_ASSERT_EQUAL(x->job, y->job);
        CU_ASSERT_EQUAL(x->coll, y->coll);
        CU_ASSERT_EQUAL(x->channel, y->channel);
    }
    CU_ASSERT(memcmp(a->deps->data, b->deps->data, sizeof(uint32_t) * a->deps->len) == 0);
    for (guint i = 0; i < a->jobs->len; i++) {
        const struct sched_job *x = &g_array_index(a->jobs, struct sched_job, i);
        const struct sched_job *y = &g_array_index(b->jobs, struct sched_job, i);
        CU_ASSERT_STRING_EQUAL(x->name, y->name);
        CU_ASSERT_STRING_EQUAL(x->op, y->op);
        CU_ASSERT_STRING_EQUAL(x->algorithm, y->algorithm);
        CU_ASSERT_EQUAL(x->ranks, y->ranks);
    }
    for (guint i = 0; i < a->colls->len; i++) {
        const struct sched_coll *x = &g_array_index(a->colls, struct sched_coll, i);
        const struct sched_coll *y = &g_array_index(b->colls, struct sched_coll, i);
        CU_ASSERT_EQUAL(x->job, y->job);
        CU_ASSERT_EQUAL(x->iteration, y->iteration);
        CU_ASSERT_EQUAL(x->bytes, y->bytes);
        CU_ASSERT_EQUAL(x->first, y->first);
        CU_ASSERT_EQUAL(x->count, y->count);
    }
}

/* Two collectives, a hand-made job with awkward names, transfers outside any job, extreme
 * values and a forward dependency. */
static struct schedule *sample(void)
{
    struct schedule *s = schedule_new();
    GError *err = NULL;
    uint32_t ring[] = { 0, 1, 2, 3 }, tree[] = { 3, 4, 5, 6, 7 };
    struct collective_spec sp;
    collective_spec_init(&sp);
    sp.name = "ar";
    sp.ranks = ring;
    sp.nranks = 4;
    sp.size = 3000000;
    sp.chunk = 100000;
    sp.iterations = 2;
    sp.compute = 123456789;
    sp.start = 42;
    CU_ASSERT_FATAL(collective_build(s, &sp, &err));
    sp.name = "tree job";
    sp.algorithm = COLL_ALGO_TREE;
    sp.ranks = tree;
    sp.nranks = 5;
    sp.iterations = 1;
    sp.prio = 5;
    CU_ASSERT_FATAL(collective_build(s, &sp, &err));

    uint32_t j = schedule_add_job(s, "odd name %20 - #x\t", "flows", "", 3);
    schedule_add_job(s, "-", "incast", "-", 2);
    uint32_t n = schedule_count(s);
    struct transfer t = { .src = 8, .dst = 9, .bytes = UINT64_MAX, .prio = 7, .qp = UINT32_MAX,
                          .delay = UINT64_MAX - 1, .job = j, .coll = SCHEDULE_NO_JOB,
                          .channel = UINT16_MAX };
    uint32_t fwd = n + 1; /* waits for the next transfer */
    schedule_add(s, &t, &fwd, 1);
    struct transfer root = { .src = 9, .dst = 8, .bytes = 1, .prio = 0, .qp = 0, .delay = 0,
                             .job = SCHEDULE_NO_JOB, .coll = SCHEDULE_NO_JOB, .channel = 0 };
    schedule_add(s, &root, NULL, 0);
    struct transfer mk = { .src = 2, .dst = 2, .bytes = 0, .delay = 5, .job = SCHEDULE_NO_JOB,
                           .coll = SCHEDULE_NO_JOB };
    uint32_t deps[] = { n, n + 1, 0 };
    schedule_add(s, &mk, deps, 3);
    return s;
}

static void test_round_trip(void)
{
    char *dir = test_tmpdir();
    char *p1 = g_build_filename(dir, "a.sched", NULL), *p2 = g_build_filename(dir, "b.sched", NULL);
    struct schedule *s = sample();
    GError *err = NULL;
    CU_ASSERT_FATAL(schedule_validate(s, 10, &err));
    CU_ASSERT_FATAL(schedule_write(s, p1, &err));
    struct schedule *r = schedule_read(p1, 10, &err);
    if (!r)
        fprintf(stderr, "%s\n", err->message);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    assert_same(s, r);

    /* Writing what was read gives the same bytes. */
    CU_ASSERT_FATAL(schedule_write(r, p2, &err));
    gchar *a, *b;
    gsize la, lb;
    CU_ASSERT_FATAL(g_file_get_contents(p1, &a, &la, NULL));
    CU_ASSERT_FATAL(g_file_get_contents(p2, &b, &lb, NULL));
    CU_ASSERT_EQUAL(la, lb);
    CU_ASSERT(la == lb && memcmp(a, b, la) == 0);
    /* The text is what schedule_io.h promises. */
    CU_ASSERT(g_str_has_prefix(a, SCHEDULE_FILE_VERSION_LINE "\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(a, "\n# id src dst bytes prio qp delay_ps deps job coll channel\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(a, "\njob 2 odd%20name%20%2520%20-%20#x%09 flows - 3\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(a, "\njob 3 %2D incast %2D 2\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(a, "\n0 0 0 0 3 0 42 - 0 - 0\n")); /* the start marker */
    char *row = g_strdup_printf("\n%u 8 9 18446744073709551615 7 4294967295 18446744073709551614 "
                                "%u 2 - 65535\n", schedule_count(s) - 3, schedule_count(s) - 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(a, row));
    g_free(row);
    g_free(a);
    g_free(b);
    schedule_free(r);

    /* hosts are only checked when the caller knows how many there are */
    r = schedule_read(p1, 0, &err);
    CU_ASSERT_PTR_NOT_NULL(r);
    schedule_free(r);
    CU_ASSERT_PTR_NULL(schedule_read(p1, 9, &err));
    CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, "dst 9 is not a host (hosts are 0..8)"));
    g_clear_error(&err);

    schedule_free(s);
    test_rmtree(dir);
    g_free(p1);
    g_free(p2);
    g_free(dir);
}

/* An empty schedule and one with CRLF line ends and extra blanks are fine too. */
static void test_read_lenient_whitespace(void)
{
    char *dir = test_tmpdir();
    char *p = g_build_filename(dir, "s", NULL);
    GError *err = NULL;
    struct schedule *e = schedule_new();
    CU_ASSERT_FATAL(schedule_write(e, p, &err));
    struct schedule *r = schedule_read(p, 4, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(schedule_count(r), 0);
    schedule_free(r);
    schedule_free(e);

    const char *txt = "# rocesim-schedule v1\r\n"
                      "\r\n"
                      "  # a comment\r\n"
                      "0\t1 2  100 3 0 0 - - - 0 \r\n"
                      "1 2 1 100 3 0 10 0 - - 0\r\n";
    CU_ASSERT_FATAL(g_file_set_contents(p, txt, -1, NULL));
    r = schedule_read(p, 4, &err);
    if (!r)
        fprintf(stderr, "%s\n", err->message);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(schedule_count(r), 2);
    CU_ASSERT_EQUAL(schedule_get(r, 1)->delay, 10);
    CU_ASSERT_EQUAL(schedule_get(r, 1)->ndeps, 1);
    CU_ASSERT_EQUAL(schedule_get(r, 0)->job, SCHEDULE_NO_JOB);
    schedule_free(r);
    test_rmtree(dir);
    g_free(p);
    g_free(dir);
}

/* Each malformed file is refused with "<path>:<line>: " and a message that says what. */
static void expect_bad(const char *dir, const char *body, uint32_t nhosts, int line,
                       const char *needle)
{
    char *p = g_build_filename(dir, "bad.sched", NULL);
    CU_ASSERT_FATAL(g_file_set_contents(p, body, -1, NULL));
    GError *err = NULL;
    struct schedule *s = schedule_read(p, nhosts, &err);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    char *where = line > 0 ? g_strdup_printf("%s:%d: ", p, line) : g_strdup_printf("%s: ", p);
    gboolean ok = g_str_has_prefix(err->message, where) && strstr(err->message, needle);
    if (!ok)
        fprintf(stderr, "\nexpected '%s...%s', got: %s\n", where, needle, err->message);
    CU_ASSERT(ok);
    CU_ASSERT_EQUAL(err->domain, SCHEDULE_IO_ERROR);
    g_free(where);
    g_error_free(err);
    schedule_free(s);
    g_free(p);
}

#define HDR "# rocesim-schedule v1\n# id src dst bytes prio qp delay_ps deps job coll channel\n"

static void test_malformed(void)
{
    char *dir = test_tmpdir();
    /* the version line */
    expect_bad(dir, "# rocesim-schedule\n0 0 1 1 3 0 0 - - - 0\n", 4, 1,
               "not a rocesim schedule: the first line must be '# rocesim-schedule v1'");
    expect_bad(dir, "id src dst\n", 4, 1, "not a rocesim schedule");
    expect_bad(dir, "# rocesim-schedule v2\n", 4, 1,
               "unsupported schedule version 'v2' (this rocesim reads 'v1')");
    expect_bad(dir, "", 4, 0, "empty file, expected '# rocesim-schedule v1'");
    /* fields */
    expect_bad(dir, HDR "0 0 1 100 3 0 0 - - - 0\n1 0 1 100 3 0 0 0 - -\n", 4, 4,
               "transfer row has 10 fields, expected 11: missing channel");
    expect_bad(dir, HDR "0 0 1 100 3 0 0 - - - 0 9\n", 4, 3,
               "transfer row has 12 fields, expected 11");
    expect_bad(dir, HDR "0 0 1 100 3 0 0 - - - 0\n\n1 0 1 1x 3 0 0 0 - - 0\n", 4, 5,
               "bytes: '1x' is not a number (expected an unsigned integer)");
    expect_bad(dir, HDR "0 0 1 -5 3 0 0 - - - 0\n", 4, 3, "bytes: '-5' is not a number");
    expect_bad(dir, HDR "0 0 1 18446744073709551616 3 0 0 - - - 0\n", 4, 3,
               "bytes: '18446744073709551616' is too large");
    expect_bad(dir, HDR "0 0 1 1 9 0 0 - - - 0\n", 4, 3, "prio: 9 is out of range (0..7)");
    expect_bad(dir, HDR "0 0 1 1 3 0 0 - - - 70000\n", 4, 3, "channel: 70000 is out of range");
    expect_bad(dir, HDR "0 0 1 1 3 0 0 - - - 0\n1 0 1 1 3 0 0 0,,0 - - 0\n", 4, 4,
               "deps: empty, expected an unsigned integer");
    expect_bad(dir, HDR "0 0 1 1 3 0 0 - - - 0\n2 0 1 1 3 0 0 - - - 0\n", 4, 4,
               "id 2 out of order: expected 1");
    expect_bad(dir, HDR "0 0 1 1 3 0 0 - - - 0\nflow 1 2\n", 4, 4, "unknown line 'flow'");
    expect_bad(dir, HDR "job 0 a%2 flows - 2\n", 4, 3, "job name: bad escape in 'a%2'");
    expect_bad(dir, HDR "job 1 a flows - 2\n", 4, 3, "job index 1 out of order: expected 0");
    expect_bad(dir, HDR "job 0 a flows - 2\ncoll 0 0 0 100\n", 4, 4,
               "coll line has 5 fields, expected 7: missing first");
    /* the DAG */
    expect_bad(dir, HDR "0 0 1 1 3 0 0 - - - 0\n1 0 9 1 3 0 0 0 - - 0\n", 8, 4,
               "transfer 1: dst 9 is not a host (hosts are 0..7)");
    expect_bad(dir, HDR "0 0 1 1 3 0 0 - - - 0\n1 0 1 1 3 0 0 0 - - 0\n2 1 0 1 3 0 0 1,7 - - 0\n",
               4, 5, "transfer 2: depends on transfer 7, which does not exist (3 transfers)");
    expect_bad(dir, HDR "0 0 1 1 3 0 0 - - - 0\n1 0 1 1 3 0 0 0,0 - - 0\n", 4, 4,
               "transfer 1: depends on transfer 0 twice");
    expect_bad(dir, HDR "0 0 1 1 3 0 0 - - - 0\n1 0 1 1 3 0 0 2 - - 0\n2 1 0 1 3 0 0 1 - - 0\n",
               4, 4, "transfer 1 is on a dependency cycle: 1 waits for 2 waits for 1");
    expect_bad(dir, HDR "0 0 1 1 3 0 0 - - - 0\n# comment\n1 0 1 1 3 0 0 1 - - 0\n", 4, 5,
               "transfer 1 is on a dependency cycle: 1 waits for 1");
    /* a cycle behind a transfer that merely waits for it: the cycle is named, not the tail */
    expect_bad(dir,
               HDR "0 0 1 1 3 0 0 - - - 0\n1 0 1 1 3 0 0 0,3 - - 0\n2 1 0 1 3 0 0 1 - - 0\n"
                   "3 1 2 1 3 0 0 4 - - 0\n4 2 1 1 3 0 0 5 - - 0\n5 1 0 1 3 0 0 3 - - 0\n",
               4, 6, "transfer 3 is on a dependency cycle: 3 waits for 4 waits for 5 waits for 3");
    expect_bad(dir, HDR "0 2 2 100 3 0 0 - - - 0\n", 4, 3,
               "transfer 0: sends 100 B from host 2 to itself");
    /* jobs and colls */
    expect_bad(dir, HDR "0 0 1 1 3 0 0 - 1 - 0\n", 4, 3, "transfer 0: job 1 does not exist (0 jobs)");
    expect_bad(dir, HDR "job 0 a flows - 2\ncoll 0 0 0 100 0 2\n0 0 1 1 3 0 0 - 0 0 0\n", 4, 4,
               "coll 0: first 0, count 2 is not a non-empty range of the 1 transfers");
    expect_bad(dir,
               HDR "job 0 a flows - 2\ncoll 0 0 0 100 0 2\n0 0 1 1 3 0 0 - 0 0 0\n"
                   "1 0 1 1 3 0 0 - 0 - 0\n",
               4, 6, "transfer 1 lies in coll 0's range (0..1) but its coll is -");
    expect_bad(dir,
               HDR "job 0 a flows - 2\njob 1 b flows - 2\ncoll 0 0 0 100 0 1\n"
                   "0 0 1 1 3 0 0 - 1 0 0\n",
               4, 6, "transfer 0: job 1 differs from its coll 0's job 0");
    test_rmtree(dir);
    g_free(dir);

    GError *err = NULL;
    CU_ASSERT_PTR_NULL(schedule_read("/nonexistent/x.sched", 4, &err));
    CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, "/nonexistent/x.sched: cannot open: "));
    CU_ASSERT(err && err->code == SCHEDULE_IO_ERROR_IO);
    g_clear_error(&err);
}

static void test_validate_in_memory(void)
{
    GError *err = NULL;
    struct schedule *s = schedule_new();
    struct transfer t = { .src = 0, .dst = 1, .bytes = 10, .prio = 3, .job = SCHEDULE_NO_JOB,
                          .coll = SCHEDULE_NO_JOB };
    uint32_t d1 = 1, d2 = 2, d0 = 0;
    schedule_add(s, &t, &d1, 1); /* 0 waits for 1 (forward: fine on its own) */
    schedule_add(s, &t, NULL, 0);
    CU_ASSERT(schedule_validate(s, 2, &err));
    schedule_add(s, &t, &d0, 1); /* 2 waits for 0: still acyclic */
    CU_ASSERT(schedule_validate(s, 2, &err));
    schedule_free(s);

    s = schedule_new();
    schedule_add(s, &t, &d1, 1);
    schedule_add(s, &t, &d2, 1);
    schedule_add(s, &t, &d0, 1);
    CU_ASSERT_FALSE(schedule_validate(s, 2, &err));
    CU_ASSERT_PTR_NOT_NULL(err && g_str_has_prefix(err->message, "transfer 0 is on a dependency "
                                                   "cycle: 0 waits for 1 waits for 2 waits for 0"));
    g_clear_error(&err);
    schedule_free(s);

    /* A collective's own schedule is valid, and a broken coll range is caught. */
    s = schedule_new();
    uint32_t ranks[] = { 0, 1, 2 };
    struct collective_spec sp;
    collective_spec_init(&sp);
    sp.name = "x";
    sp.ranks = ranks;
    sp.nranks = 3;
    sp.size = 1000;
    CU_ASSERT_FATAL(collective_build(s, &sp, &err));
    CU_ASSERT(schedule_validate(s, 3, &err));
    CU_ASSERT_FALSE(schedule_validate(s, 2, &err));
    CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, "is not a host (hosts are 0..1)"));
    g_clear_error(&err);
    g_array_index(s->colls, struct sched_coll, 0).count--;
    CU_ASSERT_FALSE(schedule_validate(s, 3, &err));
    CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, "covers transfers 1.."));
    g_clear_error(&err);
    schedule_free(s);
}

static void test_atomic_write(void)
{
    char *dir = test_tmpdir();
    char *p = g_build_filename(dir, "s.sched", NULL);
    GError *err = NULL;
    CU_ASSERT_FATAL(g_file_set_contents(p, "old contents\n", -1, NULL));
    struct schedule *s = sample();
    CU_ASSERT_FATAL(schedule_write(s, p, &err));
    /* replaced in one go, readable by others, no temporary file left behind */
    gchar *txt = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(p, &txt, NULL, NULL));
    CU_ASSERT(g_str_has_prefix(txt, SCHEDULE_FILE_VERSION_LINE));
    g_free(txt);
    struct stat st;
    CU_ASSERT_EQUAL(stat(p, &st), 0);
    CU_ASSERT_EQUAL(st.st_mode & 0777, 0644);
    GDir *d = g_dir_open(dir, 0, NULL);
    int files = 0;
    while (g_dir_read_name(d))
        files++;
    g_dir_close(d);
    CU_ASSERT_EQUAL(files, 1);

    /* a folder that does not exist: an error naming the path, nothing created */
    char *bad = g_build_filename(dir, "missing", "s.sched", NULL);
    CU_ASSERT_FALSE(schedule_write(s, bad, &err));
    CU_ASSERT_PTR_NOT_NULL(err && g_str_has_prefix(err->message, bad));
    CU_ASSERT(err && err->code == SCHEDULE_IO_ERROR_IO);
    g_clear_error(&err);
    g_free(bad);
    schedule_free(s);
    test_rmtree(dir);
    g_free(p);
    g_free(dir);
}

/* schedule_job_sinks: what `after = job` waits for, for any kind of job. */
static void test_job_sinks(void)
{
    struct schedule *s = schedule_new();
    uint32_t j0 = schedule_add_job(s, "incast", "incast", "", 3);
    uint32_t j1 = schedule_add_job(s, "next", "flows", "", 2);
    struct transfer t = { .src = 0, .dst = 1, .bytes = 10, .prio = 3, .job = j0,
                          .coll = SCHEDULE_NO_JOB };
    uint32_t a = schedule_add(s, &t, NULL, 0);    /* 0 */
    uint32_t b = schedule_add(s, &t, &a, 1);      /* 1 waits for 0 */
    schedule_add(s, &t, NULL, 0);                 /* 2, alone */
    t.job = j1;
    schedule_add(s, &t, &b, 1); /* 3: another job waiting for 1 does not hide 1 */
    GArray *k = schedule_job_sinks(s, j0);
    CU_ASSERT_EQUAL_FATAL(k->len, 2);
    CU_ASSERT_EQUAL(g_array_index(k, uint32_t, 0), 1);
    CU_ASSERT_EQUAL(g_array_index(k, uint32_t, 1), 2);
    g_array_free(k, TRUE);
    k = schedule_job_sinks(s, j1);
    CU_ASSERT_EQUAL(k->len, 1);
    g_array_free(k, TRUE);
    k = schedule_job_sinks(s, 7);
    CU_ASSERT_EQUAL(k->len, 0);
    g_array_free(k, TRUE);
    schedule_free(s);
}

/* A big collective survives the trip intact (and quickly). */
static void test_large_round_trip(void)
{
    char *dir = test_tmpdir();
    char *p = g_build_filename(dir, "big.sched", NULL);
    uint32_t ranks[16];
    for (int i = 0; i < 16; i++)
        ranks[i] = 15 - i;
    struct collective_spec sp;
    collective_spec_init(&sp);
    sp.name = "big";
    sp.ranks = ranks;
    sp.nranks = 16;
    sp.size = 256ull << 20;
    sp.iterations = 3;
    struct schedule *s = schedule_new();
    GError *err = NULL;
    CU_ASSERT_FATAL(collective_build(s, &sp, &err));
    CU_ASSERT(schedule_count(s) > 40000);
    CU_ASSERT_FATAL(schedule_write(s, p, &err));
    struct schedule *r = schedule_read(p, 16, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    assert_same(s, r);
    schedule_free(r);
    schedule_free(s);
    test_rmtree(dir);
    g_free(p);
    g_free(dir);
}

static CU_TestInfo tests[] = {
    { "round trip, every field", test_round_trip },
    { "CRLF, tabs, comments, empty schedule", test_read_lenient_whitespace },
    { "malformed files: refused with file:line", test_malformed },
    { "validate in memory", test_validate_in_memory },
    { "atomic write", test_atomic_write },
    { "job sinks for after =", test_job_sinks },
    { "large collective round trip", test_large_round_trip },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("schedule_io", tests)
