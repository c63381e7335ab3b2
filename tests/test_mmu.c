/* The switch MMU (models/mmu.c) against traces computed by hand from shared/reference/models.md
 * section 4 (HPCC ns-3 switch-mmu.cc) and the headroom formula of section 3.3.
 *
 * The fixture is small enough to follow on paper: 2 ports, 8 priorities, priority 3 lossless,
 *   buffer 100000 B, reserve 1000 B per (port, prio), headroom 5000 B per (port, lossless prio)
 *   shared_cap = 100000 - 2*8*1000 - 2*5000 = 74000 B
 *   alpha 0.25 (a power of two: the thresholds below are exact in floating point)
 *   dynamic threshold thr = (74000 - shared_used) * 0.25
 *   xon_offset 2000 B. */
#include <string.h>
#include "models/mmu.h"
#include "models/net.h"
#include "tests/test_fabric.h"
#include "tests/testutil.h"

#define LL 3 /* the lossless priority */
#define LY 0 /* a lossy priority */

static struct mmu M;
static struct mmu_port P[2];
static struct mmu_ingress I[2][MMU_NPRIO]; /* each port's (port, priority) counters */

static void setup(uint64_t xoff_static, bool pfc, double egress_alpha)
{
    memset(&M, 0, sizeof M);
    memset(P, 0, sizeof P);
    memset(I, 0, sizeof I);
    struct mmu_config cfg = { .buffer = 100000, .reserve = 1000, .xon_offset = 2000, .xoff_static = xoff_static,
                              .alpha = 0.25, .egress_alpha = egress_alpha, .lossless = 1u << LL, .pfc = pfc };
    for (int i = 0; i < 2; i++) {
        P[i].headroom_size = 5000;
        P[i].alpha = 0.25;
    }
    mmu_init(&M, &cfg, P, 2);
}

static void expect_in(int port, int prio, uint64_t reserve, uint64_t shared, uint64_t headroom)
{
    const struct mmu_ingress *in = &I[port][prio];
    if (in->reserve != reserve || in->shared != shared || in->headroom != headroom)
        fprintf(stderr, "\n  port %d prio %d: reserve %" G_GUINT64_FORMAT " shared %" G_GUINT64_FORMAT
                        " headroom %" G_GUINT64_FORMAT " (want %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT
                        " %" G_GUINT64_FORMAT ")\n",
                port, prio, (uint64_t)in->reserve, (uint64_t)in->shared, (uint64_t)in->headroom, reserve, shared,
                headroom);
    CU_ASSERT_EQUAL(in->reserve, reserve);
    CU_ASSERT_EQUAL(in->shared, shared);
    CU_ASSERT_EQUAL(in->headroom, headroom);
}

/* ---- set-up figures ---- */

static void test_init_shared_cap(void)
{
    setup(0, true, 8);
    CU_ASSERT_EQUAL(M.shared_cap, 74000);      /* 100000 - 16 reserves - 2 headrooms */
    CU_ASSERT_EQUAL(M.shared_used, 0);
    CU_ASSERT_EQUAL(mmu_threshold(&M, &P[0]), 18500); /* 74000 / 4 */
    /* PFC off: no headroom is set aside */
    setup(0, false, 8);
    CU_ASSERT_EQUAL(M.shared_cap, 84000);
    /* a static XOFF is the threshold whatever the occupancy */
    setup(6000, true, 8);
    CU_ASSERT_EQUAL(mmu_threshold(&M, &P[0]), 6000);
}

/* ---- accounting: reserve, then shared, then headroom past the threshold ---- */

