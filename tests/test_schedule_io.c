/* Schedule file: round trips, malformed files refused with the right line, validation,
 * atomic writing. */
#include <string.h>
#include <sys/stat.h>
#include "models/collective.h"
#include "models/net.h"
#include "models/schedule_io.h"
#include "models/schedule_meta.h"
#include "models/topology.h"
#include "models/workload.h"
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
        CU_ASSERT_EQUAL(x->deps_off, y->deps_off);
        CU_ASSERT_EQUAL(x->ndeps, y->ndeps);
        CU_ASSERT_EQUAL(x->delay, y->delay);
        CU_ASSERT_EQUAL(x->job, y->job);
        CU_ASSERT_EQUAL(x->coll, y->coll);
        CU_ASSERT_EQUAL(x->channel, y->channel);
    }
    CU_ASSERT(memcmp(a->deps->data, b->deps->data, sizeof(uint32_t) * a->deps->len) == 0);
    /* qp tags may be renumbered (v2 writes QP indices) but group transfers the same way */
    GArray *qa = g_array_new(FALSE, FALSE, sizeof(struct sched_qp));
    GArray *qb = g_array_new(FALSE, FALSE, sizeof(struct sched_qp));
    uint32_t *oa = NULL, *ob = NULL;
    CU_ASSERT_FATAL(schedule_derive_qps(a, qa, &oa, NULL, NULL));
    CU_ASSERT_FATAL(schedule_derive_qps(b, qb, &ob, NULL, NULL));
    CU_ASSERT_EQUAL(qa->len, qb->len);
    CU_ASSERT(memcmp(oa, ob, sizeof(uint32_t) * schedule_count(a)) == 0);
    g_free(oa);
    g_free(ob);
    g_array_free(qa, TRUE);
    g_array_free(qb, TRUE);
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
    CU_ASSERT_PTR_NOT_NULL(strstr(a, "\n0 0 0 0 3 - 42 - 0 - 0\n")); /* the start marker */
    /* 8->9 and 9->8 are the last two QPs to appear; their qp column is the QP's index */
    uint32_t nqps = r->qps->len;
    char *row = g_strdup_printf("\n%u 8 9 18446744073709551615 7 %u 18446744073709551614 "
                                "%u 2 - 65535\n", schedule_count(s) - 3, nqps - 2, schedule_count(s) - 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(a, row));
    g_free(row);
    /* Hosts 8 and 9 have no other QP, so each end numbers from 0x100: 8->9 is (0x100, 0x100),
     * fl = 0x10000, sport = 0xC000 | (0 ^ 4) = 49156; 9->8 is (0x101, 0x101), fl = 0x10201,
     * sport = 0xC000 | (0x201 ^ 4) = 49669. */
    row = g_strdup_printf("\nqp %u 8 9 7 49156\nqp %u 9 8 0 49669\n", nqps - 2, nqps - 1);
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
               "not a rocesim schedule: the first line must be '# rocesim-schedule v2'");
    expect_bad(dir, "id src dst\n", 4, 1, "not a rocesim schedule");
    expect_bad(dir, "# rocesim-schedule v3\n", 4, 1,
               "unsupported schedule version 'v3' (this rocesim reads 'v1' and 'v2')");
    expect_bad(dir, "", 4, 0, "empty file, expected '# rocesim-schedule v2'");
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


#define HDR2 "# rocesim-schedule v2\n"

