/* The fidelity suite (`make validate`): every model against an independent reference, one row
 * each with the reference, the tolerance, the measured value and a verdict, written as a
 * markdown report with plots. `--fast` runs the rows that take seconds (make check runs it).
 *
 * usage: validate [--fast] OUT_DIR      (ROCESIM names the binary; run from the repository) */
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "analysis/frames.h"
#include "analysis/pcap.h"
#include "models/mmu.h"
#include "models/packet.h"
#include "tests/testutil.h"

/* pass, fail, or open: a known disagreement under investigation, shown but not failing */
enum verdict { FAIL = 0, PASS = 1, OPEN = 2 };
struct row {
    char *check, *reference, *tolerance, *measured;
    enum verdict pass;
};
static GPtrArray *rows;
static const char *out_dir;

static void add_row(enum verdict pass, const char *check, const char *reference, const char *tolerance,
                    const char *fmt, ...) G_GNUC_PRINTF(5, 6);
static void add_row(enum verdict pass, const char *check, const char *reference, const char *tolerance,
                    const char *fmt, ...)
{
    struct row *r = g_new(struct row, 1);
    va_list ap;
    va_start(ap, fmt);
    r->measured = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    r->check = g_strdup(check);
    r->reference = g_strdup(reference);
    r->tolerance = g_strdup(tolerance);
    r->pass = pass;
    g_ptr_array_add(rows, r);
    printf("%-4s %s: %s\n", pass == PASS ? "ok" : pass == OPEN ? "open" : "FAIL", check, r->measured);
    fflush(stdout);
}

/* Runs the simulator into OUT_DIR/runs/NAME with --set overrides; NULL on failure. */
static char *simulate(const char *name, const char *scenario, const char *const *sets)
{
    char *dir = g_build_filename(out_dir, "runs", name, NULL);
    GString *cmd = g_string_new(NULL);
    g_string_printf(cmd, "'%s' run '%s' -o '%s' --quiet --no-plots", test_rocesim_bin(), scenario, dir);
    for (int i = 0; sets && sets[i]; i++)
        g_string_append_printf(cmd, " --set '%s'", sets[i]);
    char *log = NULL;
    int rc = test_run(cmd->str, &log);
    if (rc != 0 && rc != 3) {
        fprintf(stderr, "%s\n%s\n", cmd->str, log ? log : "");
        g_clear_pointer(&dir, g_free);
    }
    g_free(log);
    g_string_free(cmd, TRUE);
    return dir;
}

/* A CSV file as rows of fields (header skipped). */
static GPtrArray *csv_rows(const char *dir, const char *file)
{
    char *p = g_build_filename(dir, file, NULL), *text = NULL;
    GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
    if (g_file_get_contents(p, &text, NULL, NULL)) {
        char **lines = g_strsplit(text, "\n", -1);
        for (int i = 1; lines[i]; i++)
            if (*lines[i])
                g_ptr_array_add(out, g_strsplit(lines[i], ",", -1));
        g_strfreev(lines);
    }
    g_free(text);
    g_free(p);
    return out;
}

/* Time-weighted mean over [t0, t1] ns of a port's queue (queues.csv rows change-driven), and
 * of the RED marking probability of that queue, p(q) of models.md 1.1. */
struct queue_stats {
    double mean_bytes, mean_red_p;
};
static struct queue_stats queue_over(GPtrArray *q, const char *node, const char *port, double t0, double t1,
                                     double kmin, double kmax, double pmax)
{
    double acc = 0, acc_p = 0, lt = -1, lb = 0;
    for (guint i = 0; i <= q->len; i++) {
        char **f = i < q->len ? g_ptr_array_index(q, i) : NULL;
        if (f && (strcmp(f[1], node) || strcmp(f[2], port) || strcmp(f[3], "3")))
            continue;
        double t = f ? g_ascii_strtod(f[0], NULL) : t1;
        if (lt >= 0) {
            double a = fmax(lt, t0), e = fmin(t, t1);
            if (e > a) {
                double p = lb <= kmin ? 0 : lb <= kmax ? pmax * (lb - kmin) / (kmax - kmin) : 1;
                acc += lb * (e - a);
                acc_p += p * (e - a);
            }
        }
        if (f) {
            lt = t;
            lb = g_ascii_strtod(f[4], NULL);
        }
    }
    return (struct queue_stats){ acc / (t1 - t0), acc_p / (t1 - t0) };
}

