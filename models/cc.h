/* Congestion control behind one small interface, so the NIC does not know which algorithm
 * runs. State is per QP and evolves lazily: the NIC calls advance() before it reads the
 * rate, and the algorithm brings its timers up to `now` in closed form, so no per-QP
 * periodic events exist. */
#ifndef ROCESIM_CC_H
#define ROCESIM_CC_H
#include <stdbool.h>
#include <stdint.h>
#include "models/int_hdr.h"
#include "models/scenario.h"
#include "sim/config.h"
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
};

/* DCTCP, rate-based (models.md 6.3): alpha per window of ACKs, one cut per window with
 * ECN-echo, additive increase per window without. */
struct dctcp_state {
    double alpha;
    uint32_t window_end;       /* PSN that closes the current observation window */
    uint32_t acked, marked;    /* packets acknowledged / with ECN-echo in the window */
    uint32_t cwr_end;          /* no further cut until this PSN is acknowledged */
    bool in_cwr;
};

/* TIMELY (models.md 6.2): RTT gradient, one decision per RTT. */
struct timely_state {
    double rtt_diff;           /* EWMA of consecutive RTT differences, ps */
    simtime_t prev_rtt;
    uint32_t update_end;       /* PSN after which the next decision is taken */
    uint32_t increases;        /* consecutive increases (hyper increase after 5) */
};

/* HPCC (models.md 6.1), single-rate mode: the per-QP state of HPCC ns-3 RdmaQueuePair::hp. */
struct hpcc_state {
    uint64_t hop[INT_MAX_HOP]; /* INT of the previous ACK, per hop */
    double u;                  /* EWMA of the normalised utilisation, starts at 1 */
    double cur_rate;           /* R_c, the reference rate committed once per RTT */
    uint32_t inc_stage;
    uint32_t last_update_seq;  /* PSN; 0 = no ACK seen yet (the first RTT) */
    double base_rtt_ns;        /* T */
    uint64_t win_max;          /* W, bytes: the window at line rate */
};

/* What the QPs of one NIC port share, kept once for all of them (a QP has room for a pointer,
 * not for copies: see struct qp_rt's size in net.h). The caller fills it and keeps it for the
 * flows' life; cc_env_make gives the usual one. */
struct cc_env {
    const void *params;        /* the algorithm's settings block (cc_params) */
    double line;               /* port speed, bit/s */
};

struct cc_flow {
    double rate;               /* current sending rate Rc, bit/s: the pacing rate */
    const struct cc_env *env;
    uint64_t win;              /* bytes the QP may have in flight; 0 = no window (rate only) */
    union {
        struct dcqcn_state d;
        struct dctcp_state c;
        struct timely_state t;
        struct hpcc_state h;
        /* for an algorithm whose state is private to its file: up to 80 bytes, the largest
         * above (HPCC's), so that a QP (struct qp_rt) fits three cache lines (its static
         * assertion in net.h): a 4096-host AllToAll has 16.8 M of them */
        uint64_t opaque[10];
    } u;
};

/* What an acknowledgement tells the sender. */
struct cc_ack {
    simtime_t rtt;             /* now - the data packet's send time, echoed in the ACK */
    uint32_t acked_pkts;       /* packets newly acknowledged */
    uint32_t ack_psn;          /* everything below this PSN is acknowledged */
    uint32_t snd_nxt;          /* next PSN the sender will send */
    bool ece;                  /* ECN-echo: a CE-marked packet arrived since the last ACK */
    const struct int_stack *intd; /* the INT stack the ACK echoes (HPCC), or NULL */
};

struct cc_ops {
    const char *name;
    /* ENV (its settings block and line rate) must outlive the flow: the flow keeps a pointer */
    void (*init)(struct cc_flow *f, const struct scenario *s, const struct cc_env *env, simtime_t now);
    void (*advance)(struct cc_flow *f, simtime_t now);
    void (*on_cnp)(struct cc_flow *f, simtime_t now);
    /* After advance(now): the NIC paces the QP right after it without advancing again, so it
     * must leave no change of its own due at or before `now` (next_change > now) */
    void (*on_send)(struct cc_flow *f, simtime_t now, uint32_t bytes);
    void (*on_ack)(struct cc_flow *f, simtime_t now, const struct cc_ack *ack);
    /* The next time the rate may change by itself (a timer of the algorithm), or NEVER.
     * A QP waiting for its pacing slot wakes up then to re-pace at the new rate. */
    simtime_t (*next_change)(const struct cc_flow *f);
    /* The receiver acts as a notification point (CNPs or CNP-flagged ACKs for CE marks). */
    bool uses_cnp;
    /* Optional: once per QP after init, with the QP's hosts (per-path settings). */
    void (*init_path)(struct cc_flow *f, const struct scenario *s, uint32_t src, uint32_t dst);
    /* Optional: data packets collect INT at every switch egress; returns the INT unit
     * multiplier (models/int_hdr.h) from the algorithm's settings. */
    uint32_t (*int_unit)(const void *params);

    /* Settings: the keys of [section] (a table ending with CFG_END), stored in a block of
     * params_size bytes that scenario_load allocates and fills (defaults, then the file);
     * NULL section: none. */
    const char *section;
    const struct cfg_key *keys;
    size_t params_size;
    /* Optional, after every key is read: derived defaults and presets (KF tells which keys
     * the file set; S may be adjusted where the algorithm needs it, e.g. [nic] ack_every). */
    gboolean (*derive)(void *params, struct scenario *s, GKeyFile *kf, GError **err);
    /* Optional, after derive: checks across keys. */
    gboolean (*validate)(const void *params, const struct scenario *s, GError **err);
};

extern const struct cc_ops cc_none_ops;
#define CC_DECLARE_(name) extern const struct cc_ops cc_##name##_ops;
CC_ALGORITHMS(CC_DECLARE_)
#undef CC_DECLARE_
/* The registry (models/cc_registry.c): position i is [nic] cc's i-th choice. */
extern const struct cc_ops *const cc_registry[CC_COUNT];
/* The algorithm scenario_load selected, and an algorithm's settings block in S. */
const struct cc_ops *cc_ops_for(int id);
void *cc_params(const struct scenario *s, const struct cc_ops *ops);
/* The environment of flows of OPS in S on a port of LINE bit/s. */
struct cc_env cc_env_make(const struct scenario *s, const struct cc_ops *ops, double line);
/* no-op hooks for algorithms that ignore an event */
void cc_ignore_cnp(struct cc_flow *f, simtime_t now);
void cc_ignore_send(struct cc_flow *f, simtime_t now, uint32_t bytes);
void cc_ignore_ack(struct cc_flow *f, simtime_t now, const struct cc_ack *ack);
void cc_no_advance(struct cc_flow *f, simtime_t now);
simtime_t cc_never_changes(const struct cc_flow *f);

#endif
