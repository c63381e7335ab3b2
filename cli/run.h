/* Running one scenario; shared by `run`, `sweep` and `tune`. */
#ifndef ROCESIM_RUN_H
#define ROCESIM_RUN_H
#include <glib.h>
#include "models/ideal.h"
#include "models/topology.h"
#include "models/scenario.h"

#define RUN_MAX_WORKERS 256

struct run_options {
    const char *scenario;
    char *out_dir;            /* NULL: the scenario's [output] dir */
    char **sets;              /* "section.key=value" overrides */
    char *seed;
    gboolean quiet;
    gboolean no_plots;
    char *max_memory;         /* --max-memory SIZE: refuse scenarios estimated to need more */
    char *workers_s;          /* --workers N as given */
    uint32_t workers;         /* threads that run the simulation (0 or 1: one) */
    gboolean workers_auto;    /* --workers auto: the CPUs this process may use, as the fabric allows */
    uint32_t rank, ranks;     /* started by mpirun: this process's rank of `ranks` (else 0, 0) */
};

/* Returns the process exit status (0 ok, 1 failure writing, 2 bad input, 3 deadlock). */
int run_scenario(const struct run_options *o);
void run_options_clear(struct run_options *o);
/* --max-memory TEXT (NULL: the machine's memory) into the memory limit; FALSE with *err. */
gboolean run_set_max_memory(const char *text, GError **err);
#endif