/* A cumulative counter's increase over (t0, t1] from counters.csv. */
static double counter_between(GPtrArray *c, const char *node, const char *port, const char *name, double t0,
                              double t1)
{
    double at0 = 0, at1 = 0;
    for (guint i = 0; i < c->len; i++) {
        char **f = g_ptr_array_index(c, i);
        if (strcmp(f[1], node) || strcmp(f[2], port) || strcmp(f[3], name))
            continue;
        double t = g_ascii_strtod(f[0], NULL), v = g_ascii_strtod(f[4], NULL);
        if (t <= t0)
            at0 = v;
        if (t <= t1)
            at1 = v;
    }
    return at1 - at0;
}

/* ---- DCQCN against the fluid model's fixed point ---- */

#define FLUID_T0_NS 20e6 /* after about 1.5 alpha time constants K/g = 14 ms */
#define FLUID_T1_NS 60e6

/* The RED check's extra seeds: one run's marked fraction strays from the time average of
 * p(q(t)) by up to 7 % (measured over seeds 1-5 at N = 4: +7.1, +2.6, +1.6, +0.6, -7.1 %),
 * more than the check's 5 %; pooled over four runs the estimate's spread is about half. */
#define RED_SEEDS 4

/* For seeds 2..RED_SEEDS of the N-flow run: adds each run's marked fraction and its time
 * average of p(q(t)) to *marked and *red; returns how many runs it added. */
static int red_more_seeds(int nflows, double *marked, double *red)
{
    int added = 0;
    for (int seed = 2; seed <= RED_SEEDS; seed++) {
        char *name = g_strdup_printf("fluid-n%d-seed%d", nflows, seed);
        char *senders = g_strdup_printf("workload long.senders=1-%d", nflows);
        char *seed_set = g_strdup_printf("scenario.seed=%d", seed);
        const char *sets[] = { senders, "output.queue_sample=200ns", seed_set, NULL };
        char *dir = simulate(name, "scenarios/dcqcn-fluid.ini", sets);
        if (dir) {
            GPtrArray *qs = csv_rows(dir, "queues.csv"), *cs = csv_rows(dir, "counters.csv");
            struct queue_stats st = queue_over(qs, "leaf0", "0", FLUID_T0_NS, FLUID_T1_NS, 5e3, 200e3, 0.01);
            double pkts = 40e9 * (FLUID_T1_NS - FLUID_T0_NS) * 1e-9 / ((1024 + ROCE_HDR_BYTES) * 8.0);
            *marked += counter_between(cs, "leaf0", "0", "ecn_marked", FLUID_T0_NS, FLUID_T1_NS) / pkts;
            *red += st.mean_red_p;
            added++;
            g_ptr_array_unref(qs);
            g_ptr_array_unref(cs);
        }
        g_free(dir);
        g_free(seed_set);
        g_free(senders);
        g_free(name);
    }
    return added;
}

