#include "sim/results.h"
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

gboolean results_begin(struct results_dir *r, const char *final_dir, GError **err)
{
    r->final = g_strdup(final_dir);
    char *parent = g_path_get_dirname(final_dir);
    if (g_mkdir_with_parents(parent, 0755) != 0) {
        g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot create %s: %s", parent,
                    g_strerror(errno));
        g_free(parent);
        g_free(r->final);
        r->final = NULL;
        return FALSE;
    }
    g_free(parent);
    char *tmpl = g_strdup_printf("%s.tmp-XXXXXX", final_dir);
    if (!g_mkdtemp(tmpl)) {
        g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot create a folder next to %s: %s",
                    final_dir, g_strerror(errno));
        g_free(tmpl);
        g_free(r->final);
        r->final = NULL;
        return FALSE;
    }
    g_chmod(tmpl, 0755);
    r->tmp = tmpl;
    return TRUE;
}

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
    setvbuf(f, NULL, _IOFBF, 1 << 20);
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