static void test_dynamic_trace(void)
{
    setup(0, true, 8);
    /* 1st packet of 1000 B: fits the reserve */
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0), MMU_ACCEPT);
    expect_in(0, LL, 1000, 0, 0);
    CU_ASSERT_EQUAL(M.shared_used, 0);
    CU_ASSERT_FALSE(mmu_should_pause(&M, &P[0], &I[0][LL], LL));
    /* then the shared pool: with s bytes shared, thr = (74000 - s) / 4. A packet goes to
     * headroom once s + 1000 > thr, i.e. s > 14000: the pool takes s = 1000 .. 15000. */
    for (int k = 1; k <= 14; k++)
        CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0), MMU_ACCEPT);
    expect_in(0, LL, 1000, 14000, 0);
    CU_ASSERT_EQUAL(M.shared_used, 14000);
    CU_ASSERT_EQUAL(mmu_threshold(&M, &P[0]), 15000);
    CU_ASSERT_FALSE(mmu_should_pause(&M, &P[0], &I[0][LL], LL)); /* 14000 < 15000 */
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0), MMU_ACCEPT); /* 15000 <= 15000: shared */
    expect_in(0, LL, 1000, 15000, 0);
    CU_ASSERT_EQUAL(mmu_threshold(&M, &P[0]), 14750);
    CU_ASSERT_TRUE(mmu_should_pause(&M, &P[0], &I[0][LL], LL)); /* 15000 >= 14750: XOFF */
    /* past the threshold: headroom, 5 packets fill it exactly */
    for (int k = 0; k < 5; k++)
        CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0), MMU_ACCEPT);
    expect_in(0, LL, 1000, 15000, 5000);
    CU_ASSERT_EQUAL(M.shared_used, 15000);
    CU_ASSERT_EQUAL(M.used, 21000);
    /* the headroom would overflow: the only lossless drop */
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0), MMU_DROP_LOSSLESS);
    expect_in(0, LL, 1000, 15000, 5000);
    CU_ASSERT_EQUAL(M.used, 21000);
    /* the other port's priority 3 is untouched and still starts in its reserve */
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[1], &I[1][LL], LL, 1000, 0), MMU_ACCEPT);
    expect_in(1, LL, 1000, 0, 0);
}

static void test_static_trace(void)
{
    setup(6000, true, 8);
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0), MMU_ACCEPT); /* reserve */
    /* shared up to 6000 exactly: s + 1000 > 6000 only from s = 6000 on */
    for (int k = 0; k < 6; k++) {
        CU_ASSERT_FALSE(mmu_should_pause(&M, &P[0], &I[0][LL], LL));
        CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0), MMU_ACCEPT);
    }
    expect_in(0, LL, 1000, 6000, 0);
    CU_ASSERT_EQUAL(mmu_threshold(&M, &P[0]), 6000); /* static: unmoved by the occupancy */
    CU_ASSERT_TRUE(mmu_should_pause(&M, &P[0], &I[0][LL], LL));
    /* a 2500 B packet would take the shared use to 8500 > 6000: headroom */
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 2500, 0), MMU_ACCEPT);
    expect_in(0, LL, 1000, 6000, 2500);
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 2500, 0), MMU_ACCEPT); /* 5000: exactly full */
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1, 0), MMU_DROP_LOSSLESS);
    expect_in(0, LL, 1000, 6000, 5000);
}

/* A frame larger than what is left of the reserve: models.md 4 (and switch-mmu.cc) charge
 * the reserve with what fits and the shared pool with the rest ("shared_used grows by the
 * part beyond the reserve"). A 1500 B frame into an empty 1000 B reserve: 1000 + 500. */
static void test_reserve_then_shared_split(void)
{
    setup(0, true, 8);
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1500, 0), MMU_ACCEPT);
    CU_ASSERT_EQUAL(I[0][LL].reserve + I[0][LL].shared + I[0][LL].headroom, 1500);
    CU_ASSERT_EQUAL(M.used, 1500);
    if (M.shared_used != 500)
        fprintf(stderr, "\n  model differs from models.md 4: a 1500 B frame into an empty 1000 B reserve is charged"
                        " reserve %" G_GUINT64_FORMAT ", shared %" G_GUINT64_FORMAT " (expected 1000 + 500)\n",
                (uint64_t)I[0][LL].reserve, (uint64_t)I[0][LL].shared);
    CU_ASSERT_EQUAL(M.shared_used, 500);
    expect_in(0, LL, 1000, 500, 0);
}

/* ---- release order: headroom, then shared, then reserve ---- */

