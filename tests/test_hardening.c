/* Issue 17 regression tests: inputs that once crashed, lost data or were accepted although
 * wrong. Each test names the defect it guards; scenarios are written to a temporary folder so
 * a test shows its whole input. */
#include <glib/gstdio.h>
#include <signal.h>
#include <sys/wait.h>
#include <string.h>
#include "models/topology.h"
#include "models/cc.h"
#include "models/cc_dcqcn.h"
#include "models/scenario.h"
#include "sim/units.h"
#include "tests/testutil.h"

/* ---- helpers ---- */

/* Writes NAME with CONTENTS into DIR; returns the path (g_free). */
static char *put_file(const char *dir, const char *name, const char *contents)
{
    char *p = g_build_filename(dir, name, NULL);
    CU_ASSERT_FATAL(g_file_set_contents(p, contents, -1, NULL));
    return p;
}

/* Loads scenario text (written as DIR/s.ini); NULL and *msg (g_free) on error. */
static struct scenario *load_text(const char *dir, const char *text, char **msg)
{
    char *p = put_file(dir, "s.ini", text);
    GError *err = NULL;
    struct scenario *s = scenario_load(p, NULL, &err);
    *msg = err ? g_strdup(err->message) : NULL;
    g_clear_error(&err);
    g_free(p);
    return s;
}

/* Loads scenario text that must be refused with a message containing every NULL-terminated
 * WANT string. */
static void refused(const char *text, const char *const *want)
{
    char *dir = test_tmpdir(), *msg = NULL;
    struct scenario *s = load_text(dir, text, &msg);
    CU_ASSERT_PTR_NULL(s);
    if (s) {
        fprintf(stderr, "\n  accepted:\n%s\n", text);
        scenario_free(s);
    }
    for (int i = 0; msg && want[i]; i++)
        if (!strstr(msg, want[i])) {
            fprintf(stderr, "\n  message '%s' lacks '%s'\n", msg, want[i]);
            CU_FAIL("message");
        }
    g_free(msg);
    test_rmtree(dir);
    g_free(dir);
}

#define WORKLOAD "[workload w]\nkind = incast\nsenders = 1\nreceiver = 0\nsize = 4KB\n"

/* Builds the topology of an edge-list scenario; *msg is the error (g_free) or NULL. */
static struct topology *edges_topology(const char *edges, char **msg)
{
    char *dir = test_tmpdir();
    char *ep = put_file(dir, "t.topo", edges);
    struct scenario *s = load_text(dir, "[topology]\nkind = edges\nfile = t.topo\n" WORKLOAD, msg);
    struct topology *t = NULL;
    if (s) {
        GError *err = NULL;
        t = topology_build(s, &err);
        if (!t)
            *msg = g_strdup(err->message);
        g_clear_error(&err);
        scenario_free(s);
    }
    g_free(ep);
    test_rmtree(dir);
    g_free(dir);
    return t;
}

/* ---- memory errors ---- */

/* `link h0  s0 ...` (two spaces): the field compaction freed a token twice. */
static void test_edges_repeated_blanks(void)
{
    char *msg = NULL;
    struct topology *t = edges_topology("host  h0\nhost h1\t\t\nswitch   s0\n"
                                        "link h0  s0 100Gbps\t 1us\nlink  h1 s0   100Gbps 1us  \n", &msg);
    if (!t)
        fprintf(stderr, "\n  %s\n", msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->nhosts, 2);
    CU_ASSERT_EQUAL(t->nnodes, 3);
    CU_ASSERT_EQUAL(t->nports, 4);
    CU_ASSERT_EQUAL(t->ports[t->nodes[0].first_port].rate_bps, 100000000000ull);
    topology_free(t);
    g_free(msg);
}

/* Hosts and no switch: memcpy from the empty switch array's NULL data. */
static void test_edges_no_switch(void)
{
    char *msg = NULL;
    struct topology *t = edges_topology("host h0\nhost h1\nlink h0 h1 100Gbps 1us\n", &msg);
    CU_ASSERT_PTR_NULL(t);
    topology_free(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "t.topo"));
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "switch"));
    g_free(msg);
}

/* [workload] and [fault] without a name: the name was read past the end of the group name. */
static void test_nameless_sections(void)
{
    refused("[workload]\nkind = incast\nsenders = 1\nreceiver = 0\nsize = 4KB\n",
            (const char *const[]){ "[workload]", "needs a name", NULL });
    refused(WORKLOAD "[fault]\nkind = nic-stall\nnode = host0\nat = 1us\n",
            (const char *const[]){ "[fault]", "needs a name", NULL });
}

/* ---- data loss: -o, names, signals ---- */

/* Names in DIR other than KEEP (NULL-terminated), joined by spaces: leftovers such as
 * OUT.tmp-XXXXXX or OUT.old-XXXXXX. */
static char *others_in(const char *dir, const char *const *keep)
{
    GString *g = g_string_new(NULL);
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *e;
    while (d && (e = g_dir_read_name(d))) {
        gboolean kept = FALSE;
        for (int i = 0; keep[i]; i++)
            kept |= !strcmp(e, keep[i]);
        if (!kept)
            g_string_append_printf(g, "%s%s", g->len ? " " : "", e);
    }
    if (d)
        g_dir_close(d);
    return g_string_free(g, FALSE);
}

