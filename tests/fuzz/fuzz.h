/* Shared scaffolding of the libFuzzer harnesses (see tests/fuzz/README in the top README,
 * "Fuzzing"). Each harness defines LLVMFuzzerTestOneInput; the parsers under test read
 * files, so inputs are written to a private folder that is removed at exit. */
#ifndef ROCESIM_FUZZ_H
#define ROCESIM_FUZZ_H
#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "results_io/folder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A GLib critical (a failed g_return_if_fail, a JSON builder closed twice) is a bug the
 * harness reports as a crash, not a line on stderr. */
__attribute__((constructor)) static void fuzz_fatal_criticals(void)
{
    g_log_set_always_fatal(G_LOG_LEVEL_CRITICAL | G_LOG_FATAL_MASK);
}

static char *fuzz_dir_path;

static void fuzz_dir_remove(void)
{
    if (fuzz_dir_path)
        rmtree(fuzz_dir_path);
}

/* The harness's private folder (created on first use). */
static inline const char *fuzz_dir(void)
{
    if (!fuzz_dir_path) {
        fuzz_dir_path = g_dir_make_tmp("rocesim-fuzz-XXXXXX", NULL);
        if (!fuzz_dir_path)
            abort();
        atexit(fuzz_dir_remove);
        /* no gnuplot: figures are scripted, never drawn (a process per input is too slow) */
        setenv("PATH", "/nonexistent", 1);
    }
    return fuzz_dir_path;
}

/* Writes DATA to fuzz_dir()/NAME; returns the path (g_free). */
static inline char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
    char *p = g_build_filename(fuzz_dir(), name, NULL);
    if (!g_file_set_contents(p, (const char *)data, (gssize)size, NULL))
        abort();
    return p;
}

/* DATA as a NUL-terminated string (g_free). */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
    char *s = g_malloc(size + 1);
    memcpy(s, data, size);
    s[size] = 0;
    return s;
}

/* Splits DATA at lines "----- NAME" into files of fuzz_dir()/SUB (recreated): the way one
 * input carries a scenario and the files it names, or a whole results folder. Returns the
 * folder (g_free). */
static inline char *fuzz_tree(const char *sub, const uint8_t *data, size_t size)
{
    char *dir = g_build_filename(fuzz_dir(), sub, NULL);
    rmtree(dir);
    g_mkdir_with_parents(dir, 0755);
    char *text = fuzz_string(data, size);
    char **parts = g_strsplit(text, "\n----- ", -1);
    for (int i = 0; parts[i]; i++) {
        const char *body = parts[i], *name = "main";
        char *nl = strchr(parts[i], '\n');
        if (i > 0) {
            name = parts[i];
            body = nl ? nl + 1 : "";
            if (nl)
                *nl = 0;
        }
        /* one plain path component, so nothing is written outside the folder */
        if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
            continue;
        char *p = g_build_filename(dir, name, NULL);
        g_file_set_contents(p, body, -1, NULL);
        g_free(p);
    }
    g_strfreev(parts);
    g_free(text);
    return dir;
}

#endif