static void test_release_order(void)
{
    setup(0, true, 8);
    for (int k = 0; k < 21; k++)
        CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0), MMU_ACCEPT);
    expect_in(0, LL, 1000, 15000, 5000);
    mmu_release(&M, &I[0][LL], 2500);
    expect_in(0, LL, 1000, 15000, 2500);
    CU_ASSERT_EQUAL(M.shared_used, 15000);
    mmu_release(&M, &I[0][LL], 3000); /* the last 2500 of headroom, then 500 of shared */
    expect_in(0, LL, 1000, 14500, 0);
    CU_ASSERT_EQUAL(M.shared_used, 14500);
    mmu_release(&M, &I[0][LL], 14700); /* all shared, then 200 of the reserve */
    expect_in(0, LL, 800, 0, 0);
    CU_ASSERT_EQUAL(M.shared_used, 0);
    CU_ASSERT_EQUAL(M.used, 800);
    mmu_release(&M, &I[0][LL], 800);
    expect_in(0, LL, 0, 0, 0);
    CU_ASSERT_EQUAL(M.used, 0);
}

/* ---- the dynamic threshold follows the free shared pool of the whole switch ---- */

static void test_threshold_is_alpha_times_free(void)
{
    setup(0, true, 8);
    /* port 1 takes 1000 reserve + 20000 shared on the lossy priority (egress limit 8 x free) */
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[1], &I[1][LY], LY, 1000, 0), MMU_ACCEPT);
    for (int k = 0; k < 20; k++)
        CU_ASSERT_EQUAL(mmu_admit(&M, &P[1], &I[1][LY], LY, 1000, 0), MMU_ACCEPT);
    CU_ASSERT_EQUAL(M.shared_used, 20000);
    CU_ASSERT_EQUAL(mmu_threshold(&M, &P[0]), 13500); /* (74000 - 20000) / 4 */
    /* a port with a larger alpha (faster port) gets a larger share of the same free pool */
    P[1].alpha = 1.0;
    CU_ASSERT_EQUAL(mmu_threshold(&M, &P[1]), 54000);
    /* port 0 on the lossless priority: thr = (54000 - s) / 4; headroom once s + 1000 > thr,
     * i.e. 5s > 50000: shared fills to s = 11000 (11 packets after the reserve) */
    for (int k = 0; k < 12; k++)
        CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0), MMU_ACCEPT);
    expect_in(0, LL, 1000, 11000, 0);
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0), MMU_ACCEPT);
    expect_in(0, LL, 1000, 11000, 1000);
    /* port 1 frees its shared bytes: port 0's threshold rises to (74000 - 11000) / 4 */
    mmu_release(&M, &I[1][LY], 21000);
    CU_ASSERT_EQUAL(M.shared_used, 11000);
    CU_ASSERT_EQUAL(mmu_threshold(&M, &P[0]), 15750);
}

/* The headroom is a fixed allotment: whatever the threshold does, what is charged to it never
 * exceeds its size. Port 0 fills its headroom while port 1 holds shared bytes; port 1 then
 * frees them, the threshold rises above port 0's shared use, and one more frame arrives on
 * port 0. models.md 4 (switch-mmu.cc): not dropped (shared + size <= thr), and since
 * shared + size <= thr it is charged to the shared pool, not to the full headroom. */
static void test_headroom_never_overflows(void)
{
    setup(0, true, 8);
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[1], &I[1][LY], LY, 1000, 0), MMU_ACCEPT);
    for (int k = 0; k < 20; k++)
        CU_ASSERT_EQUAL(mmu_admit(&M, &P[1], &I[1][LY], LY, 1000, 0), MMU_ACCEPT);
    for (int k = 0; k < 12; k++) /* reserve + 11000 shared, as above */
        CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0), MMU_ACCEPT);
    for (int k = 0; k < 5; k++)
        CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0), MMU_ACCEPT);
    expect_in(0, LL, 1000, 11000, 5000);
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0), MMU_DROP_LOSSLESS);
    mmu_release(&M, &I[1][LY], 21000);
    CU_ASSERT_EQUAL(mmu_threshold(&M, &P[0]), 15750); /* 11000 + 1000 <= 15750 */
    enum mmu_verdict v = mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0);
    CU_ASSERT_EQUAL(v, MMU_ACCEPT);
    if (I[0][LL].headroom > P[0].headroom_size)
        fprintf(stderr, "\n  model differs from models.md 4: headroom charged %" G_GUINT64_FORMAT
                        " B, its size is %" G_GUINT64_FORMAT " B (shared %" G_GUINT64_FORMAT ", thr %" G_GUINT64_FORMAT
                        "; expected the frame in shared)\n",
                (uint64_t)I[0][LL].headroom, P[0].headroom_size, (uint64_t)I[0][LL].shared,
                mmu_threshold(&M, &P[0]));
    CU_ASSERT(I[0][LL].headroom <= P[0].headroom_size);
    CU_ASSERT_EQUAL(M.used, 1000 + 11000 + 5000 + 1000);
}

