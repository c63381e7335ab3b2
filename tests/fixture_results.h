/* A small but realistic results folder (docs/results-format.md) for the analysis suites:
 * 8 hosts on 2 leaves and 2 spines at 100 Gb/s, a 7-to-1 incast plus an allreduce and an
 * alltoall job, 200 µs of queue samples, PFC pauses, DCQCN-like rates and counters.
 * Everything is computed from fixed formulas and a seeded GRand, so the folder is the same on
 * every run. */
#ifndef ROCESIM_FIXTURE_RESULTS_H
#define ROCESIM_FIXTURE_RESULTS_H
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    double max_queue_scale;   /* multiplies metrics.max_queue_bytes and the top port's max */
    gboolean counter_series;  /* counters.csv sampled every 20 µs, not only at the end */
    const char *name;         /* scenario name */
} fixture_opts;

#define FIXTURE_END_NS 200000.0
#define FIXTURE_NQ 8

static const struct {
    const char *node;
    int port;
    double peak;     /* bytes */
    double t0, t1;   /* ns: when the queue is busy */
} fixture_queues[FIXTURE_NQ] = {
    { "host1", 0, 9000, 30000, 60000 },     { "leaf0", 0, 24000, 10000, 40000 },
    { "leaf0", 1, 300000, 20000, 150000 },  { "leaf0", 4, 60000, 15000, 90000 },
    { "leaf1", 4, 120000, 25000, 110000 },  { "leaf1", 5, 45000, 30000, 120000 },
    { "spine0", 0, 180000, 22000, 130000 }, { "spine1", 0, 80000, 40000, 170000 },
};

static inline double fixture_queue_at(int q, double t)
{
    double t0 = fixture_queues[q].t0, t1 = fixture_queues[q].t1;
    if (t < t0 || t > t1)
        return 0;
    double x = (t - t0) / (t1 - t0);
    /* A hump with a DCQCN-like sawtooth on top, rounded to 1 KB cells. */
    double saw = 0.75 + 0.25 * fabs(sin(x * 23.0 + q));
    return floor(fixture_queues[q].peak * sin(x * G_PI) * saw / 1000.0) * 1000.0;
}

static inline gboolean fixture_put(const char *dir, const char *file, GString *s)
{
    char *p = g_build_filename(dir, file, NULL);
    gboolean ok = g_file_set_contents(p, s->str, (gssize)s->len, NULL);
    g_free(p);
    g_string_free(s, TRUE);
    return ok;
}

