/* The schedule file: the transfer DAG as text, read by the simulator and by replay.
 *
 *   # rocesim-schedule v2
 *   # meta hosts|mtu|host_rate_bps|dscp|topology <value>
 *   # qp <index> <src> <dst> <prio> <sport>
 *   # job <index> <name> <op> <algorithm> <ranks>
 *   # coll <index> <job> <iteration> <bytes> <first> <count>
 *   # id src dst bytes prio qp delay_ps deps job coll channel
 *   meta hosts 8
 *   meta mtu 4096
 *   meta host_rate_bps 100000000000
 *   meta dscp 0,8,16,24,32,40,48,56
 *   meta topology sha256:3f2a...
 *   qp 0 3 5 3 49668
 *   job 0 ar allreduce ring 8
 *   coll 0 0 0 1048576 1 130
 *   0 3 3 0 3 - 0 - 0 - 0
 *   1 3 3 0 3 - 2000000 0 0 0 0
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
 * v2 adds:
 *   - meta lines (optional; all five when written): hosts of the fabric, mtu (RoCE payload
 *     bytes per packet), host_rate_bps, dscp (the DSCP of priorities 0..7; rocesim's scenarios
 *     have no DSCP key, so the writer uses DSCP = 8 x priority, which the mlx5 default
 *     DSCP->priority map (priority = DSCP >> 3) sends back to the same priority), topology
 *     (a digest of the fabric's ports, to tell a replay's --scenario from another fabric);
 *   - qp lines, before the transfers that use them: the QP's ends, its one priority and the
 *     UDP source port the simulator gives it (models/schedule.h, struct sched_qp). A transfer's
 *     qp column is the qp line's index, or '-' for a marker (bytes 0). Every transfer of a QP
 *     has the QP's priority; the validator refuses a schedule where they differ.
 * v1 files (qp column = a free tag grouping transfers of one (src, dst) pair; no meta, no qp
 * lines) are still read; their QPs are derived as the simulator derives them.
 *
 * Segmentation rule. A transfer is one message in the simulator. On a NIC (and in the UDP
 * replay transport) it is posted as ceil(bytes / max_msg) RDMA WRITE messages of max_msg
 * bytes, the last one shorter, where max_msg = min(port max_msg_sz, SCHEDULE_MAX_MESSAGE):
 * the RETH DMA length is a 32-bit field, so no message can exceed 2^31 bytes (mlx5's
 * max_msg_sz). Only the last message is a WRITE WITH IMMEDIATE carrying the transfer id and
 * only it is signalled. Each message is split into packets of mtu payload bytes.
 *
 * Every number is an unsigned decimal integer. Errors name the file and line.
 */
#ifndef ROCESIM_SCHEDULE_IO_H
#define ROCESIM_SCHEDULE_IO_H
#include <glib.h>
#include <stdint.h>
#include "models/schedule.h"

#define SCHEDULE_FILE_VERSION_LINE    "# rocesim-schedule v2"
#define SCHEDULE_FILE_VERSION_LINE_V1 "# rocesim-schedule v1"
/* The largest message of the segmentation rule above (mlx5 max_msg_sz; RETH length is 32 bits). */
#define SCHEDULE_MAX_MESSAGE (1ull << 31)

#define SCHEDULE_IO_ERROR (schedule_io_error_quark())
GQuark schedule_io_error_quark(void);
enum {
    SCHEDULE_IO_ERROR_IO = 1,   /* cannot open, read or write the file */
    SCHEDULE_IO_ERROR_PARSE,    /* a line is malformed */
    SCHEDULE_IO_ERROR_INVALID,  /* well formed, but not a valid schedule */
};

/* Writes s to path atomically (a temporary file in the same folder, then rename), as v2 with
 * the QPs derived from the transfers (s->qps is not consulted) and s->meta if present. */
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
 *     coll, all of the coll's job; every job has a name and an op;
 *   - every transfer of one QP (same src, dst and qp tag) has the same priority.
 * Messages name the transfer ("transfer 12: ..."). */
gboolean schedule_validate(const struct schedule *s, uint32_t nhosts, GError **err);

#endif