static void fluid(gboolean fast)
{
    /* models.md 2.3: N, p*, q* (KB) for the paper's parameters on 40 Gb/s, 1000 B packets */
    static const struct {
        int n;
        double p, q_kb;
    } model[] = { { 2, 7.77e-4, 20.2 }, { 4, 1.89e-3, 41.8 }, { 8, 4.55e-3, 93.8 }, { 10, 6.03e-3, 122.6 } };
    char *gp_data = g_build_filename(out_dir, "fluid.dat", NULL);
    FILE *dat = fopen(gp_data, "w");
    fprintf(dat, "# N q_model_KB q_sim_KB q_sim_cnp0_KB p_model p_sim p_sim_cnp0\n");
    for (size_t i = 0; i < G_N_ELEMENTS(model); i++) {
        if (fast && model[i].n != 4)
            continue;

        double q[2], p[2], red_p = 0;
        for (int v = 0; v < 2; v++) {
            char *name = g_strdup_printf("fluid-n%d%s", model[i].n, v ? "-cnp0" : "");
            char *senders = g_strdup_printf("workload long.senders=1-%d", model[i].n);
            /* the queue sampled at every change (200 ns is under one 1086 B packet at 40G) */
            const char *sets[] = { senders, "output.queue_sample=200ns", v ? "dcqcn.min_time_between_cnps=0ps" : NULL, NULL };
            char *dir = simulate(name, "scenarios/dcqcn-fluid.ini", sets);
            q[v] = p[v] = NAN;
            if (dir) {
                GPtrArray *qs = csv_rows(dir, "queues.csv"), *cs = csv_rows(dir, "counters.csv");
                struct queue_stats st = queue_over(qs, "leaf0", "0", FLUID_T0_NS, FLUID_T1_NS, 5e3, 200e3, 0.01);
                /* packets through the bottleneck in the window at line rate (it stays busy) */
                double pkts = 40e9 * (FLUID_T1_NS - FLUID_T0_NS) * 1e-9 / ((1024 + ROCE_HDR_BYTES) * 8.0);
                q[v] = st.mean_bytes / 1e3;
                p[v] = counter_between(cs, "leaf0", "0", "ecn_marked", FLUID_T0_NS, FLUID_T1_NS) / pkts;
                if (v == 0)
                    red_p = st.mean_red_p;
                g_ptr_array_unref(qs);
                g_ptr_array_unref(cs);
            }
            g_free(dir);
            g_free(senders);
            g_free(name);
        }
        char *check = g_strdup_printf("DCQCN fluid fixed point, N = %d: queue", model[i].n);
        char *ref = g_strdup_printf("q* = %.1f KB (models.md 2.3)", model[i].q_kb);
        add_row(fabs(q[0] / model[i].q_kb - 1) <= 0.35, check, ref, "35 %", "%.1f KB (%+.0f %%)", q[0],
                100 * (q[0] / model[i].q_kb - 1));
        g_free(check);
        g_free(ref);
        check = g_strdup_printf("DCQCN fluid fixed point, N = %d: marked fraction", model[i].n);
        ref = g_strdup_printf("p* = %.2e (models.md 2.3)", model[i].p);
        add_row(fabs(p[0] / model[i].p - 1) <= 0.65, check, ref, "65 %", "%.2e (%+.0f %%)", p[0],
                100 * (p[0] / model[i].p - 1));
        g_free(check);
        g_free(ref);
        /* tau cancels out of the fixed point (models.md 2.2): with a CNP for every marked
         * packet the NP matches the model's per-packet feedback */
        check = g_strdup_printf("same, CNP for every mark (tau -> 0), N = %d: marked fraction", model[i].n);
        ref = g_strdup_printf("p* = %.2e (tau cancels)", model[i].p);
        add_row(fabs(p[1] / model[i].p - 1) <= 0.30, check, ref, "30 %", "%.2e (%+.0f %%), queue %.1f KB (%+.0f %%)",
                p[1], 100 * (p[1] / model[i].p - 1), q[1], 100 * (q[1] / model[i].q_kb - 1));
        g_free(check);
        g_free(ref);
        /* RED: the marked fraction at dequeue equals the time average of p(q(t)) while the
         * bottleneck is busy (departures are evenly spaced), pooled over RED_SEEDS runs. From
         * N = 8 on the queue makes excursions past Kmax, and the marks fall 15-19 % short of
         * that average: open. */
        double marked_sum = p[0], red_sum = red_p;
        int runs = 1 + red_more_seeds(model[i].n, &marked_sum, &red_sum);
        check = g_strdup_printf("RED marking curve over a long run, N = %d, %d seeds", model[i].n, runs);
        gboolean red_ok = runs == RED_SEEDS && fabs(marked_sum / red_sum - 1) <= 0.05;
        add_row(red_ok ? PASS : model[i].n >= 8 ? OPEN : FAIL, check, "mean of Pmax (q-Kmin)/(Kmax-Kmin) over q(t) (models.md 1.1)",
                "5 %", "%.3e marked vs %.3e from the queue (%+.1f %%)", marked_sum / runs, red_sum / runs,
                100 * (marked_sum / red_sum - 1));
        g_free(check);
        fprintf(dat, "%d %.2f %.2f %.2f %.3e %.3e %.3e\n", model[i].n, model[i].q_kb, q[0], q[1], model[i].p, p[0],
                p[1]);
    }
    fclose(dat);
    if (!fast) {
        char *gp = g_build_filename(out_dir, "fluid.gp", NULL);
        FILE *f = fopen(gp, "w");
        fprintf(f, "set terminal pngcairo size 800,500 noenhanced\nset output 'fluid.png'\n"
                   "set title 'DCQCN queue at the fixed point: fluid model vs rocesim (40G, dcqcn_paper)'\n"
                   "set xlabel 'flows N'\nset ylabel 'time-mean queue (KB)'\nset key left top\nset grid\n"
                   "plot 'fluid.dat' u 1:2 w lp t 'fluid model q*', '' u 1:3 w lp t 'rocesim, CNP spacing 50 us', "
                   "'' u 1:4 w lp t 'rocesim, CNP per mark'\n");
        fclose(f);
        char *cmd = g_strdup_printf("cd '%s' && gnuplot fluid.gp", out_dir);
        test_run(cmd, NULL);
        g_free(cmd);
        g_free(gp);
    }
    g_free(gp_data);
}

