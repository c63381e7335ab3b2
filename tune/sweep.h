/* Parameter sweeps: a grid of scenario overrides, each point run as its own `rocesim run`
 * process, N at a time, each into its own results folder, resumable, gathered into sweep.csv.
 *
 * Value lists (--vary KEY=VALUES, or `vary = KEY=VALUES` in the scenario's [sweep] section):
 *   50KB,100KB,200KB     a list; a value may be any text without a comma
 *   50KB..400KB*2        geometric: 50KB, 100KB, 200KB, 400KB (factor above 1)
 *   0.01..0.2+0.05       linear: 0.01, 0.06, 0.11, 0.16
 *   1us..4us+1us, 8us    ranges and single values mix in one list
 * Both ends of a range carry the same unit (or none), and every generated value keeps it.
 * The end is included when the sequence reaches it exactly (to within a billionth of a step,
 * so float rounding does not drop it). Numbers are printed with as few decimals as they need.
 *
 * Replicates: `replicates = N` (or --replicates N) runs every configuration of the grid under
 * N seeds, the scenario's seed and the N-1 after it. Each run is a point of its own, named
 * CONFIG,seed=S, and is byte-identical to `rocesim run --set scenario.seed=S` with the point's
 * values; runs and configurations are resumed alike. A configuration's index c owns the points
 * c*N .. c*N+N-1 (sweep_config_point).
 *
 * Folder layout of a sweep (DIR):
 *   DIR/sweep.csv              one row per configuration: varied keys, headline metrics (with
 *                              replicates: their mean, standard deviation and 95% confidence
 *                              half-width), status (ok, deadlock, failed, invalid)
 *   DIR/sweep-runs.csv         with replicates: one row per run, with its seed
 *   DIR/tune.csv               `rocesim tune`: every point evaluated, in order
 *   DIR/points/NAME/           the point's results folder (as `rocesim run -o`)
 *   DIR/points/NAME.log        the point's stderr (removed when the point succeeded silently)
 *   DIR/points/NAME.failed     marker of a failed point (launch id, exit status, stderr tail)
 *   DIR/plots/                 sweep.gp/.dat/.png/.svg (and tune.* for `rocesim tune`)
 *   DIR/.lock                  held while a sweep or tune writes the folder (not under MPI)
 * A point counts as done when DIR/points/NAME/summary.json is complete and shows the
 * configuration this point runs (otherwise it is stale and runs again). A run that stops at a
 * PFC deadlock (exit 3, results written) is done, with status deadlock.
 * NAME is label=value pairs joined by commas, e.g. ecn_kmin=50KB,ecn_kmax=400KB: the label
 * is the shortest dot-separated tail of the key that no other varied key shares; characters
 * other than letters, digits and . _ - + = , become _; names longer than 200 characters are
 * cut and end in ~ and a hash of the full name. */
#ifndef ROCESIM_SWEEP_H
#define ROCESIM_SWEEP_H
#include <glib.h>
#include <sys/types.h>
#include "tune/mpi_split.h"

#define SWEEP_ERROR sweep_error_quark()
GQuark sweep_error_quark(void);

#define SWEEP_MAX_VALUES 10000   /* values in one dimension */
#define SWEEP_MAX_POINTS 100000  /* points (runs) in a grid */
#define SWEEP_MAX_REPLICATES 1000
#define SWEEP_NAME_MAX 200       /* point folder names longer than this are shortened */

/* ---- values and names ---- */

/* Expands a value list into a new array of strings (g_free'd by the array); NULL and *err
 * (naming the bad item and what was expected) on bad syntax. */
GPtrArray *sweep_expand_values(const char *text, GError **err);

struct sweep_dim {
    char *key;          /* as given to --set: "switch.ecn_kmin", "workload.inc.size" */
    char *label;        /* short name used in point names: "ecn_kmin" (sweep_dims_label) */
    GPtrArray *values;  /* char *, expanded, no duplicates */
};

/* Parses "SECTION.KEY=VALUES". */
struct sweep_dim *sweep_dim_parse(const char *spec, GError **err);
void sweep_dim_free(gpointer d);
/* Checks that no key is varied twice and fills in each dimension's label. */
gboolean sweep_dims_prepare(GPtrArray *dims, GError **err);
/* Text made safe for a folder name (see above); g_free the result. */
char *sweep_sanitize(const char *text);
/* The folder name of the point with value index idx[d] in dimension d. */
char *sweep_point_name(GPtrArray *dims, const guint *idx);

/* ---- constraints and the coarse grid of `tune` ---- */

enum sweep_op { SWEEP_EQ, SWEEP_NE, SWEEP_LT, SWEEP_LE, SWEEP_GT, SWEEP_GE };

struct sweep_constraint {
    char *metric;
    enum sweep_op op;
    double value;
    char *text;         /* normalised: "drops==0" */
};

