/* The sweep process pool: one `rocesim run` child per point, progress on a terminal,
 * interrupts, failures (see sweep.h). */
#define _GNU_SOURCE
#include "tune/sweep.h"
#include "tune/sweep_cpus.h"
#include "tune/sweep_point.h"
#include <fcntl.h>
#include <glib/gstdio.h>
#include <sched.h>
#include <sys/wait.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ======================================================================================
 * Progress
 * ====================================================================================== */

static void format_eta(double secs, char *buf, size_t len)
{
    long t = (long)(secs + 0.5);
    if (t < 60)
        g_snprintf(buf, len, "%lds", t);
    else if (t < 3600)
        g_snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
    else
        g_snprintf(buf, len, "%ldh%02ldm", t / 3600, (t / 60) % 60);
}

static void progress_show(struct sweep *s, const char *what)
{
    if (!s->progress)
        return;
    struct sweep_progress *g = &s->prog;
    char eta[32] = "";
    if (g->ran > 0 && g->to_run > g->ran) {
        double per = g->run_seconds / g->ran;
        guint left = g->to_run - g->ran;
        double queued = left > g->running ? left - g->running : 0;
        double lanes = s->jobs < left ? s->jobs : left;
        char t[24];
        format_eta(per * (queued + 0.5 * g->running) / (lanes > 0 ? lanes : 1), t, sizeof t);
        g_snprintf(eta, sizeof eta, ", ETA %s", t);
    }
    fprintf(stderr, "\r\033[K%s: %u/%u done, %u running, %u failed%s%s%s", s->cmd, g->done, g->total, g->running,
            g->failed, eta, what ? ", " : "", what ? what : "");
    fflush(stderr);
    g->shown = TRUE;
}

void sweep_progress_end(struct sweep *s)
{
    if (s->prog.shown) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
        s->prog.shown = FALSE;
    }
}

/* Prints a message on its own line, above the progress line. */
static void report(struct sweep *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void report(struct sweep *s, const char *fmt, ...)
{
    sweep_progress_end(s);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void report_failure(struct sweep *s, const struct sweep_point *p)
{
    char *log = sweep_point_path(s, p, ".log");
    if (p->stderr_tail && *p->stderr_tail) {
        char **lines = g_strsplit(p->stderr_tail, "\n", -1);
        char *body = g_strjoinv("\n    ", lines);
        g_strfreev(lines);
        report(s, "rocesim %s: point %s failed (%s):\n    %s\n  (stderr in %s)", s->cmd, p->name, p->failure, body,
               log);
        g_free(body);
    } else {
        report(s, "rocesim %s: point %s failed (%s), nothing on stderr", s->cmd, p->name, p->failure);
    }
    g_free(log);
}

/* ======================================================================================
 * The pool
 * ====================================================================================== */

struct running {
    pid_t pid;
    struct sweep_point *p;
};

/* Starts point p's run; cpus (NULL: none) is the CPU set it is pinned to, with --workers auto. */
static pid_t launch(struct sweep *s, struct sweep_point *p, const sigset_t *oldmask, const cpu_set_t *cpus,
                    GError **err)
{
    sweep_point_clean(s, p);
    char *out = sweep_point_path(s, p, "");
    char *log = sweep_point_path(s, p, ".log");
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, "rocesim");
    g_ptr_array_add(argv, "run");
    g_ptr_array_add(argv, s->scenario);
    for (int i = 0; p->sets[i]; i++) {
        g_ptr_array_add(argv, "--set");
        g_ptr_array_add(argv, p->sets[i]);
    }
    g_ptr_array_add(argv, "-o");
    g_ptr_array_add(argv, out);
    g_ptr_array_add(argv, "--quiet");
    g_ptr_array_add(argv, "--no-plots");
    char workers[16];
    if (cpus) {
        g_ptr_array_add(argv, "--workers");
        g_ptr_array_add(argv, "auto");
    } else if (s->workers > 1) {
        g_snprintf(workers, sizeof workers, "%u", s->workers);
        g_ptr_array_add(argv, "--workers");
        g_ptr_array_add(argv, workers);
    }
    g_ptr_array_add(argv, NULL);
    /* A point is one process of its own, even when this sweep is a rank of an MPI launch: the
     * launcher's variables would make it join the launch (cmd_run's mpirun detection). */
    char **envp = g_get_environ();
    static const char *const launcher[] = { "OMPI_", "PMIX_", "PMI_" };
    for (guint i = 0; envp[i];) {
        gboolean drop = FALSE;
        for (size_t k = 0; k < G_N_ELEMENTS(launcher); k++)
            drop |= g_str_has_prefix(envp[i], launcher[k]);
        if (drop) {
            g_free(envp[i]);
            memmove(&envp[i], &envp[i + 1], (g_strv_length(envp + i + 1) + 1) * sizeof *envp);
        } else {
            i++;
        }
    }
    pid_t pid = -1;
    int logfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int nullfd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (logfd < 0 || nullfd < 0) {
        g_set_error(err, SWEEP_ERROR, 1, "cannot create %s: %s", log, g_strerror(errno));
        goto done;
    }
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        g_set_error(err, SWEEP_ERROR, 1, "cannot start a process for point %s: %s", p->name, g_strerror(errno));
        goto done;
    }
    if (pid == 0) {
        dup2(nullfd, STDIN_FILENO);
        dup2(nullfd, STDOUT_FILENO);
        dup2(logfd, STDERR_FILENO);
        sigprocmask(SIG_SETMASK, oldmask, NULL);
        if (cpus && sched_setaffinity(0, sizeof *cpus, cpus) != 0) {
            static const char msg[] = "rocesim sweep: cannot pin the point to its CPUs\n";
            ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
            (void)w;
            _exit(127);
        }
        execve("/proc/self/exe", (char **)argv->pdata, envp);
        static const char msg[] = "rocesim sweep: cannot execute /proc/self/exe\n";
        ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)w;
        _exit(127);
    }
    p->pid = pid;
    p->started = now_s();