/* ---- each preset against its reference, transcribed in tests/test_dcqcn_reference.c ---- */

static void presets(void)
{
    char *out = NULL;
    int rc = test_run("build/tests/test_dcqcn_reference", &out);
    static const char *const names[][2] = {
        { "hpcc_ns3", "HPCC ns-3 rdma-hw.cc RdmaHw::*Mlx (models.md 1.3.2)" },
        { "dcqcn_paper", "DCQCN, SIGCOMM 2015 (models.md 1.3.1)" },
        { "connectx", "mstflint field descriptions (models.md 1.3.3)" },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        char *needle = g_strdup_printf("%s = ", names[i][0]);
        const char *at = out ? strstr(out, needle) : NULL;
        const char *eol = at ? strchr(at, '\n') : NULL;
        gboolean pass = rc == 0 && at && eol && g_strstr_len(at, eol - at, "passed");
        char *check = g_strdup_printf("preset %s: rate, target, alpha trajectory", names[i][0]);
        add_row(pass, check, names[i][1], "1e-9", "%s", pass ? "equal at every 0.5 us sample" : "differs");
        g_free(check);
        g_free(needle);
    }
    g_free(out);
}

/* ---- a 128-host permutation converges under connectx and hpcc_ns3 ---- */

static void permutation(void)
{
    const char *preset[] = { "connectx", "hpcc_ns3" };
    for (int i = 0; i < 2; i++) {
        char *name = g_strdup_printf("permutation128-%s", preset[i]);
        char *set = g_strdup_printf("nic.cc_preset=%s", preset[i]);
        const char *sets[] = { set, NULL };
        char *dir = simulate(name, "tests/validation/permutation128.ini", sets);
        double worst = NAN, pauses = NAN;
        char worst_port[64] = "?";
        if (dir) {
            GPtrArray *q = csv_rows(dir, "queues.csv"), *pfc = csv_rows(dir, "pfc.csv");
            double end = (double)test_metric(dir, "completion_ns");
            GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
            worst = 0;
            for (guint k = 0; k < q->len; k++) {
                char **f = g_ptr_array_index(q, k);
                char *key = g_strdup_printf("%s:%s", f[1], f[2]);
                if (!strcmp(f[3], "3") && !g_hash_table_contains(seen, key)) {
                    double m = queue_over(q, f[1], f[2], 3e6, end, 20e3, 80e3, 1).mean_bytes;
                    if (m > worst) {
                        worst = m;
                        g_strlcpy(worst_port, key, sizeof worst_port);
                    }
                    g_hash_table_add(seen, key);
                } else {
                    g_free(key);
                }
            }
            pauses = 0;
            for (guint k = 0; k < pfc->len; k++) {
                char **f = g_ptr_array_index(pfc, k);
                pauses += !strcmp(f[4], "pause") && g_ascii_strtod(f[0], NULL) >= 3e6;
            }
            g_hash_table_unref(seen);
            g_ptr_array_unref(q);
            g_ptr_array_unref(pfc);
        }
        char *check = g_strdup_printf("128-host permutation, %s: worst port's time-mean queue after 3 ms", preset[i]);
        add_row(worst <= 80e3, check, "Kmax = 80 KB (ECN, not PFC, bounds the queue)", "<= Kmax", "%.1f KB at %s",
                worst / 1e3, worst_port);
        g_free(check);
        check = g_strdup_printf("128-host permutation, %s: PFC pauses after 3 ms", preset[i]);
        add_row(pauses == 0, check, "0", "0", "%.0f", pauses);
        g_free(check);
        g_free(dir);
        g_free(set);
        g_free(name);
    }
}