static void assert_file_is(const char *path, const char *want)
{
    char *text = NULL;
    CU_ASSERT_TRUE(g_file_get_contents(path, &text, NULL, NULL));
    CU_ASSERT_STRING_EQUAL(text ? text : "", want);
    g_free(text);
}

static int run_minimal(const char *out, char **err)
{
    char *sc = test_data_path("minimal.ini");
    const char *args[] = { "run", sc, "-o", out, "-q", "--no-plots", NULL };
    int rc = test_rocesim(args, NULL, NULL, err);
    g_free(sc);
    return rc;
}

/* -o on a folder rocesim did not write: refused with exit 2, its files untouched. */
static void test_output_foreign_folder(void)
{
    char *tmp = test_tmpdir();
    char *mine = g_build_filename(tmp, "mine", NULL);
    g_mkdir(mine, 0755);
    char *keep = put_file(mine, "thesis.tex", "years of work\n");
    char *err = NULL;
    CU_ASSERT_EQUAL(run_minimal(mine, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, mine));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "not replacing it"));
    assert_file_is(keep, "years of work\n");
    char *left = others_in(tmp, (const char *const[]){ "mine", NULL });
    CU_ASSERT_STRING_EQUAL(left, "");
    char *inside = others_in(mine, (const char *const[]){ "thesis.tex", NULL });
    CU_ASSERT_STRING_EQUAL(inside, "");
    g_free(inside);
    g_free(left);
    g_free(err);
    g_free(keep);
    g_free(mine);
    test_rmtree(tmp);
    g_free(tmp);
}

