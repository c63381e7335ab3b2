/* [workload NAME] kind = train: one training step from a parallelism plan.
 *
 * Plan: tp x pp x dp GPUs (ranks, default every GPU), placed TP fastest (a TP group is tp
 * consecutive GPUs of one server), then DP, then PP (Megatron's order); ep divides dp and
 * an EP group is ep consecutive DP replicas. Sizes, per micro-batch of `batch` sequences of
 * `seq` tokens, `hidden` wide, `dtype_bytes` per value (2):
 *   activation A = batch * seq * hidden * dtype_bytes (or activation_bytes)
 *   parameters of a layer = 12 * hidden^2 (or layer_params), a TP rank holds 1/tp of them
 * Per layer and micro-batch (Megatron tensor parallelism, no sequence parallelism):
 *   TP   forward 2 AllReduce of A (attention, MLP), backward 2 AllReduce of A
 *   EP   (ep > 1) forward 2 AllToAll of A (dispatch, combine), backward 2
 * Per micro-batch and stage boundary: PP sends A/tp from every TP rank of stage s to the same
 * TP rank of stage s+1 (forward) and the gradient back (backward); stages run 1F1B (stage s:
 * pp-s-1 warm-up forwards, then one forward one backward, then the remaining backwards).
 * DP: the gradients of a stage, params/tp * dtype_bytes per rank, are AllReduced in buckets
 * of `bucket` bytes (25MB, PyTorch DDP's default) over the DP group, each bucket launched as
 * soon as the last micro-batch's backward has produced it (layers in reverse order), so they
 * overlap the rest of the backward pass. With fsdp = on, every layer's parameters are
 * AllGathered before its forward and its backward (of every micro-batch) and its gradients
 * ReduceScattered after the last micro-batch's backward, instead of the AllReduce.
 * Compute: `fwd` per layer and micro-batch on every GPU, `bwd` (default 2 x fwd).
 * Every collective is a job named NAME.DIM.… (DIM = tp, pp, dp, ep, fsdp) built by
 * models/collective (NCCL ring or alltoall). */
#ifndef ROCESIM_WORKLOAD_TRAIN_H
#define ROCESIM_WORKLOAD_TRAIN_H
#include <glib.h>
#include "models/schedule.h"
#include "models/topology.h"
#include "models/scenario.h"

gboolean train_build(const struct scenario *sc, const struct topology *t, struct schedule *s,
                     const struct named_section *w, uint8_t prio, simtime_t start, const uint32_t *after,
                     uint32_t nafter, GError **err);

#endif