/* ---- HPCC (models.md 6.1; HPCC19 section 5) ---- */

/* The 16-to-1 incast (scenarios/hpcc-incast.ini): after the start burst has drained, the
 * receiver's port stays busy above eta and its queue near zero. The N-flow case
 * (scenarios/hpcc-fairness.ini, N = 4): with R_AI sized for 4 flows ([hpcc] expected_flows,
 * HPCC19's W_AI rule) the throughputs over 1-2 ms are the fair share eta x C / N and every
 * 20-us window's shares are within 10% of their mean after a few tens of base RTTs; with
 * run.py's R_AI of 40 Mb/s the multiplicative step scales all flows alike and keeps the
 * start-up ratios for hundreds of RTTs, the reference's own behaviour, so that row is open
 * (README "HPCC"). */
/* Calls fn for every record of DIR/FILE; FALSE when the capture cannot be read. */
static gboolean each_record(const char *dir, const char *file, void (*fn)(void *ctx, const struct pcap_record *rec),
                            void *ctx)
{
    char *p = g_build_filename(dir, file, NULL);
    GError *err = NULL;
    struct pcap_reader *r = pcap_reader_open(p, &err);
    g_free(p);
    if (!r) {
        g_clear_error(&err);
        return FALSE;
    }
    struct pcap_record rec;
    while (pcap_reader_next(r, &rec, &err) == 1)
        fn(ctx, &rec);
    g_clear_error(&err);
    pcap_reader_close(r);
    return TRUE;
}

/* A frame's bits on the wire: frame + FCS + preamble + IFG. */
static double wire_bits(const struct pcap_record *rec) { return 8.0 * (rec->orig_len + FCS_BYTES + WIRE_EXTRA_BYTES); }

struct bits_ctx {
    double t0, t1, bits;
    int src, dst;
    uint8_t want_src[6], want_dst[6];
};

static void count_bits(void *ctx, const struct pcap_record *rec)
{
    struct bits_ctx *c = ctx;
    if (rec->t_ns >= c->t0 && rec->t_ns < c->t1 && rec->cap_len >= 12 && (c->dst < 0 || !memcmp(rec->data, c->want_dst, 6)) &&
        (c->src < 0 || !memcmp(rec->data + 6, c->want_src, 6)))
        c->bits += wire_bits(rec);
}

/* Wire bits in a capture over [t0, t1) ns of the RoCE frames from host `src` to host `dst`
 * (-1: any); NAN when the capture cannot be read. */
static double captured_bits(const char *dir, const char *file, double t0, double t1, int src, int dst)
{
    struct bits_ctx c = { .t0 = t0, .t1 = t1, .src = src, .dst = dst };
    frame_host_mac(src < 0 ? 0 : (uint32_t)src, c.want_src);
    frame_host_mac(dst < 0 ? 0 : (uint32_t)dst, c.want_dst);
    return each_record(dir, file, count_bits, &c) ? c.bits : NAN;
}

