/* What `rocesim sweep` and `rocesim tune` share on the command line: their options, the
 * setup of the grid from them, the terminal notes, and drawing a figure. */
#ifndef ROCESIM_CLI_SWEEP_CLI_H
#define ROCESIM_CLI_SWEEP_CLI_H
#include <glib.h>
#include "tune/sweep.h"

struct sweep_opts {
    char **vary, **sets, **constraints;
    char *seed, *out, *objective, *rank;
    gint jobs, budget, replicates;
    char *workers;            /* --workers N as given: threads per point (results identical) */
    double constraint_share;
    gboolean quiet, no_plots, minimize, maximize;
};

void sweep_opts_clear(struct sweep_opts *o);
extern const char *const sweep_vary_help;
/* Parses the command line and builds the sweep. Returns 0, or the exit status (2) after
 * printing the error. */
int sweep_cli_setup(const char *cmd, const char *summary, int argc, char **argv, GOptionEntry *extra,
                    struct sweep_opts *o, struct sweep_section *sec, struct sweep *s);
guint sweep_count_state(const struct sweep *s, enum sweep_state st);
void sweep_describe_grid(const struct sweep *s, GString *g);
void sweep_note_invalid(const struct sweep *s);
void sweep_list_failures(const struct sweep *s);
/* Writes plots/NAME.gp and NAME.dat and runs gnuplot; a figure that cannot be drawn is a
 * note, never a failure. REPLAY_BODY: the script draws BODY again for the SVG. */
void sweep_draw(const struct sweep *s, const char *name, GString *gp, GString *dat, gboolean replay_body,
                const char *body);

#endif