/* "METRIC OP NUMBER" with OP one of == != < <= > >=, spaces allowed around OP. */
gboolean sweep_constraint_parse(const char *text, struct sweep_constraint *c, GError **err);
gboolean sweep_constraint_holds(const struct sweep_constraint *c, double v);
void sweep_constraint_clear(struct sweep_constraint *c);

/* Value indices of a dimension of k values kept at a coarseness level:
 * 0 every other value and the last (all of them when k <= 3), 1 the ends and the middle,
 * 2 the two ends, 3 the middle one. Returns how many were written to out (room for k). */
guint sweep_coarse_indices(guint k, int level, guint *out);
/* Chooses a level per dimension so that the coarse grid has at most `target` points (at least
 * one): starts with level 0 everywhere and coarsens the dimension with the most kept values
 * (the first of equals) to its next level that keeps fewer. */
void sweep_coarse_levels(const guint *k, guint ndims, guint target, int *levels);

/* ---- the [sweep] section of a scenario ---- */

/* [sweep]
 *   vary = switch.ecn_kmin=50KB..400KB*2     one dimension per key: vary, vary2, vary3, ...
 *   vary2 = switch.ecn_kmax=200KB,800KB
 *   objective = fct_p99_ns                   tune: the metric to optimise
 *   direction = minimize                     tune: minimize (default) or maximize
 *   constraint = drops==0                    tune: constraint, constraint2, ...
 *   budget = 20                              tune: most configurations to run
 *   replicates = 5                           seeds per configuration (default 1)
 *   rank = mean                              tune: rank by the replicates' mean or a quantile pNN
 *   constraint_share = 1                     tune: share of replicates a constraint must hold on
 * `rocesim run` ignores the section; command-line options replace its entries. */
struct sweep_section {
    GPtrArray *vary;         /* char * specs, in key order vary, vary2, ... */
    char *objective;
    char *direction;
    GPtrArray *constraints;  /* char * */
    guint budget;            /* 0 = not given */
    guint replicates;        /* 0 = not given */
    char *rank;
    double constraint_share; /* 0 = not given */
};

/* Reads the section from the scenario file; `sets` may override its keys (sweep.KEY=VALUE). */
gboolean sweep_section_read(const char *scenario, char **sets, struct sweep_section *sec, GError **err);
void sweep_section_clear(struct sweep_section *sec);

/* ---- a sweep ---- */

enum sweep_state { SP_PENDING = 0, SP_INVALID, SP_DONE, SP_FAILED };

struct sweep_point {
    guint index;          /* position in s->points */
    guint config;         /* position of its configuration in the grid (first dimension outermost) */
    guint rep;            /* replicate 0 .. replicates-1 */
    guint64 seed;         /* with replicates: the run's seed */
    guint *idx;           /* value index per dimension */
    char *name;
    char **sets;          /* the sweep's --set values, then KEY=VALUE per dimension */
    GKeyFile *expected;   /* the expanded scenario of this point: results whose summary.json
                           * shows another configuration are stale and run again */
    char *invalid;        /* SP_INVALID: why the scenario does not load with these values */
    enum sweep_state state;
    gboolean reused;      /* SP_DONE from an earlier run of the sweep */
    gboolean stale;       /* had results from other settings */
    char *failure;        /* SP_FAILED: "exit 2" or "killed by signal 9" */
    char *stderr_tail;    /* SP_FAILED: the last lines of its stderr */
    GHashTable *metrics;  /* SP_DONE: name -> value text, from summary.json "metrics" */
    pid_t pid;            /* while running */
    double started;
};

struct sweep_progress {
    guint total, done, failed, running;
    guint to_run, ran;    /* launches planned and finished in this invocation */
    double run_seconds;   /* summed wall time of finished launches */
    double t0;
    gboolean shown;
};

struct sweep {
    char *scenario;
    char **sets;          /* the sweep's own --set values (also passed to every point) */
    GPtrArray *dims;      /* struct sweep_dim * */
    GPtrArray *points;    /* struct sweep_point *, grid order, the replicates of a configuration together */
    guint replicates;     /* runs per configuration (1: no replicates) */
    guint nconfigs;       /* configurations in the grid */
    char *out, *points_dir;
    guint jobs;
    guint workers;        /* threads per point (`run --workers`; 0 or 1: one) */
    gboolean workers_auto; /* --workers auto: the points running at once share out this
                            * process's CPUs, each pinned to its share (tune/sweep_cpus.h) */
    guint auto_lanes, auto_cpus; /* the share last announced */
    gboolean quiet;       /* no progress line, no per-point chatter (failures still shown) */
    gboolean progress;    /* a progress line on stderr (a terminal and not quiet) */
    const char *cmd;      /* "sweep" or "tune", for messages */
    struct mpi_split mpi;
    struct sweep_progress prog;
    int interrupted;      /* the signal that stopped sweep_run, or 0 */
    int lock_fd;
    char *rank_problem;   /* SWEEP_RANKS_DIFFER, SWEEP_RANK_UNSEEN: which rank, and what to do */
    double rank_wait_s;   /* MPI rank 0: how long it waits, done with its own points, for a
                           * rank that has left no trace in the folder (at most 1e9; 0:
                           * SWEEP_RANK_WAIT_S) */
};