/* The start of the first 20-us window from which on, up to t_end ns, every window's per-flow
 * wire throughputs (flows from hosts 1..n to host 0) are within 10% of their mean; NAN
 * when the capture cannot be read. */
#define FAIR_WINDOW_NS 20000.0
struct windows_ctx {
    int n;                /* flows from hosts 1..n */
    size_t nw;            /* windows */
    double *bits;         /* [window * n + flow] */
    uint8_t mac[8][6];    /* the senders' MACs (n <= 8) */
};

static void window_bits(void *ctx, const struct pcap_record *rec)
{
    struct windows_ctx *c = ctx;
    size_t w = (size_t)(rec->t_ns / FAIR_WINDOW_NS);
    for (int h = 0; h < c->n && w < c->nw && rec->cap_len >= 12; h++)
        if (!memcmp(rec->data + 6, c->mac[h], 6))
            c->bits[w * (size_t)c->n + (size_t)h] += wire_bits(rec);
}

static double fair_from(const char *dir, const char *file, int n, double t_end)
{
    struct windows_ctx c = { .n = n, .nw = (size_t)(t_end / FAIR_WINDOW_NS) };
    c.bits = g_new0(double, c.nw * (size_t)n);
    for (int h = 0; h < n; h++)
        frame_host_mac((uint32_t)h + 1, c.mac[h]);
    double from = NAN;
    if (each_record(dir, file, window_bits, &c)) {
        from = 0;
        for (size_t w = 0; w < c.nw; w++) {
            double mean = 0;
            for (int h = 0; h < n; h++)
                mean += c.bits[w * (size_t)n + (size_t)h] / n;
            for (int h = 0; h < n; h++)
                if (fabs(c.bits[w * (size_t)n + (size_t)h] - mean) > 0.1 * mean)
                    from = (double)(w + 1) * FAIR_WINDOW_NS;
        }
    }
    g_free(c.bits);
    return from;
}

/* Per-flow throughput over 1-2 ms of hosts 1..4 to host 0 in a capture: the lowest and highest. */
static void four_flow_range(const char *dir, double *lo, double *hi)
{
    *lo = INFINITY, *hi = 0;
    for (int h = 1; h <= 4; h++) {
        double rate = captured_bits(dir, "leaf0-0.pcap", 1e6, 2e6, h, 0) / 1e-3;
        *lo = fmin(*lo, rate), *hi = fmax(*hi, rate);
    }
}

static void hpcc(void)
{
    const char *cap[] = { "output.pcap=leaf0:0", NULL };
    char *dir = simulate("hpcc-incast", "scenarios/hpcc-incast.ini", cap);
    double busy = NAN, q = NAN;
    if (dir) {
        GPtrArray *qs = csv_rows(dir, "queues.csv");
        busy = captured_bits(dir, "leaf0-0.pcap", 0.5e6, 5e6, -1, 0) / (100e9 * 4.5e-3);
        q = queue_over(qs, "leaf0", "0", 0.5e6, 5e6, 0, 1, 0).mean_bytes;
        g_ptr_array_unref(qs);
    }
    add_row(busy > 0.95, "HPCC 16-to-1 incast: receiver port busy, 0.5-5 ms", "eta = 95% (HPCC19)", "> 95%",
            "%.1f%%", 100 * busy);
    add_row(q < 4e3, "HPCC 16-to-1 incast: time-mean queue, 0.5-5 ms", "near zero (HPCC19)", "< 4 KB", "%.2f KB",
            q / 1e3);
    g_free(dir);
    /* T here (cc_hpcc.c path_rtt): 2 x 2 x 1 us of propagation + 2 x 81.92 ns, the 1024-B
     * payload's serialisation at 100 Gb/s on each of the two hops */
    const double T_ns = 4163.84;
    const char *sized[] = { "output.pcap=leaf0:0", "hpcc.expected_flows=4", NULL };
    dir = simulate("hpcc-fairness-sized", "scenarios/hpcc-fairness.ini", sized);
    double lo = NAN, hi = NAN, from = NAN;
    if (dir) {
        four_flow_range(dir, &lo, &hi);
        from = fair_from(dir, "leaf0-0.pcap", 4, 2e6);
    }
    add_row(lo > 0.9 * 23.75e9 && hi < 1.1 * 23.75e9, "HPCC 4 flows on one link, R_AI for 4 flows: throughputs, 1-2 ms",
            "fair share eta x 100/4 = 23.75 Gb/s (HPCC19)", "+-10%", "%.2f - %.2f Gb/s", lo / 1e9, hi / 1e9);
    add_row(from < 30 * T_ns, "HPCC 4 flows, R_AI for 4 flows: every 20-us window within 10% of the mean from",
            "converges within tens of base RTTs T (HPCC19)", "< 30 T = 124.9 us", "%.0f us = %.1f T", from / 1e3,
            from / T_ns);
    g_free(dir);
    dir = simulate("hpcc-fairness", "scenarios/hpcc-fairness.ini", cap);
    lo = hi = NAN;
    if (dir)
        four_flow_range(dir, &lo, &hi);
    add_row(lo > 0.9 * 23.75e9 && hi < 1.1 * 23.75e9 ? PASS : OPEN,
            "HPCC 4 flows on one link, run.py's R_AI (40 Mb/s): throughputs, 1-2 ms",
            "fair share eta x 100/4 = 23.75 Gb/s", "+-10%", "%.2f - %.2f Gb/s", lo / 1e9, hi / 1e9);
    g_free(dir);
}