done:
    if (logfd >= 0)
        close(logfd);
    if (nullfd >= 0)
        close(nullfd);
    g_ptr_array_free(argv, TRUE);
    g_strfreev(envp);
    g_free(out);
    g_free(log);
    return pid;
}

static void write_failed_marker(const struct sweep *s, const struct sweep_point *p)
{
    char *path = sweep_point_path(s, p, ".failed");
    GString *g = g_string_new(NULL);
    g_string_append_printf(g, "%s\n%s\n%s\n", s->mpi.job ? s->mpi.job : "-", p->failure,
                           p->stderr_tail ? p->stderr_tail : "");
    GError *e = NULL;
    if (!g_file_set_contents(path, g->str, (gssize)g->len, &e)) {
        fprintf(stderr, "rocesim %s: %s\n", s->cmd, e->message);
        g_error_free(e);
    }
    g_string_free(g, TRUE);
    g_free(path);
}

/* A point's process ended with wait status st (stopped: terminated by the sweep itself). */
static void finished(struct sweep *s, struct sweep_point *p, int st, gboolean stopped)
{
    struct sweep_progress *g = &s->prog;
    g->running--;
    char *log = sweep_point_path(s, p, ".log");
    p->pid = 0;
    if (stopped) {
        /* terminated by us: leave the point pending, with nothing behind */
        sweep_point_clean(s, p);
        g_unlink(log);
        g_free(log);
        p->state = SP_PENDING;
        return;
    }
    g->ran++;
    g->run_seconds += now_s() - p->started;
    g_free(p->failure);
    g_free(p->stderr_tail);
    p->failure = p->stderr_tail = NULL;
    /* exit 3: the run stopped at a PFC deadlock and wrote its results (metrics.deadlock = 1):
     * an outcome of these settings, not a failure of the point */
    if (WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 3) && sweep_point_load_results(s, p)) {
        p->state = SP_DONE;
        g->done++;
        GStatBuf sb;
        if (g_stat(log, &sb) == 0 && sb.st_size == 0)
            g_unlink(log);
    } else {
        p->state = SP_FAILED;
        g->done++;
        g->failed++;
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
            p->failure = g_strdup("exit 0 but no complete summary.json");
        else if (WIFEXITED(st))
            p->failure = g_strdup_printf("exit %d", WEXITSTATUS(st));
        else if (WIFSIGNALED(st))
            p->failure = g_strdup_printf("killed by signal %d (%s)", WTERMSIG(st), g_strsignal(WTERMSIG(st)));
        else
            p->failure = g_strdup_printf("wait status %d", st);
        p->stderr_tail = sweep_log_tail(log);
        write_failed_marker(s, p);
        report_failure(s, p);
    }
    g_free(log);
}

