/* A ConnectX NIC's DCQCN knobs, read from every layout there is (replay.md 3.3):
 *   MLNX_OFED   NET/IF/ecn/roce_rp/<knob>, NET/IF/ecn/roce_np/<knob>, and enable/<prio>
 *               (NVIDIA's docs put the knobs under a params/ folder: both are probed)
 *   upstream    DEBUGFS/mlx5/<pci-bdf>/cc_params/rp_<knob>, np_<knob> (the BDF from the
 *               NET/IF/device link unless given)
 * NET (normally /sys/class/net) and DEBUGFS (/sys/kernel/debug) are parameters, so tests
 * point them at fixture trees. The knobs become a scenario fragment ([nic] cc_preset, cnp
 * priority, [dcqcn] keys in the simulator's units) that `rocesim check` accepts, so the
 * simulation can be rerun with the lab's settings. */
#ifndef ROCESIM_REPLAY_NIC_KNOBS_H
#define ROCESIM_REPLAY_NIC_KNOBS_H
#include <glib.h>

struct nic_knobs {
    const char *layout;       /* "mlnx_ofed", "mlnx_ofed_params", "debugfs" or NULL: none */
    char *source;             /* the folder read */
    GPtrArray *names, *values;/* every knob as found (strings), in name order */
    int rp_enable[8], np_enable[8]; /* -1: not exposed */
};

/* FALSE only for a knob file that exists but cannot be read or is not a number; no knobs
 * at all is k->layout == NULL. */
gboolean nic_knobs_read(const char *net_root, const char *netdev, const char *debugfs_root,
                        const char *pci_bdf, struct nic_knobs *k, GError **err);
void nic_knobs_clear(struct nic_knobs *k);
/* The scenario fragment: "[nic]\n...\n[dcqcn]\n..." with a comment naming the source. */
char *nic_knobs_fragment(const struct nic_knobs *k);

#endif