/* ---- collectives against alpha-beta (models.md 7.2) ---- */

static void collectives(gboolean fast)
{
    const double N = 16, S = 64e6, mtu = 4096, wire = ROCE_HDR_BYTES + WIRE_EXTRA_BYTES;
    const double B = 100e9 / 8 * mtu / (mtu + wire);               /* efficient line rate, B/s */
    const double alpha_us = 2 * 1.0 + (mtu + wire) * 8 / 100e9 * 1e6; /* two links + one store and forward */
    static const struct {
        const char *algo, *channels, *formula;
        double tol;
    } a[] = {
        { "ring", "1", "2(N-1)a + 2(N-1)/N S/B", 0.03 },
        { "halving-doubling", "1", "2 log2(N) a + 2(N-1)/N S/B", 0.03 },
        /* the pipelined trees fill and drain through log2 N levels, which alpha-beta omits */
        { "tree", "2", "2 log2(N) a + 2 S/B (pipeline fill not modelled)", 0.15 },
    };
    for (size_t i = 0; i < G_N_ELEMENTS(a); i++) {
        if (fast && i > 0)
            break;
        double t_est = (i == 0 ? 2 * (N - 1) * alpha_us : 2 * log2(N) * alpha_us) +
                       (i == 2 ? 2 * S : 2 * (N - 1) / N * S) / B * 1e6;
        char *name = g_strdup_printf("coll16-%s", a[i].algo);
        char *s1 = g_strdup_printf("workload ar.algorithm=%s", a[i].algo);
        char *s2 = g_strdup_printf("workload ar.channels=%s", a[i].channels);
        const char *sets[] = { s1, s2, NULL };
        char *dir = simulate(name, "tests/validation/coll16.ini", sets);
        double t = NAN;
        GPtrArray *c = dir ? csv_rows(dir, "collectives.csv") : NULL;
        if (c && c->len == 1)
            t = g_ascii_strtod(((char **)g_ptr_array_index(c, 0))[8], NULL);
        char *check = g_strdup_printf("%s AllReduce, 64 MB x 16 ranks, 100G", a[i].algo);
        char *ref = g_strdup_printf("%s = %.1f us", a[i].formula, t_est);
        char *tol = g_strdup_printf("%.0f %%", a[i].tol * 100);
        add_row(fabs(t / t_est - 1) <= a[i].tol, check, ref, tol, "%.1f us (%+.2f %%)", t, 100 * (t / t_est - 1));
        g_free(tol);
        g_free(ref);
        g_free(check);
        if (c)
            g_ptr_array_unref(c);
        g_free(dir);
        g_free(s2);
        g_free(s1);
        g_free(name);
    }
}

/* ---- PFC: work conservation and headroom ---- */