/* ---- XOFF / XON hysteresis ---- */

static void test_hysteresis(void)
{
    setup(0, true, 8);
    for (int k = 0; k < 21; k++)
        mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0);
    CU_ASSERT_TRUE(mmu_should_pause(&M, &P[0], &I[0][LL], LL));
    CU_ASSERT_FALSE(mmu_may_resume(&M, &P[0], &I[0][LL], LL)); /* nothing sent yet: nothing to resume */
    P[0].xoff_sent |= 1u << LL;                     /* the switch sent XOFF */
    CU_ASSERT_FALSE(mmu_should_pause(&M, &P[0], &I[0][LL], LL)); /* not twice */
    /* headroom still holds bytes: no XON, whatever the shared use */
    mmu_release(&M, &I[0][LL], 4999);
    expect_in(0, LL, 1000, 15000, 1);
    CU_ASSERT_FALSE(mmu_may_resume(&M, &P[0], &I[0][LL], LL));
    /* headroom empty; XON needs s + 2000 <= (74000 - s) / 4, i.e. s <= 13200 */
    mmu_release(&M, &I[0][LL], 1);
    expect_in(0, LL, 1000, 15000, 0);
    CU_ASSERT_FALSE(mmu_may_resume(&M, &P[0], &I[0][LL], LL));
    mmu_release(&M, &I[0][LL], 1799);
    expect_in(0, LL, 1000, 13201, 0);
    CU_ASSERT_EQUAL(mmu_threshold(&M, &P[0]), 15199); /* 60799 / 4, truncated */
    CU_ASSERT_FALSE(mmu_may_resume(&M, &P[0], &I[0][LL], LL)); /* 15201 > 15199 */
    /* below XOFF (13201 < 15199) but inside the hysteresis band: still paused, no new XOFF */
    CU_ASSERT_FALSE(mmu_should_pause(&M, &P[0], &I[0][LL], LL));
    mmu_release(&M, &I[0][LL], 1);
    CU_ASSERT_EQUAL(mmu_threshold(&M, &P[0]), 15200);
    CU_ASSERT_TRUE(mmu_may_resume(&M, &P[0], &I[0][LL], LL)); /* 15200 <= 15200 */
    P[0].xoff_sent &= (uint8_t)~(1u << LL);
    /* once resumed, the next XOFF comes only at the threshold again */
    CU_ASSERT_FALSE(mmu_should_pause(&M, &P[0], &I[0][LL], LL));
    CU_ASSERT_FALSE(mmu_may_resume(&M, &P[0], &I[0][LL], LL));
}

/* Static XOFF: XON at xoff - xon_offset; an emptied shared pool always resumes. */
static void test_hysteresis_static(void)
{
    setup(6000, true, 8);
    for (int k = 0; k < 7; k++)
        mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0);
    CU_ASSERT_TRUE(mmu_should_pause(&M, &P[0], &I[0][LL], LL));
    P[0].xoff_sent |= 1u << LL;
    mmu_release(&M, &I[0][LL], 1999); /* shared 4001: 6001 > 6000 */
    CU_ASSERT_FALSE(mmu_may_resume(&M, &P[0], &I[0][LL], LL));
    mmu_release(&M, &I[0][LL], 1); /* 4000 + 2000 <= 6000 */
    CU_ASSERT_TRUE(mmu_may_resume(&M, &P[0], &I[0][LL], LL));
    /* an xon_offset larger than the threshold: only an empty pool resumes */
    setup(1500, true, 8);
    M.cfg.xon_offset = 4000;
    for (int k = 0; k < 3; k++)
        mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0);
    expect_in(0, LL, 1000, 1000, 1000);
    P[0].xoff_sent |= 1u << LL;
    mmu_release(&M, &I[0][LL], 1000);
    CU_ASSERT_FALSE(mmu_may_resume(&M, &P[0], &I[0][LL], LL)); /* shared 1000 + 4000 > 1500 */
    mmu_release(&M, &I[0][LL], 1000);
    CU_ASSERT_TRUE(mmu_may_resume(&M, &P[0], &I[0][LL], LL));  /* shared == 0 */
}

