/* Writing CSV text: a field quoted when it must be (RFC 4180: a comma, quote or line end
 * inside; quotes doubled), as results_io/read.c reads it back. */
#ifndef ROCESIM_RESULTS_CSV_H
#define ROCESIM_RESULTS_CSV_H
#include <glib.h>

void results_csv_quote(GString *g, const char *text);

#endif
