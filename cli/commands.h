/* Subcommands of `rocesim`, one function each, dispatched from sim/main.c.
 * Each takes the arguments after the subcommand name (argv[0] is the subcommand) and
 * returns the process exit status: 0 success, 1 a negative verdict (compare out of
 * tolerance), 2 bad input, 3 a run stopped by a detected deadlock. */
#ifndef ROCESIM_COMMANDS_H
#define ROCESIM_COMMANDS_H

int cmd_run(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_schedule(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_pcap_stats(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_replay(int argc, char **argv);

#endif