/* v2: meta and qp lines are read back, and each qp line must agree with its transfers. */
static void test_v2_lines(void)
{
    char *dir = test_tmpdir();
    char *p = g_build_filename(dir, "v2.sched", NULL);
    const char *txt = HDR2 "meta hosts 4\nmeta mtu 1024\nmeta host_rate_bps 1000000000\n"
                      "meta dscp 0,8,16,26,32,40,48,56\nmeta topology sha256:ab\n"
                      "qp 0 0 1 3 50000\nqp 1 2 1 3 65535\n"
                      "0 0 0 0 3 - 5 - - - 0\n1 0 1 100 3 0 0 0 - - 0\n2 2 1 100 3 1 0 0 - - 0\n"
                      "3 0 1 7 3 0 0 1 - - 0\n";
    CU_ASSERT_FATAL(g_file_set_contents(p, txt, -1, NULL));
    GError *err = NULL;
    struct schedule *r = schedule_read(p, 0, &err);
    if (!r)
        fprintf(stderr, "%s\n", err->message);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT(r->meta.present);
    CU_ASSERT_EQUAL(r->meta.hosts, 4);
    CU_ASSERT_EQUAL(r->meta.mtu, 1024);
    CU_ASSERT_EQUAL(r->meta.host_rate_bps, 1000000000);
    CU_ASSERT_EQUAL(r->meta.dscp[3], 26);
    CU_ASSERT_STRING_EQUAL(r->meta.topology, "sha256:ab");
    CU_ASSERT_EQUAL_FATAL(r->qps->len, 2);
    CU_ASSERT_EQUAL(g_array_index(r->qps, struct sched_qp, 1).sport, 65535);
    CU_ASSERT_EQUAL(schedule_get(r, 0)->qp, SCHEDULE_NO_QP);
    CU_ASSERT_EQUAL(schedule_get(r, 3)->qp, 0);
    schedule_free(r);

    /* meta hosts bounds the hosts when the caller does not know them */
    expect_bad(dir, HDR2 "meta hosts 2\n0 0 0 0 3 - 0 - - - 0\n1 0 3 0 3 - 0 - - - 0\n", 0, 4,
               "dst 3 is not a host (hosts are 0..1)");
    expect_bad(dir, HDR2 "qp 0 0 1 3 50000\n0 0 1 100 4 0 0 - - - 0\n", 4, 3,
               "qp 0 is src 0 dst 1 prio 3, but this transfer is src 0 dst 1 prio 4");
    expect_bad(dir, HDR2 "0 0 1 100 3 0 0 - - - 0\n", 4, 2, "qp 0 has no qp line before it");
    expect_bad(dir, HDR2 "0 0 1 100 3 - 0 - - - 0\n", 4, 2, "'-' (no QP) is only for markers");
    expect_bad(dir, HDR2 "qp 0 0 1 3 50000\n0 0 0 0 3 0 0 - - - 0\n", 4, 3, "a marker (bytes 0) uses no QP");
    expect_bad(dir, HDR2 "qp 0 0 1 3 4791\n", 4, 2, "qp sport: 4791 is outside the RoCEv2 entropy range");
    expect_bad(dir, HDR2 "qp 1 0 1 3 50000\n", 4, 2, "qp index 1 out of order: expected 0");
    expect_bad(dir, HDR2 "qp 0 1 1 3 50000\n", 4, 2, "qp 0: src and dst are both host 1");
    expect_bad(dir, HDR2 "qp 0 0 1 3\n", 4, 2, "qp line has 5 fields, expected 6: missing sport");
    expect_bad(dir, HDR2 "meta color blue\n", 4, 2, "unknown meta key 'color'");
    expect_bad(dir, HDR2 "meta dscp 1,2,3\n", 4, 2, "meta dscp: '1,2,3' has 3 values, expected 8");
    expect_bad(dir, HDR2 "meta dscp 0,0,0,64,0,0,0,0\n", 4, 2, "meta dscp: 64 is out of range (0..63)");
    expect_bad(dir, HDR2 "meta mtu 0\n", 4, 2, "meta mtu: 0 is not a payload size");
    expect_bad(dir, HDR "qp 0 0 1 3 50000\n", 4, 3, "qp lines need a v2 schedule");
    expect_bad(dir, HDR "meta hosts 4\n", 4, 3, "meta lines need a v2 schedule");
    test_rmtree(dir);
    g_free(p);
    g_free(dir);
}

/* One priority per QP: a v1 file whose QP changes priority is refused at the later transfer's
 * line, naming the first one (the simulator used to take the first transfer's silently). */
static void test_one_prio_per_qp(void)
{
    char *dir = test_tmpdir();
    expect_bad(dir, HDR "0 0 1 100 3 7 0 - - - 0\n1 0 1 100 3 8 0 - - - 0\n2 0 1 100 5 7 0 0 - - 0\n", 4, 5,
               "transfer 2: priority 5 differs from priority 3 of transfer 0 on the same QP (src 0, dst 1, qp 7)");
    /* the same tag between other hosts is another QP */
    const char *ok = HDR "0 0 1 100 3 7 0 - - - 0\n1 1 0 100 5 7 0 - - - 0\n";
    char *p = g_build_filename(dir, "ok.sched", NULL);
    CU_ASSERT_FATAL(g_file_set_contents(p, ok, -1, NULL));
    GError *err = NULL;
    struct schedule *r = schedule_read(p, 4, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->qps->len, 2); /* derived for v1 */
    schedule_free(r);
    test_rmtree(dir);
    g_free(p);
    g_free(dir);
}

