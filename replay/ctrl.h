/* The replay's control plane: who is who, exchanging small blobs, clock offsets, abort.
 *
 * The data path never goes through it. One implementation (ctrl_tcp.c) is a star of TCP
 * connections to rank 0, with rank and size taken from the MPI launcher's environment
 * (sim/mpi_split.h), so `mpirun` starts the ranks but rocesim does not link libmpi (see
 * README "Replay"). Rank 0 is the only writer of the results folder.
 *
 * Every call that blocks is bounded by the time given to ctrl_connect, counted from the
 * call's start: a rank that never shows up, or dies, is an error naming it, never a hang. */
#ifndef ROCESIM_REPLAY_CTRL_H
#define ROCESIM_REPLAY_CTRL_H
#include <glib.h>
#include <poll.h>
#include <stdint.h>

#define CTRL_ERROR (ctrl_error_quark())
GQuark ctrl_error_quark(void);
enum { CTRL_ERROR_IO = 1, CTRL_ERROR_PEER_LOST, CTRL_ERROR_TIMEOUT, CTRL_ERROR_ABORTED };

struct ctrl;

/* Rank 0 listens on listen_addr:port (NULL = any), the others connect to addr0:port, retrying
 * for up to bound_ns; every later call may take as long. */
struct ctrl *ctrl_connect(int rank, int size, const char *addr0, uint16_t port,
                          int64_t bound_ns, GError **err);
void ctrl_free(struct ctrl *c);
int ctrl_rank(const struct ctrl *c);
int ctrl_size(const struct ctrl *c);

/* Every rank contributes `len` bytes; on return out[r] holds rank r's (g_bytes_unref each, then
 * g_free(out)). */
gboolean ctrl_allgather(struct ctrl *c, const void *mine, size_t len, GBytes ***out, GError **err);
gboolean ctrl_barrier(struct ctrl *c, GError **err);

/* Clock offsets from minimum-RTT ping-pong: rank 0 pings each rank `samples` times; on rank 0,
 * off[r] = (rank r's clock) - (rank 0's clock) at the best sample and half[r] its half RTT
 * (the uncertainty), at[r] rank 0's time of that sample. Other ranks only answer (off, half
 * and at are untouched). */
gboolean ctrl_clock_offsets(struct ctrl *c, int samples, int64_t *off, int64_t *half,
                            int64_t *at, GError **err);

/* ---- during the run ---- */

/* What arrived on the control plane. */
enum ctrl_event { CTRL_NONE = 0, CTRL_ABORT, CTRL_DONE, CTRL_FIN, CTRL_LOST };
struct ctrl_msg {
    enum ctrl_event ev;
    int from;           /* rank that sent it (CTRL_LOST: the rank that went away) */
    GBytes *data;       /* ABORT: the reason (text); DONE: the rank's report */
};
/* The fds to poll (at most ctrl_size); returns how many were written. */
int ctrl_pollfds(const struct ctrl *c, struct pollfd *fds, int max);
/* Reads what is ready without blocking; FALSE when nothing is. Fill msg, caller unrefs data. */
gboolean ctrl_next(struct ctrl *c, struct ctrl_msg *msg);
/* Rank 0: tell everyone to stop (reason in text). Others: ask rank 0 to. */
void ctrl_send_abort(struct ctrl *c, const char *reason);
/* A rank's final report to rank 0 (rank 0's own is not sent). */
gboolean ctrl_send_done(struct ctrl *c, const void *data, size_t len, GError **err);
/* Rank 0: everyone may exit. */
void ctrl_send_fin(struct ctrl *c);

int64_t ctrl_now_ns(void);

#endif