/* -o on a regular file: refused with exit 2; no FILE.old-XXXXXX left beside it. */
static void test_output_regular_file(void)
{
    char *tmp = test_tmpdir();
    char *file = put_file(tmp, "notes.txt", "keep me\n");
    char *err = NULL;
    CU_ASSERT_EQUAL(run_minimal(file, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a folder"));
    assert_file_is(file, "keep me\n");
    char *left = others_in(tmp, (const char *const[]){ "notes.txt", NULL });
    CU_ASSERT_STRING_EQUAL(left, "");
    g_free(left);
    g_free(err);
    g_free(file);
    test_rmtree(tmp);
    g_free(tmp);
}

/* A folder rocesim wrote is replaced by the next run (the marker says whose it is); a
 * trailing slash names the same folder. */
static void test_output_replaces_own(void)
{
    char *tmp = test_tmpdir();
    char *out = g_build_filename(tmp, "res", NULL);
    char *slash = g_strconcat(out, "/", NULL);
    CU_ASSERT_EQUAL(run_minimal(out, NULL), 0);
    char *marker = g_build_filename(out, ".rocesim-results", NULL);
    CU_ASSERT_TRUE(g_file_test(marker, G_FILE_TEST_IS_REGULAR));
    CU_ASSERT_EQUAL(run_minimal(slash, NULL), 0);
    char *left = others_in(tmp, (const char *const[]){ "res", NULL });
    CU_ASSERT_STRING_EQUAL(left, "");
    char *summary = g_build_filename(out, "summary.json", NULL);
    CU_ASSERT_TRUE(g_file_test(summary, G_FILE_TEST_IS_REGULAR));
    g_free(summary);
    g_free(left);
    g_free(marker);
    g_free(slash);
    g_free(out);
    test_rmtree(tmp);
    g_free(tmp);
}

/* name = ../../victim: the default results/NAME stays one folder inside results/. */
static void test_name_stays_in_results(void)
{
    char *tmp = test_tmpdir();
    char *work = g_build_filename(tmp, "a", "work", NULL);
    char *victim = g_build_filename(tmp, "victim", NULL);
    g_mkdir_with_parents(work, 0755);
    g_mkdir(victim, 0755);
    char *keep = put_file(victim, "data.csv", "1,2,3\n");
    char *sc = put_file(work, "s.ini", "[scenario]\nname = ../../victim\n" WORKLOAD);
    char *bin = g_canonicalize_filename(test_rocesim_bin(), NULL);
    char *cmd = g_strdup_printf("cd '%s' && '%s' run s.ini -q --no-plots", work, bin);
    char *out = NULL;
    CU_ASSERT_EQUAL(test_run(cmd, &out), 0);
    assert_file_is(keep, "1,2,3\n");
    char *left = others_in(victim, (const char *const[]){ "data.csv", NULL });
    CU_ASSERT_STRING_EQUAL(left, "");
    /* "../../victim": each '/' becomes '_', and the leading '.' too */
    char *res = g_build_filename(work, "results", NULL);
    char *listing = others_in(res, (const char *const[]){ NULL });
    CU_ASSERT_STRING_EQUAL(listing, "_._.._victim");
    g_free(listing);
    g_free(res);
    g_free(left);
    g_free(out);
    g_free(cmd);
    g_free(bin);
    g_free(sc);
    g_free(keep);
    g_free(victim);
    g_free(work);
    test_rmtree(tmp);
    g_free(tmp);
}

/* SIGTERM / SIGINT during the simulation: the temporary folder is removed, no results folder
 * appears, and the process ends by that signal. */
static void interrupt_run(int sig)
{
    char *tmp = test_tmpdir();
    char *sc = put_file(tmp, "long.ini",
                        "[scenario]\nstop = 1s\n[topology]\nleaves = 4\nhosts_per_leaf = 8\n"
                        "[workload p]\nkind = permutation\nhosts = 0-31\nsize = 1GB\n");
    char *out = g_build_filename(tmp, "res", NULL);
    const char *argv[] = { test_rocesim_bin(), "run", sc, "-o", out, "-q", "--no-plots", NULL };
    GPid pid;
    CU_ASSERT_FATAL(g_spawn_async(NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &pid, NULL));
    /* kill once the temporary folder exists (the run is under way), at most 20 s */
    char *tmpdir_seen = NULL;
    for (int i = 0; i < 2000 && !tmpdir_seen; i++) {
        g_usleep(10000);
        char *l = others_in(tmp, (const char *const[]){ "long.ini", NULL });
        if (*l)
            tmpdir_seen = l;
        else
            g_free(l);
    }
    CU_ASSERT_PTR_NOT_NULL(tmpdir_seen);
    CU_ASSERT_PTR_NOT_NULL(tmpdir_seen ? strstr(tmpdir_seen, "res.tmp-") : NULL);
    g_usleep(300000);
    kill(pid, sig);
    int status = 0;
    waitpid(pid, &status, 0);
    g_spawn_close_pid(pid);
    CU_ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig);
    char *left = others_in(tmp, (const char *const[]){ "long.ini", NULL });
    if (*left)
        fprintf(stderr, "\n  left behind: %s\n", left);
    CU_ASSERT_STRING_EQUAL(left, "");
    g_free(left);
    g_free(tmpdir_seen);
    g_free(out);
    g_free(sc);
    test_rmtree(tmp);
    g_free(tmp);
}

static void test_sigterm_cleans_up(void) { interrupt_run(SIGTERM); }
static void test_sigint_cleans_up(void) { interrupt_run(SIGINT); }

/* ---- full disks: exit 1, no partial file ---- */

/* A tmpfs of SIZE_K KiB mounted on a fresh folder (root only); NULL, with a note, when
 * mounting is not possible here. test_umount() removes it. */
static char *small_disk(unsigned size_k)
{
    char *dir = test_tmpdir();
    char *cmd = g_strdup_printf("mount -t tmpfs -o size=%uk tmpfs '%s' 2>/dev/null", size_k, dir);
    int rc = test_run(cmd, NULL);
    g_free(cmd);
    if (rc != 0) {
        printf("\n    (cannot mount a tmpfs: full-disk check skipped) ");
        g_rmdir(dir);
        g_free(dir);
        return NULL;
    }
    return dir;
}

static void test_umount(char *dir)
{
    char *cmd = g_strdup_printf("umount '%s'", dir);
    CU_ASSERT_EQUAL(test_run(cmd, NULL), 0);
    g_free(cmd);
    g_rmdir(dir);
    g_free(dir);
}

/* Leaves FREE_K KiB free on DISK (a filler file takes the rest). */
static void leave_free(const char *disk, unsigned total_k, unsigned free_k)
{
    char *cmd = g_strdup_printf("dd if=/dev/zero of='%s/filler' bs=4k count=%u 2>/dev/null", disk,
                                (total_k - free_k) / 4);
    CU_ASSERT_EQUAL(test_run(cmd, NULL), 0);
    g_free(cmd);
}

/* Every PNG ends with its IEND chunk and every SVG with </svg>; no empty file anywhere. */
static int partial_files(const char *dir)
{
    int bad = 0;
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *e;
    while (d && (e = g_dir_read_name(d))) {
        char *p = g_build_filename(dir, e, NULL);
        gchar *t = NULL;
        gsize n = 0;
        if (g_file_test(p, G_FILE_TEST_IS_DIR)) {
            bad += partial_files(p);
        } else if (g_file_get_contents(p, &t, &n, NULL)) {
            gboolean cut = n == 0;
            if (g_str_has_suffix(e, ".png"))
                cut |= n < 12 || memcmp(t + n - 8, "IEND\xae\x42\x60\x82", 8) != 0;
            if (g_str_has_suffix(e, ".svg"))
                cut |= !strstr(t, "</svg>");
            if (cut)
                fprintf(stderr, "\n  partial file %s (%zu bytes)\n", p, (size_t)n);
            bad += cut;
        }
        g_free(t);
        g_free(p);
    }
    if (d)
        g_dir_close(d);
    return bad;
}

/* No room for the data files: exit 1, neither the folder nor its temporary sibling left. */
static void test_full_disk_data(void)
{
    char *disk = small_disk(32);
    if (!disk)
        return;
    char *out = g_build_filename(disk, "res", NULL), *err = NULL;
    CU_ASSERT_EQUAL(run_minimal(out, &err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "disk full"));
    char *left = others_in(disk, (const char *const[]){ NULL });
    CU_ASSERT_STRING_EQUAL(left, "");
    g_free(left);
    g_free(err);
    g_free(out);
    test_umount(disk);
}

/* Room for the data but not for the figures (gnuplot exits 0 with a cut PNG and an empty
 * SVG): exit 1 even with --quiet, and no partial figure. */
static void test_full_disk_plots(void)
{
    char *disk = small_disk(1024);
    if (!disk)
        return;
    leave_free(disk, 1024, 112); /* the minimal run's data files take 68 KiB */
    char *out = g_build_filename(disk, "res", NULL), *err = NULL;
    char *sc = test_data_path("minimal.ini");
    const char *args[] = { "run", sc, "-o", out, "-q", NULL };
    CU_ASSERT_EQUAL(test_rocesim(args, NULL, NULL, &err), 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "disk full"));
    CU_ASSERT_EQUAL(partial_files(disk), 0);
    /* `rocesim plot` on the same full disk: exit 1 too */
    const char *plot[] = { "plot", out, NULL };
    CU_ASSERT_EQUAL(test_rocesim(plot, NULL, NULL, NULL), 1);
    CU_ASSERT_EQUAL(partial_files(disk), 0);
    g_free(sc);
    g_free(err);
    g_free(out);
    test_umount(disk);
}

