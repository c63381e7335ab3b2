/* Switch memory management unit: shared-buffer accounting per ingress (port, priority) with
 * a guaranteed reserve, a shared pool under a dynamic (or static) threshold, and headroom
 * for lossless priorities; the PFC XOFF/XON decisions that follow from it. The model is
 * that of shared/reference/models.md section 4 (HPCC ns-3 switch-mmu.cc).
 * Pure bookkeeping, no simulator state: unit tests drive it with hand-computed traces. */
#ifndef ROCESIM_MMU_H
#define ROCESIM_MMU_H
#include <stdbool.h>
#include <stdint.h>

#define MMU_NPRIO 8

struct mmu_config {
    uint64_t buffer;          /* total bytes */
    uint64_t reserve;         /* guaranteed per ingress (port, priority) */
    uint64_t xon_offset;      /* hysteresis below the threshold for XON */
    uint64_t xoff_static;     /* 0 = dynamic threshold */
    double alpha;             /* dynamic threshold factor at the host port speed */
    double egress_alpha;      /* lossy: an egress queue may use egress_alpha x free buffer */
    uint8_t lossless;         /* bit p set: priority p is lossless (PFC) */
    bool pfc;
};

/* Per ingress (port, priority) occupancy, split by where it was charged (32-bit: switch
 * buffers are limited to 4 GiB, and this sits on the packet path of every port). */
struct mmu_ingress {
    uint32_t reserve, shared, headroom;
};

/* An ingress port's settings and XOFF state. Its (port, priority) counters are passed
 * beside it: the caller keeps each priority's counters with that priority's other per-packet
 * state (one cache line for a switch hop's queue, scheduler and accounting; models/net.h). */
struct mmu_port {
    uint64_t headroom_size;   /* headroom of this port for each lossless priority */
    double alpha;             /* this port's dynamic-threshold factor */
    uint8_t xoff_sent;        /* priorities this port asked its upstream to pause */
};

struct mmu {
    struct mmu_config cfg;
    uint64_t shared_cap;      /* buffer - all headroom - all reserves */
    uint64_t shared_used;
    uint64_t used;            /* everything charged */
};

enum mmu_verdict { MMU_ACCEPT = 0, MMU_DROP, MMU_DROP_LOSSLESS };

/* The bytes a switch sets apart from its buffer: a reserve per (port, priority) and, with
 * PFC, each port's headroom per lossless priority (`headroom_sum` over its `nports` ports);
 * the rest is the shared pool. */
uint64_t mmu_set_apart(const struct mmu_config *cfg, uint32_t nports, uint64_t headroom_sum);
/* Sets up the switch-wide figures once all ports' headroom sizes are known. */
void mmu_init(struct mmu *m, const struct mmu_config *cfg, struct mmu_port *ports, uint32_t nports);
/* The PFC threshold on shared use for an ingress port. */
uint64_t mmu_threshold(const struct mmu *m, const struct mmu_port *p);
/* Admission of `size` bytes arriving on (port, prio), whose counters are `in`, and bound for
 * an egress queue currently holding `egress_bytes`. On MMU_ACCEPT the bytes are charged. */
enum mmu_verdict mmu_admit(struct mmu *m, const struct mmu_port *p, struct mmu_ingress *in, int prio, uint32_t size,
                           uint64_t egress_bytes);
/* Releases `size` bytes of (port, prio) when the packet leaves: headroom first, then
 * shared, then reserve. */
void mmu_release(struct mmu *m, struct mmu_ingress *in, uint32_t size);
/* Whether (port, prio) should be paused now (XOFF) / may be resumed (XON). */
bool mmu_should_pause(const struct mmu *m, const struct mmu_port *p, const struct mmu_ingress *in, int prio);
bool mmu_may_resume(const struct mmu *m, const struct mmu_port *p, const struct mmu_ingress *in, int prio);

/* Headroom for one (port, priority) from the IEEE 802.3 bounds (models.md 3.3):
 * MTU_R + PFC frame + round-trip propagation + interface and response delays + MTU_S.
 * `max_frame_wire` is the largest frame on the wire (preamble and IFG included). */
uint64_t pfc_headroom_bytes(uint64_t rate_bps, uint64_t prop_delay_ps, uint32_t max_frame_wire);

#endif