static inline int fixture_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Writes the folder into dir (which must exist). */
static inline gboolean fixture_results(const char *dir, const fixture_opts *o)
{
    fixture_opts def = { 1.0, FALSE, "incast-and-allreduce" };
    if (!o)
        o = &def;
    double qscale = o->max_queue_scale > 0 ? o->max_queue_scale : 1.0;
    GRand *rng = g_rand_new_with_seed(7);

    /* transfers.csv: 7-to-1 incast (slow), the rest uncongested. */
    GString *s = g_string_new("id,src,dst,bytes,prio,start_ns,end_ns,fct_ns,ideal_ns,slowdown\n");
    double fct[64];
    double slow[64];
    for (int i = 0; i < 64; i++) {
        static const double sizes[] = { 65536, 262144, 1048576 };
        double bytes = sizes[i % 3];
        int src = i % 8, dst = (i % 8 == 1) ? 0 : 1;
        if (i >= 28) {
            src = i % 8;
            dst = (src + 1) % 8;
        }
        double ideal = floor(bytes * 8 / 100.0 + 3000);   /* ns at 100 Gb/s + 3 µs base */
        double sd = i < 28 ? 3.0 + 4.0 * g_rand_double(rng) : 1.0 + 0.3 * g_rand_double(rng);
        double f = floor(ideal * sd);
        double start = i * 2500.0;
        fct[i] = f;
        slow[i] = f / ideal;
        g_string_append_printf(s, "%d,%d,%d,%.0f,3,%.0f,%.0f,%.0f,%.0f,%.4f\n", i, src, dst,
                               bytes, start, start + f, f, ideal, f / ideal);
    }
    gboolean ok = fixture_put(dir, "transfers.csv", s);
    qsort(fct, 64, sizeof(double), fixture_cmp_double);
    qsort(slow, 64, sizeof(double), fixture_cmp_double);

    /* queues.csv: a sample every µs for queues that changed. */
    s = g_string_new("t_ns,node,port,prio,bytes\n");
    double last[FIXTURE_NQ], qmax[FIXTURE_NQ] = { 0 };
    GArray *qs[FIXTURE_NQ];
    for (int q = 0; q < FIXTURE_NQ; q++) {
        last[q] = -1;
        qs[q] = g_array_new(FALSE, FALSE, sizeof(double));
    }
    for (double t = 0; t <= FIXTURE_END_NS; t += 1000) {
        for (int q = 0; q < FIXTURE_NQ; q++) {
            double b = fixture_queue_at(q, t);
            g_array_append_val(qs[q], b);
            qmax[q] = fmax(qmax[q], b);
            if (b == last[q])
                continue;
            last[q] = b;
            g_string_append_printf(s, "%.0f,%s,%d,3,%.0f\n", t, fixture_queues[q].node,
                                   fixture_queues[q].port, b);
        }
    }
    ok = fixture_put(dir, "queues.csv", s) && ok;

    /* pfc.csv: pauses at the spine and leaf1 uplink; host5 still paused at the end. */
    s = g_string_new("t_ns,node,port,prio,event,duration_ns\n"
                     "40000,spine0,0,3,pause,0\n"
                     "45000,leaf1,4,3,pause,0\n"
                     "52000,spine0,0,3,resume,12000\n"
                     "60000,leaf1,4,3,resume,15000\n"
                     "70000,spine0,0,3,pause,0\n"
                     "75000,spine0,0,3,resume,5000\n"
                     "100000,host5,0,3,pause,0\n"
                     "120000,leaf1,4,3,pause,0\n"
                     "131000,leaf1,4,3,resume,11000\n");
    ok = fixture_put(dir, "pfc.csv", s) && ok;

    /* rates.csv: 10 flows, cut by CNPs and recovering, every 2 µs while active. */
    s = g_string_new("t_ns,flow,rate_gbps\n");
    for (double t = 0; t <= FIXTURE_END_NS; t += 2000) {
        for (int f = 0; f < 10; f++) {
            double start = f * 8000.0, stop = 120000.0 + f * 6000.0;
            if (t < start || t > stop)
                continue;
            double period = 15000.0 + 1500.0 * f;
            double ph = fmod(t - start + f * 3000.0, period) / period;
            double rate = f < 7 ? 100.0 / 7.0 * (0.6 + 0.8 * ph) : 60.0 + 40.0 * ph;
            g_string_append_printf(s, "%.0f,%d,%.3f\n", t, f, fmin(rate, 100.0));
        }
    }
    ok = fixture_put(dir, "rates.csv", s) && ok;

    /* counters.csv: cumulative counters, optionally sampled every 20 µs. */
    s = g_string_new("t_ns,node,port,counter,value\n");
    for (double t = o->counter_series ? 20000 : FIXTURE_END_NS; t <= FIXTURE_END_NS; t += 20000) {
        double x = t / FIXTURE_END_NS;
        double marks = floor(1800 * (1 - cos(x * G_PI)) / 2);   /* mostly mid-run */
        g_string_append_printf(s, "%.0f,host0,0,np_ecn_marked_roce_packets,%.0f\n", t,
                               floor(marks * 0.3));
        g_string_append_printf(s, "%.0f,host0,0,np_cnp_sent,%.0f\n", t, floor(marks * 0.05));
        g_string_append_printf(s, "%.0f,host1,0,np_ecn_marked_roce_packets,%.0f\n", t,
                               floor(marks * 0.7));
        g_string_append_printf(s, "%.0f,host1,0,np_cnp_sent,%.0f\n", t, floor(marks * 0.12));
        g_string_append_printf(s, "%.0f,host2,0,rp_cnp_handled,%.0f\n", t, floor(marks * 0.17));
        g_string_append_printf(s, "%.0f,leaf0,1,ecn_marked,%.0f\n", t, marks);
        g_string_append_printf(s, "%.0f,spine0,0,tx_prio3_pause,%.0f\n", t, floor(x * 40));
    }
    ok = fixture_put(dir, "counters.csv", s) && ok;

    /* collectives.csv: two jobs, six iterations each. */
    s = g_string_new("job,op,algorithm,ranks,bytes,iteration,start_ns,end_ns,time_us,"
                     "algbw_GBps,busbw_GBps\n");
    double ar_t[6];
    for (int it = 0; it < 6; it++) {
        double t_ar = 170.0 + 25.0 * g_rand_double(rng) + (it == 2 ? 60.0 : 0.0);
        double t_a2a = 95.0 + 10.0 * g_rand_double(rng);
        ar_t[it] = t_ar;
        double bytes = 8388608, b2 = 4194304;
        g_string_append_printf(s, "ar,allreduce,ring,8,%.0f,%d,%.0f,%.0f,%.3f,%.3f,%.3f\n",
                               bytes, it, it * 300000.0, it * 300000.0 + t_ar * 1e3, t_ar,
                               bytes / (t_ar * 1e3), bytes / (t_ar * 1e3) * 1.75);
        g_string_append_printf(s, "a2a,alltoall,pairwise,8,%.0f,%d,%.0f,%.0f,%.3f,%.3f,%.3f\n",
                               b2, it, it * 300000.0 + 1000, it * 300000.0 + 1000 + t_a2a * 1e3,
                               t_a2a, b2 / (t_a2a * 1e3), b2 / (t_a2a * 1e3) * 0.875);
    }
    ok = fixture_put(dir, "collectives.csv", s) && ok;
    qsort(ar_t, 6, sizeof(double), fixture_cmp_double);

    s = g_string_new("node,port,peer,peer_port,rate_bps,delay_ps\n");
    for (int h = 0; h < 8; h++)
        g_string_append_printf(s, "host%d,0,leaf%d,%d,100000000000,1000000\n", h, h / 4, h % 4);
    for (int l = 0; l < 2; l++)
        for (int sp = 0; sp < 2; sp++)
            g_string_append_printf(s, "leaf%d,%d,spine%d,%d,100000000000,1000000\n", l, 4 + sp,
                                   sp, l);
    ok = fixture_put(dir, "topology.csv", s) && ok;

    /* summary.json, consistent with the files above. */
    int top = 0;
    for (int q = 1; q < FIXTURE_NQ; q++)
        if (qmax[q] > qmax[top])
            top = q;
    GString *ports = g_string_new(NULL);
    double all_p99 = 0;
    for (int q = 0; q < FIXTURE_NQ; q++) {
        double *v = (double *)qs[q]->data;
        qsort(v, qs[q]->len, sizeof(double), fixture_cmp_double);
        double p99 = v[(size_t)ceil(0.99 * qs[q]->len) - 1];
        all_p99 = fmax(all_p99, p99);
        double mx = q == top ? qmax[q] * qscale : qmax[q];
        g_string_append_printf(ports,
                               "%s    {\"node\": \"%s\", \"port\": %d, \"max_queue_bytes\": %.0f, "
                               "\"p99_queue_bytes\": %.0f, \"tx_bytes\": %d, \"utilisation\": %.3f,"
                               " \"paused_fraction\": %.4f, \"ecn_marked\": %d, \"drops\": 0}",
                               q ? ",\n" : "", fixture_queues[q].node, fixture_queues[q].port, mx,
                               p99, 1000000 + q * 250000, 0.35 + 0.08 * q,
                               q == 6 ? 0.085 : q == 4 ? 0.13 : 0.0, q == 2 ? 1800 : 0);
        g_array_free(qs[q], TRUE);
    }
    /* The name goes into a JSON string: escape quotes and backslashes. */
    GString *jname = g_string_new(NULL);
    for (const char *c = o->name ? o->name : def.name; *c; c++) {
        if (*c == '"' || *c == '\\')
            g_string_append_c(jname, '\\');
        g_string_append_c(jname, *c);
    }
    s = g_string_new(NULL);
    g_string_append_printf(s,
        "{\n"
        "  \"rocesim_version\": \"0.1.0\",\n"
        "  \"scenario\": {\n"
        "    \"scenario\": {\"name\": \"%s\", \"seed\": \"1\", \"duration\": \"200us\"},\n"
        "    \"topology\": {\"kind\": \"leaf_spine\", \"hosts\": \"8\", \"leaves\": \"2\", "
        "\"spines\": \"2\", \"link_rate\": \"100Gbps\", \"link_delay\": \"1us\"},\n"
        "    \"switch\": {\"buffer\": \"16MB\", \"ecn_kmin\": \"100KB\", \"ecn_kmax\": \"400KB\", "
        "\"ecn_pmax\": \"0.2\", \"pfc\": \"true\", \"xoff\": \"600KiB\"},\n"
        "    \"nic\": {\"cc\": \"dcqcn\", \"mtu\": \"4KB\", \"preset\": \"connectx\"},\n"
        "    \"workload incast\": {\"pattern\": \"incast\", \"senders\": \"7\", "
        "\"bytes\": \"256KiB\"},\n"
        "    \"workload ar\": {\"op\": \"allreduce\", \"algorithm\": \"ring\", "
        "\"bytes\": \"8MiB\", \"iterations\": \"6\"}\n"
        "  },\n"
        "  \"metrics\": {\n"
        "    \"transfers\": 64, \"transfers_completed\": 64, \"bytes\": 26214400,\n"
        "    \"completion_ns\": %.0f,\n"
        "    \"fct_p50_ns\": %.0f, \"fct_p99_ns\": %.0f, \"fct_max_ns\": %.0f,\n"
        "    \"slowdown_p50\": %.4f, \"slowdown_p99\": %.4f, \"slowdown_max\": %.4f,\n"
        "    \"drops\": 0, \"drops_lossless\": 0, \"ecn_marked\": 1800, \"cnp_sent\": 306,\n"
        "    \"cnp_handled\": 306, \"retransmitted_packets\": 0, \"timeouts\": 0,\n"
        "    \"pause_frames\": 40, \"paused_ns\": 143000, \"paused_fraction\": 0.0179,\n"
        "    \"max_queue_bytes\": %.0f, \"p99_queue_bytes\": %.0f,\n"
        "    \"collective_time_p50_us\": %.3f, \"collective_time_p99_us\": %.3f, "
        "\"busbw_GBps\": 75.25\n"
        "  },\n"
        "  \"ports\": [\n%s\n  ],\n"
        "  \"jobs\": [\n"
        "    {\"job\": \"ar\", \"op\": \"allreduce\", \"time_p50_us\": %.3f, "
        "\"time_p99_us\": %.3f, \"busbw_GBps\": 75.25, \"comm_fraction\": 0.62},\n"
        "    {\"job\": \"a2a\", \"op\": \"alltoall\", \"time_p50_us\": 99.1, "
        "\"time_p99_us\": 104.7, \"busbw_GBps\": 36.4, \"comm_fraction\": 0.33}\n"
        "  ],\n"
        "  \"warnings\": [\"PFC: spine0 port 0 prio 3 paused 8.5%% of the run\", "
        "\"host5 port 0 prio 3 was still paused when the run ended\"],\n"
        "  \"engine\": {\"events\": 4817223, \"events_per_s\": 21500000.0, "
        "\"packet_hops\": 1203311, \"packet_hops_per_s\": 5370000.0,\n"
        "             \"sim_time_ns\": %.0f, \"wall_s\": 0.224, \"peak_rss_bytes\": 48234496}\n"
        "}\n",
        jname->str, FIXTURE_END_NS, fct[31], fct[63], fct[63], slow[31],
        slow[63], slow[63], qmax[top] * qscale, all_p99, ar_t[2], ar_t[5], ports->str, ar_t[2],
        ar_t[5], FIXTURE_END_NS);
    g_string_free(ports, TRUE);
    g_string_free(jname, TRUE);
    ok = fixture_put(dir, "summary.json", s) && ok;
    g_rand_free(rng);
    return ok;
}

/* A fresh temporary folder holding the fixture; NULL on failure. */
static inline char *fixture_tmp(const fixture_opts *o)
{
    char *d = g_dir_make_tmp("rocesim-results-XXXXXX", NULL);
    if (d && !fixture_results(d, o)) {
        char *cmd = g_strdup_printf("rm -rf '%s'", d);
        if (system(cmd) != 0) { /* best effort */ }
        g_free(cmd);
        g_free(d);
        return NULL;
    }
    return d;
}

#endif