/* pcap-stats on a full disk: exit 1 as the README says (it was 2), nothing left behind. */
static void test_full_disk_pcap_stats(void)
{
    char *tmp = test_tmpdir();
    char *sc = put_file(tmp, "cap.ini", "[output]\npcap = host1\n" WORKLOAD);
    char *res = g_build_filename(tmp, "res", NULL);
    const char *args[] = { "run", sc, "-o", res, "-q", "--no-plots", NULL };
    CU_ASSERT_EQUAL_FATAL(test_rocesim(args, NULL, NULL, NULL), 0);
    char *cap = g_build_filename(res, "host1-0.pcap", NULL);
    CU_ASSERT_TRUE_FATAL(g_file_test(cap, G_FILE_TEST_IS_REGULAR));
    char *disk = small_disk(16);
    if (disk) {
        leave_free(disk, 16, 0);
        char *out = g_build_filename(disk, "stats", NULL);
        const char *st[] = { "pcap-stats", cap, "-o", out, NULL };
        char *err = NULL;
        CU_ASSERT_EQUAL(test_rocesim(st, NULL, NULL, &err), 1);
        char *left = others_in(disk, (const char *const[]){ "filler", NULL });
        CU_ASSERT_STRING_EQUAL(left, "");
        g_free(left);
        g_free(err);
        g_free(out);
        test_umount(disk);
    }
    g_free(cap);
    g_free(res);
    g_free(sc);
    test_rmtree(tmp);
    g_free(tmp);
}

/* ---- bad values: numbers parsed exactly ---- */

static void assert_size(const char *text, uint64_t want)
{
    uint64_t v = 0;
    char *why = NULL;
    gboolean ok = units_parse_size(text, &v, &why);
    if (!ok || v != want)
        fprintf(stderr, "\n  '%s': ok=%d value %" G_GUINT64_FORMAT " want %" G_GUINT64_FORMAT " (%s)\n", text, ok,
                v, want, why ? why : "");
    CU_ASSERT_TRUE(ok && v == want);
    g_free(why);
}

/* TEXT refused by PARSE with a message containing WANT. */
static void assert_refused(gboolean (*parse)(const char *, uint64_t *, char **), const char *text,
                           const char *want)
{
    uint64_t v = 0;
    char *why = NULL;
    gboolean ok = parse(text, &v, &why);
    if (ok || !why || !strstr(why, want))
        fprintf(stderr, "\n  '%s': ok=%d value %" G_GUINT64_FORMAT ", message '%s' (want '%s')\n", text, ok, v,
                why ? why : "", want);
    CU_ASSERT_FALSE(ok);
    CU_ASSERT_PTR_NOT_NULL(why ? strstr(why, want) : NULL);
    g_free(why);
}

static void test_units_exact(void)
{
    /* 2^53 + 1 is not a double: a double-based parser gives ...992 */
    assert_size("9007199254740993B", 9007199254740993ull);
    assert_size("18446744073709551615B", UINT64_MAX);
    assert_size("1e3B", 1000);
    assert_size("1.5e3B", 1500);
    assert_size("0.000001MB", 1);
    assert_size("16777217KiB", 16777217ull * 1024); /* 2^24 + 1 KiB */
    uint64_t ps = 0;
    char *why = NULL;
    CU_ASSERT_TRUE(units_parse_time("0.1s", &ps, &why) && ps == 100000000000ull);
    CU_ASSERT_TRUE(units_parse_time("18446744073709551615ps", &ps, &why) && ps == UINT64_MAX);
    CU_ASSERT_TRUE(units_parse_time("3.000000000001s", &ps, &why) && ps == 3000000000001ull);
    g_free(why);
}

static void test_units_refused(void)
{
    assert_refused(units_parse_size, "\v-4KB", "");            /* was 18446744073709547616 B */
    assert_refused(units_parse_size, "\f4KB", "");
    assert_refused(units_parse_size, "0x10MB", "decimal");
    assert_refused(units_parse_size, "0x1p20B", "decimal");
    assert_refused(units_parse_time, "+1ms", "digits");
    assert_refused(units_parse_size, "infB", "not a size");
    assert_refused(units_parse_time, "nanms", "not a time");
    assert_refused(units_parse_size, "18446744073709551616B", "too large");
    assert_refused(units_parse_size, "1e20B", "too large");
    assert_refused(units_parse_size, "1e400B", "too large");
    assert_refused(units_parse_size, "1.B", "digits");
    assert_refused(units_parse_size, ".5KB", "digits");
    assert_refused(units_parse_size, "1e-400KB", "not a whole number");
    assert_refused(units_parse_size, "1 2KB", "unknown unit");
    assert_refused(units_parse_rate, "1e", "");
}

