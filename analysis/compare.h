/* Two results folders side by side, from the simulator, a replay or a capture (the method is
 * described at the top of analysis/compare.c). The command line is cli/cmd_compare.c. */
#ifndef ROCESIM_COMPARE_H
#define ROCESIM_COMPARE_H

enum compare_outcome { COMPARE_SAME = 0, COMPARE_DIFFERENT, COMPARE_BAD_INPUT };

struct compare_opts {
    const char *tolerance;   /* "0.05" or "5%"; NULL: 5% */
    char **floors;           /* "KIND=VALUE" or "METRIC=VALUE", NULL-terminated, or NULL */
    char **more_a, **more_b; /* replicates of each side, or NULL */
    const char *output;      /* folder for compare.html/json and figures; NULL: DIR_B/compare-vs-A */
};

/* Prints the table and the verdict, writes the files. Bad input is reported on stderr. */
enum compare_outcome compare_folders(const char *a, const char *b, const struct compare_opts *o);

#endif
