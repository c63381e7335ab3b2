/* A results folder written atomically: everything goes to a temporary sibling folder that
 * is renamed into place only when complete, so a failed run leaves nothing half-written. */
#ifndef ROCESIM_RESULTS_H
#define ROCESIM_RESULTS_H
#include <glib.h>
#include <stdio.h>

struct results_dir {
    char *final;
    char *tmp;
};

/* Every folder results_begin writes holds this file: only such a folder is ever replaced. */
#define RESULTS_MARKER ".rocesim-results"

/* TRUE when DIR is a real folder (not a symbolic link) holding RESULTS_MARKER. */
gboolean results_is_ours(const char *dir);
/* TRUE when FINAL_DIR may be written: it does not exist, or results_is_ours(). Otherwise a
 * G_FILE_ERROR_EXIST error saying what is there. */
gboolean results_check_target(const char *final_dir, GError **err);
/* Refuses a FINAL_DIR that results_check_target refuses. */
gboolean results_begin(struct results_dir *r, const char *final_dir, GError **err);
/* Opens DIR/name for writing with a large buffer; NULL and *err on failure. */
FILE *results_open(const struct results_dir *r, const char *name, GError **err);
/* The same for a gzip file (name ends in .gz): what is written is compressed. */
FILE *results_open_gz(const struct results_dir *r, const char *name, GError **err);
gboolean results_close(FILE *f, const char *name, GError **err);
/* Moves the finished folder into place (replacing an older results folder, never anything else). */
gboolean results_commit(struct results_dir *r, GError **err);
void results_abort(struct results_dir *r);
/* Removes a directory tree (no symlink following). */
void rmtree(const char *path);

#endif
