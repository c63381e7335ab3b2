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
/* Closes the document's object and returns its text (summary_write's); consumes b. */
char *summary_text(JsonBuilder *b);
/* A document's text put together from parts, as json-glib prints the whole (json-glib prints
 * an object "{\n  member,\n  member\n}", each level two spaces deeper): summary_text's texts
 * and values written with results_io/json_text.h. */
/* The document `text` (summary_text's; consumed), open for more members. */
GString *summary_text_open(char *text);
/* Starts member `name`: its value follows, written at level 1 (json_text_init(.., 1)). */
void summary_text_member(GString *doc, const char *name);
/* Adds every member of the document `text` (summary_text's; consumed). */
void summary_text_members(GString *doc, char *text);
/* Writes DIR/summary.json: the open document `doc` with one more member last, `name`, whose
 * value is the object `member` holds (begun, not ended; consumed), and closed (doc holds the
 * whole document then, written or not: the caller frees it).
 * A writer whose last member tells what the rest cost to write (a run's engine.output_s)
 * formats the rest first. */
gboolean summary_write_with(const char *dir, GString *doc, const char *name, JsonBuilder *member,
                            GError **err);

#endif