enum sweep_result sweep_run(struct sweep *s, const guint *which, guint n, sweep_point_fn fn, void *ud)
{
    struct sweep_progress *g = &s->prog;
    if (g->t0 == 0)
        g->t0 = now_s();
    GPtrArray *queue = g_ptr_array_new();
    gboolean stop = FALSE;
    /* reuse complete results first */
    for (guint i = 0; i < n && !stop; i++) {
        struct sweep_point *p = g_ptr_array_index(s->points, which[i]);
        if (p->state == SP_INVALID || p->state == SP_DONE || p->state == SP_FAILED)
            continue;
        if (sweep_point_load_results(s, p)) {
            p->state = SP_DONE;
            p->reused = TRUE;
            g->done++;
            /* a sweep killed (SIGKILL) after the point's run finished never removed its
             * empty log: done now, as finished() would have */
            char *log = sweep_point_path(s, p, ".log");
            GStatBuf sb;
            if (g_stat(log, &sb) == 0 && sb.st_size == 0)
                g_unlink(log);
            g_free(log);
            if (fn && !fn(s, p, ud))
                stop = TRUE;
        } else {
            g_ptr_array_add(queue, p);
        }
    }
    g->to_run += queue->len;

    /* an inherited SIGCHLD = SIG_IGN would make the kernel reap the points behind our back */
    signal(SIGCHLD, SIG_DFL);
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, &old);

    struct running *run = g_new0(struct running, s->jobs);
    guint next = 0, nrun = 0;
    /* --workers auto: lane k (run[k]) gets its share of the CPUs */
    guint lanes = MAX(1u, MIN(s->jobs, queue->len)), ncpu = 0;
    int *cpu = NULL;
    if (s->workers_auto && queue->len) {
        cpu = g_new(int, CPU_SETSIZE);
        ncpu = sweep_cpus_mine(&s->mpi, cpu);
        int lane[CPU_SETSIZE];
        guint w = sweep_lane_cpus(cpu, ncpu, lanes, 0, lane);
        if (!s->quiet && s->mpi.rank == 0 && (lanes != s->auto_lanes || w != s->auto_cpus)) {
            sweep_progress_end(s);
            printf("  workers: auto, %u point%s at once on %u CPU%s each (of %u)\n", lanes, lanes == 1 ? "" : "s", w,
                   w == 1 ? "" : "s", ncpu);
            fflush(stdout);
        }
        s->auto_lanes = lanes;
        s->auto_cpus = w;
    }
    gboolean terminated = FALSE; /* SIGTERM sent to what runs */