/* ---- bad values: scenario keys ---- */

static struct scenario *load_ok_text(const char *text)
{
    char *dir = test_tmpdir(), *msg = NULL;
    struct scenario *s = load_text(dir, text, &msg);
    if (!s)
        fprintf(stderr, "\n  refused: %s\n", msg);
    CU_ASSERT_PTR_NOT_NULL(s);
    g_free(msg);
    test_rmtree(dir);
    g_free(dir);
    return s;
}

static void test_seed_full_range(void)
{
    struct scenario *s = load_ok_text("[scenario]\nseed = 18446744073709551615\n" WORKLOAD);
    if (s)
        CU_ASSERT_EQUAL(s->seed, UINT64_MAX);
    scenario_free(s);
    refused("[scenario]\nseed = 18446744073709551616\n" WORKLOAD,
            (const char *const[]){ "[scenario] seed", "18446744073709551616", NULL });
}

static void test_doubles_decimal_only(void)
{
    const char *bad[] = { "0x0.2", "inf", "nan", "+0.2", " \v0.2", "1e400", ".2" };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *t = g_strdup_printf("[switch]\necn_pmax = %s\n" WORKLOAD, bad[i]);
        refused(t, (const char *const[]){ "[switch] ecn_pmax", NULL });
        g_free(t);
    }
    struct scenario *s = load_ok_text("[switch]\necn_pmax = 2.5e-1\n" WORKLOAD);
    if (s)
        CU_ASSERT_DOUBLE_EQUAL(s->ecn_pmax, 0.25, 1e-15);
    scenario_free(s);
}

static void test_cable_length(void)
{
    const char *bad[] = { "infm", "1e308m", "nanm", "-5m", "0x10m", "100001m", "10 km" };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *t = g_strdup_printf("[switch]\ncable_length = %s\n" WORKLOAD, bad[i]);
        refused(t, (const char *const[]){ "[switch] cable_length", bad[i], NULL });
        g_free(t);
    }
    struct scenario *s = load_ok_text("[switch]\ncable_length = 2.5m\n" WORKLOAD);
    if (s)
        CU_ASSERT_DOUBLE_EQUAL(s->cable_length_m, 2.5, 1e-12);
    scenario_free(s);
}

static void test_buffer_parts_fit(void)
{
    refused("[switch]\nbuffer = 1MB\nreserve = 2MB\n" WORKLOAD,
            (const char *const[]){ "[switch] reserve", "2MB", "buffer", NULL });
    refused("[switch]\nbuffer = 1MB\nheadroom = 1000001B\n" WORKLOAD,
            (const char *const[]){ "[switch] headroom", "1000001B", NULL });
    refused("[switch]\nbuffer = 1MB\nxon_offset = 1001KB\n" WORKLOAD,
            (const char *const[]){ "[switch] xon_offset", "1001KB", NULL });
    refused("[nic]\nrx_buffer = 0B\n" WORKLOAD, (const char *const[]){ "[nic] rx_buffer", "0B", NULL });
    refused("[switch]\nbuffer = 4GiB\n" WORKLOAD,
            (const char *const[]){ "[switch] buffer", "4294967295B", NULL }); /* the real limit */
}

/* Derived defaults computed without overflow: Kmin = 100 KB x rate / 25 Gb/s (HPCC), so
 * 200 Tb/s gives 100 KB x 8000 = 800 MB and Kmax 3.2 GB; hpcc_ns3's AI rate is 5 Mb/s x
 * rate / 25 Gb/s: 10 Tb/s gives 2 Gb/s, HAI 20 Gb/s. */
static void test_derived_no_overflow(void)
{
    struct scenario *s = load_ok_text("[topology]\nhost_rate = 200Tbps\n[switch]\nbuffer = 4000000000B\n" WORKLOAD);
    if (s) {
        CU_ASSERT_EQUAL(s->ecn_kmin, 800000000ull);
        CU_ASSERT_EQUAL(s->ecn_kmax, 3200000000ull);
    }
    scenario_free(s);
    s = load_ok_text("[topology]\nhost_rate = 10Tbps\n[nic]\ncc_preset = hpcc_ns3\n" WORKLOAD);
    if (s) {
        CU_ASSERT_EQUAL(cc_dcqcn_params(s)->rpg_ai_rate, 2000000000ull);
        CU_ASSERT_EQUAL(cc_dcqcn_params(s)->rpg_hai_rate, 20000000000ull);
    }
    scenario_free(s);
}

/* GLib merges a repeated [group] silently; the second one is refused with both lines. */
static void test_duplicate_sections(void)
{
    refused("[switch]\nbuffer = 16MB\n" WORKLOAD "[switch]\necn = off\n",
            (const char *const[]){ "[switch]", "line 8", "line 1", NULL });
    refused(WORKLOAD "[workload w]\nprio = 1\n", (const char *const[]){ "[workload w]", "line 6", NULL });
}

