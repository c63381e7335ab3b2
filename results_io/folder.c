#include "results_io/folder.h"
#include "results_io/async_file.h"
#include "results_io/gz.h"
#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

void rmtree(const char *path)
{
    GDir *d = g_dir_open(path, 0, NULL);
    if (d) {
        const char *name;
        while ((name = g_dir_read_name(d))) {
            char *p = g_build_filename(path, name, NULL);
            if (g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
                rmtree(p);
            else
                g_unlink(p);
            g_free(p);
        }
        g_dir_close(d);
    }
    g_rmdir(path);
}

/* A real, empty folder: replacing it loses nothing (mktemp -d, a mount point's parent). */
static gboolean folder_is_empty(const char *dir)
{
    if (g_file_test(dir, G_FILE_TEST_IS_SYMLINK))
        return FALSE;
    GDir *d = g_dir_open(dir, 0, NULL);
    if (!d)
        return FALSE;
    gboolean empty = g_dir_read_name(d) == NULL;
    g_dir_close(d);
    return empty;
}

gboolean results_is_ours(const char *dir)
{
    char *marker = g_build_filename(dir, RESULTS_MARKER, NULL);
    gboolean ours = g_file_test(dir, G_FILE_TEST_IS_DIR) && !g_file_test(dir, G_FILE_TEST_IS_SYMLINK) &&
                    g_file_test(marker, G_FILE_TEST_IS_REGULAR) && !g_file_test(marker, G_FILE_TEST_IS_SYMLINK);
    g_free(marker);
    return ours;
}

gboolean results_check_target(const char *final_dir, GError **err)
{
    if (!*final_dir) {
        g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_INVAL, "the results folder name is empty");
        return FALSE;
    }
    if (!g_file_test(final_dir, G_FILE_TEST_EXISTS) && !g_file_test(final_dir, G_FILE_TEST_IS_SYMLINK))
        return TRUE;
    if (results_is_ours(final_dir) || folder_is_empty(final_dir))
        return TRUE;
    const char *what = g_file_test(final_dir, G_FILE_TEST_IS_SYMLINK)  ? "a symbolic link"
                       : g_file_test(final_dir, G_FILE_TEST_IS_DIR) ? "a folder rocesim did not write (no " RESULTS_MARKER ")"
                                                                    : "not a folder";
    g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_EXIST,
                "%s exists and is %s: not replacing it; choose another output folder or remove it", final_dir,
                what);
    return FALSE;
}

gboolean results_begin(struct results_dir *r, const char *final_dir, GError **err)
{
    if (!results_check_target(final_dir, err))
        return FALSE;
    r->final = g_strdup(final_dir);
    /* "dir/" would put the temporary folder inside dir: name the folder itself */
    for (size_t l = strlen(r->final); l > 1 && r->final[l - 1] == '/'; l--)
        r->final[l - 1] = 0;
    char *parent = g_path_get_dirname(r->final);
    if (g_mkdir_with_parents(parent, 0755) != 0) {
        g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot create %s: %s", parent,
                    g_strerror(errno));
        g_free(parent);
        g_free(r->final);
        r->final = NULL;
        return FALSE;
    }
    g_free(parent);
    char *tmpl = g_strdup_printf("%s.tmp-XXXXXX", r->final);
    if (!g_mkdtemp(tmpl)) {
        g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot create a folder next to %s: %s",
                    r->final, g_strerror(errno));
        g_free(tmpl);
        g_free(r->final);
        r->final = NULL;
        return FALSE;
    }
    g_chmod(tmpl, 0755);
    r->tmp = tmpl;
    char *marker = g_build_filename(tmpl, RESULTS_MARKER, NULL);
    gboolean ok = g_file_set_contents(marker, "A results folder written by rocesim: rocesim run -o may replace it.\n",
                                      -1, err);
    g_free(marker);
    if (!ok)
        results_abort(r);
    return ok;
}

/* A plain file's first 8 MB are written by the thread that formats its rows, the rest by a
 * writer thread (results_io/async_file.c). The writer thread saves the kernel's copy into the
 * page cache, but what it writes was copied into its buffers on the other CPU, and every line
 * of that crosses between the CPUs twice: for files of a few MB that cost more than it saved.
 * Output of the bench incast (four time series of 0.5-0.9 MB): 9.9 ms with the thread from
 * the first 64 KB, 8.0 ms without (7.1 % of its wall time instead of 9.0 %); with every port
 * sampled every 1 us (time series of 0.7-6 MB): 23.5 and 22.0 ms (8 interleaved runs each,
 * non-PGO, 2026-12-05). A 969 MB transfers.csv (4096-host AllToAll) took 10.3 % of its run's
 * wall time without the thread and 6.6 % with it (2026-12-04). */
#define PLAIN_SYNC_BYTES (8u << 20)

FILE *results_open(const struct results_dir *r, const char *name, GError **err)
{
    char *p = g_build_filename(r->tmp, name, NULL);
    FILE *f = fopen(p, "w");
    if (!f) {
        g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot write %s: %s", p, g_strerror(errno));
        g_free(p);
        return NULL;
    }
    g_free(p);
    setvbuf(f, NULL, _IOFBF, 1 << 20); /* buffered, if no writer thread can start */
    return async_file(f, PLAIN_SYNC_BYTES);
}

FILE *results_open_gz(const struct results_dir *r, const char *name, GError **err)
{
    char *p = g_build_filename(r->tmp, name, NULL);
    FILE *f = gz_fopen(p, "w");
    if (!f)
        g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot write %s: %s", p, g_strerror(errno));
    else
        f = async_file(f, 0); /* compressed by the writer thread, from the first piece */
    g_free(p);
    return f;
}

gboolean results_close(FILE *f, const char *name, GError **err)
{
    if (!f)
        return TRUE;
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_IO, "writing %s failed (disk full?)", name);
        return FALSE;
    }
    return TRUE;
}

gboolean results_commit(struct results_dir *r, GError **err)
{
    char *old = NULL;
    if (!results_check_target(r->final, err)) /* it may have appeared during the run */
        return FALSE;
    if (g_file_test(r->final, G_FILE_TEST_EXISTS)) {
        old = g_strdup_printf("%s.old-XXXXXX", r->final);
        if (!g_mkdtemp(old) || g_rmdir(old) != 0 || g_rename(r->final, old) != 0) {
            g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot replace %s: %s", r->final,
                        g_strerror(errno));
            g_free(old);
            return FALSE;
        }
    }
    if (g_rename(r->tmp, r->final) != 0) {
        g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot move results into %s: %s",
                    r->final, g_strerror(errno));
        if (old)
            g_rename(old, r->final);
        g_free(old);
        return FALSE;
    }
    if (old) {
        rmtree(old);
        g_free(old);
    }
    g_free(r->tmp);
    r->tmp = NULL;
    g_free(r->final);
    r->final = NULL;
    return TRUE;
}

void results_abort(struct results_dir *r)
{
    if (r->tmp)
        rmtree(r->tmp);
    g_free(r->tmp);
    g_free(r->final);
    r->tmp = r->final = NULL;
}
