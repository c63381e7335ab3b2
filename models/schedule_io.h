/* The schedule file: the transfer DAG as text, read by the simulator and by replay.
 *
 *   # rocesim-schedule v1
 *   # job <index> <name> <op> <algorithm> <ranks>
 *   # coll <index> <job> <iteration> <bytes> <first> <count>
 *   # id src dst bytes prio qp delay_ps deps job coll channel
 *   job 0 ar allreduce ring 8
 *   coll 0 0 0 1048576 1 130
 *   0 3 3 0 3 0 0 - 0 - 0
 *   1 3 3 0 3 0 2000000 0 0 0 0
 *   2 3 5 131072 3 0 0 1 0 0 0
 *
 * The first line is the version line, exactly. Other lines starting with '#' and blank lines
 * are ignored; fields are separated by spaces or tabs. A transfer row has the 11 fields of the
 * column line: ids count 0, 1, 2, ... in row order; deps is a comma list of ids or '-'; job and
 * coll are indices into the job and coll lines or '-' (none); delay_ps is picoseconds after the
 * last dependency finishes, or the absolute start of a root (see models/schedule.h). Job and
 * coll lines carry their own index (0, 1, ... in order) and may appear anywhere; names are
 * percent-encoded (space -> %20, '%' -> %25; an empty string is '-', a literal '-' is %2D).
 * Dependencies may point forward; the reader refuses cycles instead.
 *
 * Every number is an unsigned decimal integer. Errors name the file and line.
 */
#ifndef ROCESIM_SCHEDULE_IO_H
#define ROCESIM_SCHEDULE_IO_H
#include <glib.h>
#include <stdint.h>
#include "models/schedule.h"

#define SCHEDULE_FILE_VERSION_LINE "# rocesim-schedule v1"

#define SCHEDULE_IO_ERROR (schedule_io_error_quark())
GQuark schedule_io_error_quark(void);
enum {
    SCHEDULE_IO_ERROR_IO = 1,   /* cannot open, read or write the file */
    SCHEDULE_IO_ERROR_PARSE,    /* a line is malformed */
    SCHEDULE_IO_ERROR_INVALID,  /* well formed, but not a valid schedule */
};

/* Writes s to path atomically (a temporary file in the same folder, then rename). */
gboolean schedule_write(const struct schedule *s, const char *path, GError **err);

/* Reads and validates a schedule file. Hosts must be < nhosts (0: not checked). */
struct schedule *schedule_read(const char *path, uint32_t nhosts, GError **err);

/* Checks what the simulator and replay rely on:
 *   - src and dst are hosts (< nhosts, unless nhosts is 0); a transfer with bytes > 0 goes
 *     between two different hosts; prio is 0..7;
 *   - every dependency names an existing transfer, at most once per transfer, and the
 *     dependencies form no cycle (a self-dependency included);
 *   - job and coll are SCHEDULE_NO_JOB or existing indices; every coll's [first, first+count)
 *     is inside the schedule, non-empty, and holds exactly the transfers whose coll is that
 *     coll, all of the coll's job; every job has a name and an op.
 * Messages name the transfer ("transfer 12: ..."). */
gboolean schedule_validate(const struct schedule *s, uint32_t nhosts, GError **err);

#endif