/* Runs `rocesim check` on scenario TEXT (plus extra files); returns the exit status and the
 * output in *out. */
static int check_text(const char *text, const char *fname, const char *fcontents, char **out)
{
    char *dir = test_tmpdir();
    char *sc = put_file(dir, "s.ini", text);
    char *extra = fname ? put_file(dir, fname, fcontents) : NULL;
    const char *args[] = { "check", sc, NULL };
    char *so = NULL, *se = NULL;
    int rc = test_rocesim(args, NULL, &so, &se);
    *out = g_strconcat(so ? so : "", se ? se : "", NULL);
    g_free(so);
    g_free(se);
    g_free(extra);
    g_free(sc);
    test_rmtree(dir);
    g_free(dir);
    return rc;
}

static void test_transfer_size_cap(void)
{
    char *out = NULL;
    CU_ASSERT_EQUAL(check_text("[workload w]\nkind = incast\nsenders = 1\nreceiver = 0\n"
                               "size = 18446744073709551615B\n", NULL, NULL, &out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "[workload w] size"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "at most 16TiB"));
    g_free(out);
}

static void test_start_wrap(void)
{
    char *out = NULL;
    CU_ASSERT_EQUAL(check_text("[workload f]\nkind = flows\nfile = f.csv\nstart = 1ps\n", "f.csv",
                               "src,dst,bytes,start\n0,1,4KB,18446744073709551615ps\n", &out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "f.csv:2"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "213 days"));
    g_free(out);
}

/* Two islands: check names a pair that cannot reach each other instead of the run timing out. */
static void test_disconnected_edges(void)
{
    char *out = NULL;
    CU_ASSERT_EQUAL(check_text("[topology]\nkind = edges\nfile = t.topo\n" WORKLOAD, "t.topo",
                               "host h0\nhost h1\nswitch s0\nswitch s1\n"
                               "link h0 s0 100Gbps 1us\nlink h1 s1 100Gbps 1us\n", &out), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "t.topo"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "h0 and h1 cannot reach each other"));
    g_free(out);
}

/* A flows file saved with a UTF-8 byte order mark: the invisible bytes made the header
 * "wrong" while the message quoted what looked like the expected header. */
static void test_flows_bom(void)
{
    char *out = NULL;
    int rc = check_text("[workload f]\nkind = flows\nfile = f.csv\n", "f.csv",
                        "\xEF\xBB\xBFsrc,dst,bytes,start\n0,1,4KB,0ps\n", &out);
    if (rc != 0)
        fprintf(stderr, "\n  %s\n", out);
    CU_ASSERT_EQUAL(rc, 0);
    g_free(out);
}

/* ---- memory and time blow-ups ---- */

static void test_memory_estimate(void)
{
    char *out = NULL;
    /* 4096 x 4096 x 4096: within every key's limit, but 2^24 hosts and as many leaf-spine
     * links: 2^26 ports of over 1 KB each, more than 64 GiB */
    gint64 t0 = g_get_monotonic_time();
    CU_ASSERT_EQUAL(check_text("[topology]\nleaves = 4096\nspines = 4096\nhosts_per_leaf = 4096\n" WORKLOAD,
                               NULL, NULL, &out), 2);
    CU_ASSERT(g_get_monotonic_time() - t0 < 5 * G_USEC_PER_SEC); /* was 70 s, then a GLib abort */
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "leaves = 4096, spines = 4096, hosts_per_leaf = 4096"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "more than the memory limit"));
    g_free(out);
    /* 64 GB ring AllReduce over 1024 ranks: about 5e8 transfers */
    CU_ASSERT_EQUAL(check_text("[topology]\nleaves = 32\nhosts_per_leaf = 32\nspines = 8\n[workload ar]\n"
                               "kind = allreduce\nranks = 0-1023\nsize = 64GB\nalgorithm = ring\n", NULL, NULL, &out),
                    2);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "[workload ar]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "raise chunk"));
    g_free(out);
    /* --max-memory: a 64 x 64 x 64 fabric (4096 hosts) does not fit in 1MB */
    char *dir = test_tmpdir();
    char *sc = put_file(dir, "s.ini", "[topology]\nleaves = 64\nspines = 64\nhosts_per_leaf = 64\n" WORKLOAD);
    const char *args[] = { "check", sc, "--max-memory", "1MB", NULL };
    char *se = NULL;
    CU_ASSERT_EQUAL(test_rocesim(args, NULL, NULL, &se), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(se, "(--max-memory)"));
    g_free(se);
    const char *bad[] = { "check", sc, "--max-memory", "0x10MB", NULL };
    CU_ASSERT_EQUAL(test_rocesim(bad, NULL, NULL, NULL), 2);
    g_free(sc);
    /* 512 leaves x 128 spines, one host each: the next hops are the distinct lists, 2 x (512
     * + 128) of them (bfs_routes keeps each once), not one per switch pair, 512^2 x 128 x 4 B =
     * 134 MB, which with the 65 536 links' ports (about 170 MB) passed 250 MB */
    sc = put_file(dir, "wide.ini", "[topology]\nleaves = 512\nspines = 128\nhosts_per_leaf = 1\n" WORKLOAD);
    const char *wide[] = { "check", sc, "--max-memory", "250MB", NULL };
    CU_ASSERT_EQUAL(test_rocesim(wide, NULL, NULL, NULL), 0);
    g_free(sc);
    test_rmtree(dir);
    g_free(dir);
}