/* ---- lossy priorities: dropped at the egress limit, never paused ---- */

static void test_lossy_egress_limit(void)
{
    setup(0, true, 0.5);
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LY], LY, 1000, 0), MMU_ACCEPT); /* reserve */
    expect_in(0, LY, 1000, 0, 0);
    /* shared: free 74000, an egress queue may hold 0.5 x free = 37000 */
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LY], LY, 1000, 1000), MMU_ACCEPT);
    expect_in(0, LY, 1000, 1000, 0);
    /* free 73000: limit 36500; 35500 + 1000 = 36500 fits */
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LY], LY, 1000, 35500), MMU_ACCEPT);
    /* free 72000: limit 36000; 35001 + 1000 does not */
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LY], LY, 1000, 35001), MMU_DROP);
    expect_in(0, LY, 1000, 2000, 0);
    CU_ASSERT_EQUAL(M.used, 3000);
    /* never a pause for a lossy priority, never headroom */
    CU_ASSERT_FALSE(mmu_should_pause(&M, &P[0], &I[0][LY], LY));
    /* the same egress occupancy on the lossless priority is admitted: no egress limit there */
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 35001), MMU_ACCEPT);
    /* with PFC off the "lossless" priority is lossy too */
    setup(0, false, 0.5);
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0), MMU_ACCEPT);
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 50000), MMU_DROP); /* limit 42000 */
    CU_ASSERT_FALSE(mmu_should_pause(&M, &P[0], &I[0][LL], LL));
    CU_ASSERT_EQUAL(I[0][LL].headroom, 0);
}

/* The shared pool itself running out: a lossy frame is dropped even under its egress limit;
 * a lossless one goes to headroom (and is dropped once that is full too). */
static void test_pool_exhausted(void)
{
    setup(0, true, 1000);
    P[1].alpha = 64; /* port 1's threshold never binds: the pool does */
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[1], &I[1][LY], LY, 1000, 0), MMU_ACCEPT);
    for (int k = 0; k < 74; k++)
        CU_ASSERT_EQUAL(mmu_admit(&M, &P[1], &I[1][LY], LY, 1000, 0), MMU_ACCEPT);
    CU_ASSERT_EQUAL(M.shared_used, 74000);
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[1], &I[1][LY], LY, 1000, 0), MMU_DROP);
    /* port 0 lossless: reserve, then (no shared left) headroom 5 x 1000, then drop */
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0), MMU_ACCEPT);
    for (int k = 0; k < 5; k++)
        CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0), MMU_ACCEPT);
    expect_in(0, LL, 1000, 0, 5000);
    CU_ASSERT_TRUE(mmu_should_pause(&M, &P[0], &I[0][LL], LL));
    CU_ASSERT_EQUAL(mmu_admit(&M, &P[0], &I[0][LL], LL, 1000, 0), MMU_DROP_LOSSLESS);
    CU_ASSERT(M.used <= M.cfg.buffer);
}

/* ---- headroom (models.md 3.3) ---- */

