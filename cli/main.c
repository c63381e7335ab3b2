/* rocesim: packet-level simulator of RoCEv2 fabrics. Dispatches to the subcommands. */
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include "cli/commands.h"
#include "sim/version.h"

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
};

static const struct command commands[] = {
    { "run", cmd_run, "simulate a scenario and write a results folder" },
    { "check", cmd_check, "validate a scenario and print it with every default and derived value" },
    { "sweep", cmd_sweep, "run a scenario over a grid of settings in parallel and tabulate the metrics" },
    { "tune", cmd_tune, "search a grid of settings for the best metric under constraints" },
    { "schedule", cmd_schedule, "write the transfer schedule (DAG) of a scenario's workloads" },
    { "plot", cmd_plot, "draw the plots and report.html of a results folder" },
    { "compare", cmd_compare, "compare two results folders side by side (exit 1 beyond tolerance)" },
    { "replay", cmd_replay, "run a schedule on lab hosts (mpirun, verbs or udp) into a results folder" },
    { "pcap-stats", cmd_pcap_stats, "turn RoCEv2/PFC packet captures into a results folder" },
};

static void usage(FILE *f)
{
    fprintf(f, "usage: rocesim COMMAND [OPTIONS] ...\n\n"
               "rocesim simulates lossless RoCEv2 fabrics packet by packet: switches with shared\n"
               "buffers, ECN and PFC; NICs with the RC transport and DCQCN; collective traffic.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\n`rocesim COMMAND --help` describes each command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("rocesim %s\n", ROCESIM_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) {
            /* `rocesim run --help` then reads "Usage: rocesim run [OPTION…] SCENARIO" */
            char *prg = g_strdup_printf("rocesim %s", commands[i].name);
            g_set_prgname(prg);
            g_free(prg);
            return commands[i].fn(argc - 1, argv + 1);
        }
    fprintf(stderr, "rocesim: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
