#include "tune/mpi_split.h"
#include <errno.h>
#include <stdlib.h>

static gboolean env_int(const char *name, int *out, GError **err)
{
    const char *v = g_getenv(name);
    if (!v)
        return FALSE;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (!*v || *end || errno || x < 0 || x > 1000000) {
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "environment %s='%s': expected a whole number from 0 to 1000000", name, v);
        return FALSE;
    }
    *out = (int)x;
    return TRUE;
}

gboolean mpi_split_detect(struct mpi_split *m, GError **err)
{
    static const struct {
        const char *rank, *size, *source;
    } vars[] = {
        { "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD" },
        { "PMI_RANK", "PMI_SIZE", "PMI" },
    };
    m->rank = 0;
    m->size = 1;
    m->source = NULL;
    m->job = NULL;
    m->local_size = 1;
    m->local_rank = 0;
    for (gsize i = 0; i < G_N_ELEMENTS(vars); i++) {
        if (!g_getenv(vars[i].rank) && !g_getenv(vars[i].size))
            continue;
        GError *e = NULL;
        int rank = -1, size = -1;
        gboolean have_rank = env_int(vars[i].rank, &rank, &e);
        if (!e && !have_rank)
            g_set_error(&e, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "environment has %s but not %s",
                        vars[i].size, vars[i].rank);
        gboolean have_size = !e && env_int(vars[i].size, &size, &e);
        if (!e && !have_size)
            g_set_error(&e, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "environment has %s but not %s",
                        vars[i].rank, vars[i].size);
        if (!e && (size < 1 || rank >= size))
            g_set_error(&e, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "environment %s=%d and %s=%d: expected a rank below the size", vars[i].rank, rank,
                        vars[i].size, size);
        if (e) {
            g_propagate_error(err, e);
            return FALSE;
        }
        m->rank = rank;
        m->size = size;
        m->source = vars[i].source;
        break;
    }
    if (!m->source)
        return TRUE;
    /* The launch's identity: Open MPI/PMIx namespace and the mpirun contact URI, the
     * Hydra key-value space, or the Slurm job step. */
    static const char *const ids[] = { "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "OMPI_MCA_orte_hnp_uri",
                                       "PMI_KVSNAME", "SLURM_JOB_ID", "SLURM_STEP_ID" };
    GString *job = g_string_new(NULL);
    for (gsize i = 0; i < G_N_ELEMENTS(ids); i++) {
        const char *v = g_getenv(ids[i]);
        if (v && *v)
            g_string_append_printf(job, "%s%s=%s", job->len ? " " : "", ids[i], v);
    }
    if (job->len)
        m->job = g_string_free(job, FALSE);
    else
        g_string_free(job, TRUE);
    int ls;
    GError *ignore = NULL;
    /* malformed local values are ignored: they only tune how many points run at once */
    gboolean have_ls = env_int("OMPI_COMM_WORLD_LOCAL_SIZE", &ls, &ignore) && ls > 0;
    g_clear_error(&ignore);
    if (!have_ls)
        have_ls = env_int("MPI_LOCALNRANKS", &ls, &ignore) && ls > 0;
    g_clear_error(&ignore);
    if (have_ls)
        m->local_size = ls;
    int lr;
    gboolean have_lr = env_int("OMPI_COMM_WORLD_LOCAL_RANK", &lr, &ignore);
    g_clear_error(&ignore);
    if (!have_lr)
        have_lr = env_int("MPI_LOCALRANKID", &lr, &ignore);
    g_clear_error(&ignore);
    if (have_lr && lr >= 0 && lr < m->local_size)
        m->local_rank = lr;
    return TRUE;
}

void mpi_split_clear(struct mpi_split *m)
{
    g_free(m->job);
    m->job = NULL;
}