/* 262143 senders: the duplicate scan compared each host with every earlier one (12.9 s). */
static void test_hostlist_linear(void)
{
    struct hostlist h;
    char *why = NULL;
    gint64 t0 = g_get_monotonic_time();
    CU_ASSERT_TRUE(hostlist_parse("0-262142", 262143, &h, &why));
    CU_ASSERT_EQUAL(h.n, 262143);
    CU_ASSERT(g_get_monotonic_time() - t0 < G_USEC_PER_SEC);
    hostlist_clear(&h);
    CU_ASSERT_FALSE(hostlist_parse("0-9,5", 16, &h, &why));
    CU_ASSERT_PTR_NOT_NULL(why ? strstr(why, "host 5 is listed twice") : NULL);
    g_free(why);
}

/* `check` on 65536 hosts: the longest path came from all host pairs (15 s). host0 is on
 * leaf0 and host256 is the first host of leaf1: host-leaf-spine-leaf-host, 4 links. */
static void test_check_longest_path_fast(void)
{
    char *out = NULL;
    gint64 t0 = g_get_monotonic_time();
    CU_ASSERT_EQUAL(check_text("[topology]\nleaves = 256\nhosts_per_leaf = 256\nspines = 16\n" WORKLOAD, NULL,
                               NULL, &out), 0);
    CU_ASSERT(g_get_monotonic_time() - t0 < 5 * G_USEC_PER_SEC);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "longest_path = 4 links (host0 -> host256)"));
    g_free(out);
    /* one switch: the longest path is between its first two hosts, 2 links */
    CU_ASSERT_EQUAL(check_text("[topology]\nleaves = 1\nhosts_per_leaf = 4\n" WORKLOAD, NULL, NULL, &out), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "longest_path = 2 links (host0 -> host1)"));
    g_free(out);
}

/* A pcap (nanosecond, Ethernet) of one frame repeated at the given times. */
static void write_pcap(const char *path, const guint8 *frame, guint32 len, guint32 orig, const guint64 *t_ns,
                       guint n)
{
    GByteArray *b = g_byte_array_new();
    const guint32 hdr[6] = { 0xa1b23c4d, 2 | (4u << 16), 0, 0, 65535, 1 };
    g_byte_array_append(b, (const guint8 *)hdr, sizeof hdr);
    for (guint i = 0; i < n; i++) {
        guint32 rec[4] = { (guint32)(t_ns[i] / 1000000000u), (guint32)(t_ns[i] % 1000000000u), len, orig };
        g_byte_array_append(b, (const guint8 *)rec, sizeof rec);
        g_byte_array_append(b, frame, len);
    }
    CU_ASSERT_TRUE(g_file_set_contents(path, (const char *)b->data, (gssize)b->len, NULL));
    g_byte_array_free(b, TRUE);
}

/* The largest record of a capture written by the simulator (snap length 96): a RoCEv2 data
 * frame, and its length on the wire. */
static guint8 *roce_frame(guint32 *len, guint32 *orig)
{
    char *p = g_build_filename("tests", "fuzz", "corpus", "fuzz_pcap", "leaf0.pcap", NULL);
    gchar *d = NULL;
    gsize n = 0;
    guint8 *best = NULL;
    *len = 0;
    if (g_file_get_contents(p, &d, &n, NULL))
        for (gsize off = 24; off + 16 <= n;) {
            guint32 cap, wire;
            memcpy(&cap, d + off + 8, 4);
            memcpy(&wire, d + off + 12, 4);
            if (off + 16 + cap > n)
                break;
            if (cap > *len) {
                g_free(best);
                best = g_memdup2(d + off + 16, cap);
                *len = cap;
                *orig = wire;
            }
            off += 16 + cap;
        }
    g_free(d);
    g_free(p);
    return best;
}

/* pcap-stats on 240000 records in descending time order after the first: binning inserted
 * each at the front (21 s). And records before the time origin are counted at 0 with a
 * warning (there was none). */
