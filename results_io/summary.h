/* summary.json: the pieces every writer shares (run, replay, pcap-stats): the version, the
 * scenario, the warnings, and the file itself. Layout: docs/results-format.md. */
#ifndef ROCESIM_RESULTS_SUMMARY_H
#define ROCESIM_RESULTS_SUMMARY_H
#include <json-glib/json-glib.h>
#include <glib.h>

/* A new document with its object open and "rocesim_version" set. */
JsonBuilder *summary_begin(void);
/* "scenario": every section of the expanded key file as an object of strings. */
void summary_scenario(JsonBuilder *b, GKeyFile *expanded);
/* "warnings": the texts in order. */
void summary_warnings(JsonBuilder *b, const GPtrArray *warnings);
/* Closes the document's object and writes it as DIR/summary.json; consumes b. */
gboolean summary_write(const char *dir, JsonBuilder *b, GError **err);

#endif
