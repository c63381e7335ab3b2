/* Congestion control behind one small interface, so the NIC does not know which algorithm
 * runs. State is per QP and evolves lazily: the NIC calls advance() before it reads the
 * rate, and the algorithm brings its timers up to `now` in closed form, so no per-QP
 * periodic events exist. */
#ifndef ROCESIM_CC_H
#define ROCESIM_CC_H
#include <stdbool.h>
#include <stdint.h>
#include "sim/scenario.h"
#include "sim/simtime.h"

struct dcqcn_state {
    double rt;                 /* target rate, bit/s */
    double alpha;
    simtime_t alpha_next;      /* next alpha update tick */
    simtime_t dec_next;        /* next decrease check (gated style) */
    simtime_t dec_grid;        /* decrease checks fall on dec_grid + k x period */
    simtime_t inc_next;        /* next increase-timer expiry; NEVER when at line rate */
    uint64_t bytes_since_inc;  /* byte counter */
    uint32_t t_stage, bc_stage;
    bool active;               /* a CNP has been seen */
    bool cnp_alpha, cnp_dec;   /* CNP seen since the last alpha tick / decrease check */
    bool last_inc_timer;       /* the last increase came from the timer */
};

struct cc_flow {
    double rate;               /* current sending rate Rc, bit/s: the pacing rate */
    double line;               /* port speed, bit/s */
    const struct dcqcn_params *dcqcn;
    uint64_t cnp_handled;      /* rp_cnp_handled */
    union {
        struct dcqcn_state d;
    } u;
};

struct cc_ops {
    const char *name;
    void (*init)(struct cc_flow *f, const struct scenario *s, double line_bps, simtime_t now);
    void (*advance)(struct cc_flow *f, simtime_t now);
    void (*on_cnp)(struct cc_flow *f, simtime_t now);
    void (*on_send)(struct cc_flow *f, simtime_t now, uint32_t bytes);
    /* The next time the rate may change by itself (a timer of the algorithm), or NEVER.
     * A QP waiting for its pacing slot wakes up then to re-pace at the new rate. */
    simtime_t (*next_change)(const struct cc_flow *f);
};

extern const struct cc_ops cc_none_ops;
extern const struct cc_ops cc_dcqcn_ops;
const struct cc_ops *cc_ops_for(enum cc_kind kind);

#endif
