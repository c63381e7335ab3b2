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

gboolean results_begin(struct results_dir *r, const char *final_dir, GError **err);
/* Opens DIR/name for writing with a large buffer; NULL and *err on failure. */
FILE *results_open(const struct results_dir *r, const char *name, GError **err);
gboolean results_close(FILE *f, const char *name, GError **err);
/* Moves the finished folder into place (replacing an older one). */
gboolean results_commit(struct results_dir *r, GError **err);
void results_abort(struct results_dir *r);
/* Removes a directory tree (no symlink following). */
void rmtree(const char *path);

#endif
