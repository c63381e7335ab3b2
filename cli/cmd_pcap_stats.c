/* `rocesim pcap-stats FILE...`: the command line of analysis/pcap_stats.c and its exit
 * status (2 bad argument or capture, 1 writing the results folder failed). */
#include <glib.h>
#include <stdio.h>
#include "analysis/pcap_stats.h"
#include "cli/commands.h"

int cmd_pcap_stats(int argc, char **argv)
{
    char *out = NULL, *interval_arg = NULL, *rate_arg = NULL;
    char **files = NULL;
    gboolean absolute = FALSE;
    GOptionEntry entries[] = {
        { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out,
          "results folder to write (default: FIRST_FILE.stats)", "DIR" },
        { "interval", 0, 0, G_OPTION_ARG_STRING, &interval_arg,
          "rate sampling interval for rates.csv (default 10us)", "TIME" },
        { "link-rate", 0, 0, G_OPTION_ARG_STRING, &rate_arg,
          "link rate that turns PFC quanta into time (default 100Gbps)", "RATE" },
        { "absolute-time", 0, 0, G_OPTION_ARG_NONE, &absolute,
          "keep the capture's timestamps instead of starting at its first packet", NULL },
        { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &files, NULL, "FILE..." },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    GOptionContext *oc = g_option_context_new("- RoCEv2 and PFC statistics from pcap captures");
    g_option_context_add_main_entries(oc, entries, NULL);
    g_option_context_set_description(
        oc, "Writes rates.csv, counters.csv, pfc.csv, transfers.csv, flows.csv and summary.json\n"
            "(docs/results-format.md). Each FILE is one capture point; its basename is the node.\n"
            "Exit status 2 on a bad argument or an unreadable, foreign or corrupt capture,\n"
            "1 when writing the results folder fails (disk full).");
    char **args = g_new0(char *, (gsize)argc + 1);
    for (int i = 0; i < argc; i++)
        args[i] = g_strdup(argv[i]);
    GError *err = NULL;
    enum pcap_stats_outcome r = PCAP_STATS_BAD_INPUT;
    if (!g_option_context_parse_strv(oc, &args, &err)) {
        g_printerr("rocesim pcap-stats: %s\n", err->message);
        g_error_free(err);
    } else if (!files || !files[0]) {
        g_printerr("rocesim pcap-stats: no capture files given (usage: rocesim pcap-stats "
                   "FILE... [-o DIR] [--interval 10us] [--link-rate 100Gbps])\n");
    } else {
        struct pcap_stats_opts o = { files, out, interval_arg, rate_arg, absolute };
        r = pcap_stats_run(&o);
    }
    g_strfreev(files);
    g_free(out);
    g_free(interval_arg);
    g_free(rate_arg);
    g_strfreev(args);
    g_option_context_free(oc);
    return r == PCAP_STATS_OK ? 0 : r == PCAP_STATS_WRITE_FAILED ? 1 : 2;
}
