/* Every congestion-control algorithm, one line each: the algorithm NAME lives in
 * models/cc_NAME.c, which defines `const struct cc_ops cc_NAME_ops` (models/cc.h) with its
 * ops, its [NAME] section's keys, presets and derived defaults. The order is that of the
 * [nic] cc choices (after `none`) and of the sections in the expanded scenario. Adding an
 * algorithm is its file plus one line here. */
#ifndef ROCESIM_CC_REGISTRY_H
#define ROCESIM_CC_REGISTRY_H

#define CC_ALGORITHMS(X) \
    X(dcqcn)             \
    X(dctcp)             \
    X(timely)            \
    X(hpcc)              \
    /* one line per algorithm above this one */

#define CC_ID_(name) CC_ID_##name,
/* registry positions: `none` first, then the lines above */
enum cc_id { CC_ID_none = 0, CC_ALGORITHMS(CC_ID_) CC_COUNT };
#undef CC_ID_

#define CC_CHOICE_(name) "|" #name
/* the [nic] cc choices, "none|dcqcn|..." */
#define CC_CHOICES ("none" CC_ALGORITHMS(CC_CHOICE_))

#endif