/* Flow label <-> UDP source port for every port the simulator can choose (0xC000..0xFFFF):
 * mlx5 maps a label fl to 0xC000 | (fl[13:0] ^ fl[19:14]) (replay.md section 2), and label 0
 * must never be used because it means "hash the QP numbers". */
static void test_flow_label_every_sport(void)
{
    for (uint32_t sp = 0xC000; sp <= 0xFFFF; sp++) {
        uint32_t fl = roce_flow_label_for_sport((uint16_t)sp);
        CU_ASSERT(fl != 0 && fl < (1u << 20));
        if (roce_sport_of_flow_label(fl) != sp) {
            CU_FAIL("flow label does not give the source port back");
            break;
        }
    }
    /* hand values: 0xC000 is reached through fl = 0x4001 (0x0001 ^ 0x01 = 0) */
    CU_ASSERT_EQUAL(roce_flow_label_for_sport(0xC000), 0x4001);
    CU_ASSERT_EQUAL(roce_sport_of_flow_label(0x4001), 0xC000);
    CU_ASSERT_EQUAL(roce_flow_label_for_sport(0xC123), 0x0123);
    CU_ASSERT_EQUAL(roce_sport_of_flow_label(0xFFFFF), 0xC000 | (0x3FFF ^ 0x3F));
}

/* The QP lines carry the ports the simulated NIC really uses: build the net of a scenario and
 * compare QP by QP (same order, same ends, same priority, same source port). */
static void test_qp_lines_match_simulator(void)
{
    GError *err = NULL;
    char *path = test_data_path("../../scenarios/incast.ini");
    struct scenario *sc = scenario_load(path, NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
    struct topology *t = topology_build(sc, &err);
    struct schedule *s = workload_build_all(sc, t, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    struct net *n = net_build(sc, t, s, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(n);
    CU_ASSERT_FATAL(schedule_derive_qps(s, s->qps, NULL, NULL, &err));
    CU_ASSERT_EQUAL_FATAL(s->qps->len, n->nqps);
    for (uint32_t q = 0; q < n->nqps; q++) {
        const struct sched_qp *a = &g_array_index(s->qps, struct sched_qp, q);
        CU_ASSERT_EQUAL(a->src, n->qps[q].src);
        CU_ASSERT_EQUAL(a->dst, n->qps[q].dst);
        CU_ASSERT_EQUAL(a->prio, n->qps[q].prio);
        CU_ASSERT_EQUAL(a->sport, n->qps[q].sport);
    }
    /* a v2 file carries the ports; the QP numbers follow from the qp lines' order */
    char *dir = test_tmpdir(), *file = g_build_filename(dir, "incast.sched", NULL);
    CU_ASSERT_FATAL(schedule_write(s, file, &err));
    struct schedule *r = schedule_read(file, 0, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL_FATAL(r->qps->len, n->nqps);
    for (uint32_t q = 0; q < n->nqps; q++) {
        const struct sched_qp *a = &g_array_index(r->qps, struct sched_qp, q);
        CU_ASSERT_EQUAL(a->sport, n->qps[q].sport);
        CU_ASSERT_EQUAL(a->lqpn, n->qresp[q].lqpn);
        CU_ASSERT_EQUAL(a->rqpn, n->qresp[q].rqpn);
    }
    schedule_free(r);
    test_rmtree(dir);
    g_free(file);
    g_free(dir);
    /* meta from the scenario */
    schedule_set_meta(s, sc, t);
    CU_ASSERT_EQUAL(s->meta.hosts, t->nhosts);
    CU_ASSERT_EQUAL(s->meta.mtu, sc->mtu);
    CU_ASSERT(g_str_has_prefix(s->meta.topology, "sha256:") && strlen(s->meta.topology) == 7 + 64);
    net_free(n);
    schedule_free(s);
    topology_free(t);
    scenario_free(sc);
    g_free(path);
}

static CU_TestInfo tests[] = {
    { "round trip, every field", test_round_trip },
    { "CRLF, tabs, comments, empty schedule", test_read_lenient_whitespace },
    { "malformed files: refused with file:line", test_malformed },
    { "validate in memory", test_validate_in_memory },
    { "atomic write", test_atomic_write },
    { "job sinks for after =", test_job_sinks },
    { "large collective round trip", test_large_round_trip },
    { "v2 meta and qp lines", test_v2_lines },
    { "one priority per QP", test_one_prio_per_qp },
    { "flow label <-> UDP source port, every port", test_flow_label_every_sport },
    { "qp lines = the simulator's QPs and ports", test_qp_lines_match_simulator },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("schedule_io", tests)