/* Builds the grid and validates it before anything runs: the scenario must load with the
 * sweep's --set values and with the first point's values; each point is loaded, and one
 * that does not load is marked SP_INVALID (an impossible combination such as Kmin above
 * Kmax), but a value that no point can use is bad input. Takes ownership of dims.
 * out NULL: the scenario's [output] dir followed by "-" and cmd. FALSE means bad input. */
gboolean sweep_init(struct sweep *s, const char *cmd, const char *scenario, char **sets, GPtrArray *dims,
                    const char *out, guint jobs, guint replicates, gboolean quiet, GError **err);
/* Replicate r of configuration c. */
static inline struct sweep_point *sweep_config_point(const struct sweep *s, guint c, guint r)
{
    return g_ptr_array_index(s->points, c * s->replicates + r);
}
void sweep_free(struct sweep *s);

/* Default parallelism: the cores this process may run on, shared between the ranks of an
 * MPI launch that run on the same host. */
guint sweep_default_jobs(const struct mpi_split *m);

/* Creates DIR and DIR/points, and (outside MPI) takes DIR/.lock so two sweeps cannot write
 * one folder at once. */
gboolean sweep_prepare_dir(struct sweep *s, GError **err);

/* Called as each point finishes (done, reused or failed); return FALSE to stop the sweep:
 * running points are terminated and left pending. */
typedef gboolean (*sweep_point_fn)(struct sweep *s, struct sweep_point *p, void *ud);

enum sweep_result { SWEEP_FINISHED = 0, SWEEP_STOPPED, SWEEP_INTERRUPTED, SWEEP_RANKS_DIFFER, SWEEP_RANK_UNSEEN };

/* How long rank 0 waits by default for a rank of its launch that has left no trace */
#define SWEEP_RANK_WAIT_S 60.0

/* Runs the points whose indices are listed (invalid ones are skipped, complete ones reused),
 * s->jobs at a time. SIGINT, SIGTERM and SIGHUP stop it: running points are terminated and
 * s->interrupted is set. */
enum sweep_result sweep_run(struct sweep *s, const guint *which, guint n, sweep_point_fn fn, void *ud);

/* MPI rank 0: waits until every point owned by another rank has results or a failure marker
 * of this launch. SWEEP_RANKS_DIFFER (the reason in s->rank_problem) when a rank that is done
 * built another grid: each rank reads the scenario, the [sweep] section and the files they
 * name on its own machine, and its points' results never match what rank 0 expects.
 * SWEEP_RANK_UNSEEN when, after s->rank_wait_s of waiting, a rank of this launch has not
 * left its start marker: it writes another folder (DIR not shared between the machines) or
 * never started. Both only when the launcher gives a launch id. */
enum sweep_result sweep_wait_others(struct sweep *s);
/* MPI ranks above 0, before their points: a marker (points/.rank-R-started) with the launch's
 * id, for rank 0's wait; none when the launcher gives no id. */
void sweep_mark_rank_started(const struct sweep *s);
/* MPI ranks above 0, when their points are done: a marker (points/.rank-R) with the launch's
 * id and sweep_digest, for rank 0's wait; none when the launcher gives no id. */
void sweep_mark_rank_done(const struct sweep *s);
/* A digest of the grid as this process built it: every point's name, seed and expanded
 * scenario (or why it is invalid). Caller frees. */
char *sweep_digest(const struct sweep *s);

/* Clears the progress line (if shown). */
void sweep_progress_end(struct sweep *s);

/* The union of metric names of the finished points, sorted (g_free'd strings). */
GPtrArray *sweep_metric_names(struct sweep *s);
/* A metric of a finished point as a number. */
gboolean sweep_point_metric(const struct sweep_point *p, const char *name, double *v);
/* A finished point whose run stopped at a PFC deadlock (metrics.deadlock != 0; `rocesim run`
 * exits 3 but writes its results). */
gboolean sweep_point_deadlocked(const struct sweep_point *p);
/* "ok", "deadlock", "failed", "invalid" or "not run": the status column of sweep.csv. */
const char *sweep_state_text(const struct sweep_point *p);
/* Writes DIR/FILE: the varied keys (with replicates, then the seed), the union of metrics,
 * status; one row per point (run) in grid order. Written to a temporary file and renamed.
 * Without replicates this is sweep.csv; with them sweep-runs.csv. */
gboolean sweep_write_csv(struct sweep *s, const char *file, GError **err);
/* Writes path atomically. */
gboolean sweep_write_file(const char *path, const GString *text, GError **err);

#endif