static void pfc(void)
{
    char *dir = simulate("pfc-incast", "scenarios/pfc-incast.ini", NULL);
    /* 31 x 2 MB into one 100G port at the efficient line rate, plus the longest path's latency */
    double size = 2e6, mtu = 4096, wire = ROCE_HDR_BYTES + WIRE_EXTRA_BYTES;
    double line_ns = 31 * size * (mtu + wire) / mtu * 8 / 100e9 * 1e9;
    double done = dir ? (double)test_metric(dir, "completion_ns") : NAN;
    double drops = dir ? (double)test_metric(dir, "drops") : NAN;
    add_row(done >= line_ns && done <= 1.01 * line_ns && drops == 0, "PFC incast 31:1 without CC: completion",
            "line rate of the receiver's port (work conserving, lossless)", "+1 %, 0 drops", "%.0f ns vs %.0f ns (%+.3f %%), %.0f drops",
            done, line_ns, 100 * (done / line_ns - 1), drops);
    g_free(dir);
    /* models.md 3.3 worked example: 100 G, 100 m fiber (5 ns/m), 9216 B frames */
    uint64_t h = pfc_headroom_bytes(100000000000ull, 100 * 5 * PS_PER_NS, 9216 + WIRE_EXTRA_BYTES);
    add_row(h == 71632, "PFC headroom, 100G, 100 m, 9216 B frames", "71632 B (models.md 3.3 worked example)", "exact",
            "%" G_GUINT64_FORMAT " B", h);
}

static void write_report(gboolean fast)
{
    char *path = g_build_filename(out_dir, "report.md", NULL);
    FILE *f = fopen(path, "w");
    guint failed = 0;
    for (guint i = 0; i < rows->len; i++)
        failed += ((struct row *)g_ptr_array_index(rows, i))->pass == FAIL;
    fprintf(f, "# rocesim fidelity report%s\n\n%u checks, %u failed. Generated by `make validate`%s; the "
               "simulated runs are in `runs/`.\n\n",
            fast ? " (fast subset)" : "", rows->len, failed, fast ? " --fast" : "");
    fprintf(f, "| check | reference | tolerance | measured | verdict |\n|---|---|---|---|---|\n");
    for (guint i = 0; i < rows->len; i++) {
        struct row *r = g_ptr_array_index(rows, i);
        fprintf(f, "| %s | %s | %s | %s | %s |\n", r->check, r->reference, r->tolerance, r->measured,
                r->pass == PASS ? "pass" : r->pass == OPEN ? "open (see README)" : "**FAIL**");
    }
    if (!fast)
        fprintf(f, "\n![fluid model](fluid.png)\n");
    fclose(f);
    printf("report: %s (%u checks, %u failed)\n", path, rows->len, failed);
    g_free(path);
}

int main(int argc, char **argv)
{
    gboolean fast = argc == 3 && !strcmp(argv[1], "--fast");
    if (argc != 2 + fast) {
        fprintf(stderr, "usage: validate [--fast] OUT_DIR\n");
        return 2;
    }
    out_dir = argv[argc - 1];
    if (g_mkdir_with_parents(out_dir, 0755) != 0) {
        fprintf(stderr, "validate: %s: %s\n", out_dir, g_strerror(errno));
        return 2;
    }
    rows = g_ptr_array_new();
    presets();
    pfc();
    collectives(fast);
    fluid(fast);
    hpcc();
    if (!fast)
        permutation();
    write_report(fast);
    guint failed = 0, open = 0, n = rows->len;
    for (guint i = 0; i < rows->len; i++) {
        struct row *r = g_ptr_array_index(rows, i);
        failed += r->pass == FAIL;
        open += r->pass == OPEN;
        g_free(r->check);
        g_free(r->reference);
        g_free(r->tolerance);
        g_free(r->measured);
        g_free(r);
    }
    g_ptr_array_free(rows, TRUE);
    if (open)
        printf("validation: %u open (known disagreements, shown in the report)\n", open);
    printf("validation: %u passed, %u failed\n", n - failed - open, failed);
    return failed ? 1 : 0;
}