static void test_pcap_out_of_order(void)
{
    guint32 len = 0, orig = 0;
    guint8 *frame = roce_frame(&len, &orig);
    CU_ASSERT_PTR_NOT_NULL_FATAL(frame);
    char *tmp = test_tmpdir();
    enum { N = 240000 };
    guint64 *t = g_new(guint64, N);
    t[0] = 0;
    for (guint i = 1; i < N; i++)
        t[i] = (guint64)(N - i) * 10000; /* one 10 us bin each, descending */
    char *cap = g_build_filename(tmp, "rev.pcap", NULL), *out = g_build_filename(tmp, "st", NULL);
    write_pcap(cap, frame, len, orig, t, N);
    const char *args[] = { "pcap-stats", cap, "-o", out, NULL };
    gint64 t0 = g_get_monotonic_time();
    CU_ASSERT_EQUAL(test_rocesim(args, NULL, NULL, NULL), 0);
    CU_ASSERT(g_get_monotonic_time() - t0 < 10 * G_USEC_PER_SEC);
    char *rates = g_build_filename(out, "rates.csv", NULL), *text = NULL;
    CU_ASSERT_TRUE(g_file_get_contents(rates, &text, NULL, NULL));
    guint rows = 0;
    for (char *c = text; c && *c; c++)
        rows += *c == '\n';
    CU_ASSERT_EQUAL(rows, 1 + N); /* header, then one row per bin: consecutive, no zero rows */
    g_free(text);
    g_free(rates);
    /* 100 ns, then 50 ns: the second is before the origin */
    guint64 two[2] = { 100, 50 };
    char *cap2 = g_build_filename(tmp, "two.pcap", NULL), *out2 = g_build_filename(tmp, "st2", NULL);
    write_pcap(cap2, frame, len, orig, two, 2);
    const char *args2[] = { "pcap-stats", cap2, "-o", out2, NULL };
    char *se = NULL;
    CU_ASSERT_EQUAL(test_rocesim(args2, NULL, NULL, &se), 0);
    CU_ASSERT_PTR_NOT_NULL(se ? strstr(se, "1 records are timestamped before the time origin") : NULL);
    g_free(se);
    g_free(cap2);
    g_free(out2);
    g_free(cap);
    g_free(out);
    g_free(t);
    g_free(frame);
    test_rmtree(tmp);
    g_free(tmp);
}

/* A sweep killed with SIGKILL after a point's run finished left that point's empty log,
 * and resuming (which reuses the point) kept it. */
static void test_sweep_resume_empty_log(void)
{
    char *tmp = test_tmpdir();
    char *ini = put_file(tmp, "s.ini", WORKLOAD);
    char *dir = g_build_filename(tmp, "sw", NULL);
    char *bin = g_canonicalize_filename(test_rocesim_bin(), NULL);
    char *cmd = g_strdup_printf("'%s' sweep '%s' --vary switch.ecn_kmin=20KB,40KB -j 1 -o '%s' --no-plots", bin,
                                ini, dir);
    CU_ASSERT_EQUAL(test_run(cmd, NULL), 0);
    char *log = g_build_filename(dir, "points", "ecn_kmin=20KB.log", NULL);
    CU_ASSERT_FALSE(g_file_test(log, G_FILE_TEST_EXISTS));
    CU_ASSERT_TRUE(g_file_set_contents(log, "", 0, NULL)); /* what the killed sweep left */
    CU_ASSERT_EQUAL(test_run(cmd, NULL), 0);
    CU_ASSERT_FALSE(g_file_test(log, G_FILE_TEST_EXISTS));
    g_free(log);
    g_free(cmd);
    g_free(bin);
    g_free(dir);
    g_free(ini);
    test_rmtree(tmp);
    g_free(tmp);
}

static CU_TestInfo tests[] = {
    { "edge list: repeated blanks between fields", test_edges_repeated_blanks },
    { "edge list: hosts and no switch refused", test_edges_no_switch },
    { "[workload] / [fault] without a name refused", test_nameless_sections },
    { "-o on a folder rocesim did not write: exit 2, untouched", test_output_foreign_folder },
    { "-o on a regular file: exit 2, untouched", test_output_regular_file },
    { "-o on a results folder replaces it", test_output_replaces_own },
    { "name = ../../victim stays inside results/", test_name_stays_in_results },
    { "SIGTERM mid-run leaves no temporary folder", test_sigterm_cleans_up },
    { "SIGINT mid-run leaves no temporary folder", test_sigint_cleans_up },
    { "full disk while writing data: exit 1, nothing left", test_full_disk_data },
    { "full disk while plotting: exit 1, no partial figure", test_full_disk_plots },
    { "pcap-stats on a full disk: exit 1", test_full_disk_pcap_stats },
    { "units: exact integers, exponents", test_units_exact },
    { "units: VT, hex, '+', inf/nan, overflow refused", test_units_refused },
    { "seed takes the whole uint64 range", test_seed_full_range },
    { "decimal numbers only for real-valued keys", test_doubles_decimal_only },
    { "cable_length: inf, nan, 1e308m refused", test_cable_length },
    { "reserve/headroom/xon_offset within the buffer; rx_buffer > 0", test_buffer_parts_fit },
    { "derived defaults do not overflow", test_derived_no_overflow },
    { "duplicate [section] headers refused", test_duplicate_sections },
    { "a transfer above the size cap refused", test_transfer_size_cap },
    { "workload start + flow start must not wrap", test_start_wrap },
    { "disconnected edge-list fabric refused by check", test_disconnected_edges },
    { "flows file with a UTF-8 BOM", test_flows_bom },
    { "memory estimate refuses oversized fabrics and collectives", test_memory_estimate },
    { "host-list duplicate scan is linear", test_hostlist_linear },
    { "check: longest path without all host pairs", test_check_longest_path_fast },
    { "pcap-stats: out-of-order timestamps, linear and warned", test_pcap_out_of_order },
    { "sweep resume removes a killed sweep's empty point log", test_sweep_resume_empty_log },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("hardening", tests)