#define TERMINATE_ALL(signo)                                                                     \
    do {                                                                                         \
        for (guint k_ = 0; k_ < s->jobs; k_++)                                                   \
            if (run[k_].pid)                                                                     \
                kill(run[k_].pid, (signo));                                                      \
    } while (0)
    progress_show(s, NULL);
    while (nrun > 0 || (!stop && next < queue->len)) {
        while (!stop && nrun < s->jobs && next < queue->len) {
            struct sweep_point *p = g_ptr_array_index(queue, next++);
            guint slot = 0;
            while (run[slot].pid)
                slot++;
            cpu_set_t pin;
            if (cpu) {
                int lane[CPU_SETSIZE];
                guint w = sweep_lane_cpus(cpu, ncpu, lanes, slot, lane);
                CPU_ZERO(&pin);
                for (guint i = 0; i < w; i++)
                    CPU_SET(lane[i], &pin);
            }
            GError *e = NULL;
            pid_t pid = launch(s, p, &old, cpu ? &pin : NULL, &e);
            if (pid < 0) {
                report(s, "rocesim %s: %s", s->cmd, e->message);
                g_error_free(e);
                p->state = SP_FAILED;
                p->failure = g_strdup("could not be started");
                g->done++;
                g->failed++;
                g->ran++;
                if (fn && !fn(s, p, ud))
                    stop = TRUE;
                continue;
            }
            run[slot].pid = pid;
            run[slot].p = p;
            nrun++;
            g->running++;
        }
        if (stop && !terminated) {
            TERMINATE_ALL(SIGTERM);
            terminated = TRUE;
        }
        progress_show(s, NULL);
        if (nrun == 0)
            break;
        /* sleep until a child ends, a signal comes, or a second passes (progress); then take
         * every pending signal, so an interrupt is seen before the children it killed */
        struct timespec ts = { 1, 0 }, zero = { 0, 0 };
        for (int sig = sigtimedwait(&set, NULL, &ts); sig > 0; sig = sigtimedwait(&set, NULL, &zero)) {
            if (sig == SIGCHLD)
                continue;
            if (!s->interrupted)
                s->interrupted = sig;
            if (!stop) {
                stop = TRUE;
                TERMINATE_ALL(SIGTERM);
                terminated = TRUE;
            } else {
                TERMINATE_ALL(SIGKILL); /* a second interrupt: no more waiting */
            }
        }
        for (;;) {
            int st;
            pid_t pid = waitpid(-1, &st, WNOHANG);
            if (pid <= 0)
                break;
            for (guint k = 0; k < s->jobs; k++) {
                if (run[k].pid != pid)
                    continue;
                struct sweep_point *p = run[k].p;
                run[k].pid = 0;
                run[k].p = NULL;
                nrun--;
                /* a point killed by a signal once the sweep is stopping was stopped by the
                 * sweep (or by the same Ctrl-C): pending, not failed */
                gboolean ours = stop && WIFSIGNALED(st);
                finished(s, p, st, ours);
                if (!ours && fn && !fn(s, p, ud))
                    stop = TRUE;
                break;
            }
        }
    }
#undef TERMINATE_ALL
    g_free(run);
    g_free(cpu);
    sigprocmask(SIG_SETMASK, &old, NULL);
    g_ptr_array_unref(queue);
    progress_show(s, NULL);
    if (s->interrupted)
        return SWEEP_INTERRUPTED;
    return stop ? SWEEP_STOPPED : SWEEP_FINISHED;
}

/* A failure marker written by a rank of this launch: the job id matches (when the launcher
 * gives one). */
static gboolean load_failed_marker(const struct sweep *s, struct sweep_point *p)
{
    char *path = sweep_point_path(s, p, ".failed");
    char *text = NULL;
    gboolean ok = g_file_get_contents(path, &text, NULL, NULL);
    g_free(path);
    if (!ok)
        return FALSE;
    char **lines = g_strsplit(text, "\n", 3);
    g_free(text);
    if (!lines[0] || !lines[1] || (s->mpi.job && strcmp(lines[0], s->mpi.job))) {
        g_strfreev(lines);
        return FALSE;
    }
    g_free(p->failure);
    g_free(p->stderr_tail);
    p->failure = g_strdup(lines[1]);
    p->stderr_tail = g_strdup(lines[2] ? g_strstrip(lines[2]) : "");
    g_strfreev(lines);
    return TRUE;
}

static char *rank_marker_path(const struct sweep *s, int rank, const char *suffix)
{
    char *f = g_strdup_printf(".rank-%d%s", rank, suffix);
    char *path = g_build_filename(s->points_dir, f, NULL);
    g_free(f);
    return path;
}

static void write_rank_marker(const struct sweep *s, const char *suffix, const char *text)
{
    char *path = rank_marker_path(s, s->mpi.rank, suffix);
    GError *e = NULL;
    if (!g_file_set_contents(path, text, -1, &e)) {
        fprintf(stderr, "rocesim %s: %s\n", s->cmd, e->message);
        g_error_free(e);
    }
    g_free(path);
}

void sweep_mark_rank_started(const struct sweep *s)
{
    if (!s->mpi.job)
        return; /* rank 0 could not tell it from an earlier launch's (rank_unseen) */
    char *text = g_strdup_printf("%s\n", s->mpi.job);
    write_rank_marker(s, "-started", text);
    g_free(text);
}

void sweep_mark_rank_done(const struct sweep *s)
{
    if (!s->mpi.job)
        return; /* rank 0 could not tell it from an earlier launch's (rank_with_other_grid) */
    char *d = sweep_digest(s);
    char *text = g_strdup_printf("%s\n%s\n", s->mpi.job, d);
    write_rank_marker(s, "", text);
    g_free(text);
    g_free(d);
}