static void test_headroom_reference_example(void)
{
    /* The reference's worked example: 100G, 100 m of fibre (5 ns/m: 500 ns one way), 9216 B
     * frames. Its terms map to the code's inputs as: MTU_R = MTU_S = 9216 + 20 (preamble, SFD,
     * IFG) = 9236 = max_frame_wire; L_pause = 84 (64 B frame + 20); 2 d_prop R / 8 =
     * 2 x 500 ns x 100e9 / 8 = 12500 (prop_delay_ps is one way); D_intf = 122880 bit = 15360;
     * D_resp = 201728 bit = 25216. Sum 71632 B ("71.6 KB"). */
    CU_ASSERT_EQUAL(pfc_headroom_bytes(100000000000ull, 500000, 9236), 71632);
    /* 25G, same cable and frames: 9236 + 84 + 3125 + (6144 + 40960) / 8 + 9236 */
    CU_ASSERT_EQUAL(pfc_headroom_bytes(25000000000ull, 500000, 9236), 27569);
    /* 400G: D_resp = 463360 bit; the reference has no D_intf at 400G and the code takes the
     * 100G bound (122880 bit): 9236 + 84 + 50000 + (122880 + 463360) / 8 + 9236 */
    CU_ASSERT_EQUAL(pfc_headroom_bytes(400000000000ull, 500000, 9236), 141836);
    /* 10G and 40G rows, 4 KiB RoCE frames on the wire (4096 + 62 + 16 + 20 = 4194), 2 us of
     * cable one way (400 m): 10G: 4194*2 + 84 + 5000 + (8192 + 30720) / 8 = 18336;
     * 40G: 8388 + 84 + 20000 + (24576 + 60416) / 8 = 39096 */
    CU_ASSERT_EQUAL(pfc_headroom_bytes(10000000000ull, 2000000, 4194), 18336);
    CU_ASSERT_EQUAL(pfc_headroom_bytes(40000000000ull, 2000000, 4194), 39096);
    /* only the cable term scales with the length: 1 us more one way at 100G is 25000 B */
    CU_ASSERT_EQUAL(pfc_headroom_bytes(100000000000ull, 1500000, 9236) - 71632, 25000);
}

/* What `rocesim check` and the run's warning count as set apart (net_switch_reserved) is
 * what the model set apart: buffer - shared_cap of every switch, with the headroom from the
 * IEEE formula; and by hand with 100 KiB of headroom on incast16 (a leaf: 16 host ports and
 * 2 uplinks, 18 x (8 x 4096 + 102400) = 2,433,024 B; a spine: 2 x 135,168 = 270,336 B). */
static void test_reserved_matches_the_model(void)
{
    const char *auto_hr[] = { "switch.pfc=on", NULL };
    struct test_fabric f = test_fabric_build(test_scenario_load("incast16.ini", auto_hr));
    const struct topology *t = f.topo;
    for (uint32_t node = t->nhosts; node < t->nnodes; node++) {
        const struct mmu *m = &f.n->switches[node - t->nhosts].mmu;
        CU_ASSERT(m->shared_cap > 0);
        CU_ASSERT_EQUAL(net_switch_reserved(f.s, t, node), f.s->buffer - m->shared_cap);
    }
    CU_ASSERT_PTR_NULL(net_buffer_warning(f.s, t));
    test_fabric_free(&f);
    const char *fixed[] = { "switch.pfc=on", "switch.headroom=100KiB", NULL };
    f = test_fabric_build(test_scenario_load("incast16.ini", fixed));
    t = f.topo;
    for (uint32_t node = t->nhosts; node < t->nnodes; node++)
        CU_ASSERT_EQUAL(net_switch_reserved(f.s, t, node),
                        !strncmp(t->nodes[node].name, "leaf", 4) ? 2433024ull : 270336ull);
    test_fabric_free(&f);
}

static CU_TestInfo tests[] = {
    { "init: shared pool and thresholds", test_init_shared_cap },
    { "dynamic threshold trace", test_dynamic_trace },
    { "static xoff trace", test_static_trace },
    { "a frame straddling the reserve", test_reserve_then_shared_split },
    { "release order headroom, shared, reserve", test_release_order },
    { "threshold = alpha x free shared", test_threshold_is_alpha_times_free },
    { "headroom never overflows", test_headroom_never_overflows },
    { "XOFF/XON hysteresis (dynamic)", test_hysteresis },
    { "XOFF/XON hysteresis (static)", test_hysteresis_static },
    { "lossy drop at the egress limit", test_lossy_egress_limit },
    { "shared pool exhausted", test_pool_exhausted },
    { "headroom formula (models.md 3.3)", test_headroom_reference_example },
    { "what check counts as set apart is what the model sets apart", test_reserved_matches_the_model },
    CU_TEST_INFO_NULL,
};

TEST_MAIN("mmu", tests)