/* The lines of rank r's marker (".rank-R" and suffix) when this launch wrote it (its first
 * line is the launch's id), else NULL: the marker of an earlier launch is not looked at, and
 * without the launch's id (a launcher that gives none) no marker can be told from an earlier
 * one's. Free with g_strfreev. */
static char **launch_marker(const struct sweep *s, int r, const char *suffix)
{
    char *path = rank_marker_path(s, r, suffix), *text = NULL;
    char **lines = NULL;
    if (s->mpi.job && g_file_get_contents(path, &text, NULL, NULL)) {
        lines = g_strsplit(text, "\n", 3);
        if (!lines[0] || strcmp(lines[0], s->mpi.job)) {
            g_strfreev(lines);
            lines = NULL;
        }
    }
    g_free(text);
    g_free(path);
    return lines;
}

/* The first rank above 0 with no start marker of this launch in the folder, or 0. */
static int rank_unseen(const struct sweep *s)
{
    for (int r = 1; r < s->mpi.size; r++) {
        char **lines = launch_marker(s, r, "-started");
        g_strfreev(lines);
        if (!lines)
            return r;
    }
    return 0;
}

/* The first rank of this launch that is done with another grid than this one's, or 0. */
static int rank_with_other_grid(const struct sweep *s, const char *mine)
{
    for (int r = 1; r < s->mpi.size; r++) {
        char **lines = launch_marker(s, r, "");
        gboolean other = lines && lines[1] && strcmp(lines[1], mine);
        g_strfreev(lines);
        if (other)
            return r;
    }
    return 0;
}

enum sweep_result sweep_wait_others(struct sweep *s)
{
    struct sweep_progress *g = &s->prog;
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, &old);
    enum sweep_result r = SWEEP_FINISHED;
    char *mine = sweep_digest(s);
    /* the other ranks started with this one: by the time its own points are done, a rank
     * that shares the folder has long left its start marker */
    double wait = s->rank_wait_s > 0 ? s->rank_wait_s : SWEEP_RANK_WAIT_S;
    gint64 give_up = g_get_monotonic_time() + (gint64)(wait * G_USEC_PER_SEC);
    for (;;) {
        guint waiting = 0;
        for (guint i = 0; i < s->points->len; i++) {
            struct sweep_point *p = g_ptr_array_index(s->points, i);
            if (mpi_split_owns(&s->mpi, p->index) || p->state != SP_PENDING)
                continue;
            if (sweep_point_load_results(s, p)) {
                p->state = SP_DONE;
                g->done++;
            } else if (load_failed_marker(s, p)) {
                p->state = SP_FAILED;
                g->done++;
                g->failed++;
            } else {
                waiting++;
            }
        }
        if (!waiting)
            break;
        /* a point whose results show another configuration may be an earlier launch's, which
         * its rank is about to replace; once that rank is done, the grids differ */
        int other = rank_with_other_grid(s, mine);
        if (other) {
            s->rank_problem = g_strdup_printf(
                "MPI rank %d built another grid from rank 0's: its points' results show other settings. Each rank "
                "reads %s, its --set values and the files it names on its own machine: make them the same on "
                "every machine", other, s->scenario);
            r = SWEEP_RANKS_DIFFER;
            break;
        }
        int unseen = s->mpi.job && g_get_monotonic_time() > give_up ? rank_unseen(s) : 0;
        if (unseen) {
            s->rank_problem = g_strdup_printf(
                "MPI rank %d has left nothing in %s in %.0f s of waiting for its points: the ranks must write "
                "one folder, which every machine mounts (give -o a shared path), or rank %d did not start "
                "(--rank-wait sets how long to wait)", unseen, s->out, wait, unseen);
            r = SWEEP_RANK_UNSEEN;
            break;
        }
        char what[64];
        g_snprintf(what, sizeof what, "waiting for %u point%s of other ranks", waiting, waiting == 1 ? "" : "s");
        progress_show(s, what);
        struct timespec ts = { 0, 200000000 };
        int sig = sigtimedwait(&set, NULL, &ts);
        if (sig > 0) {
            s->interrupted = sig;
            r = SWEEP_INTERRUPTED;
            break;
        }
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    g_free(mine);
    return r;
}
