// CPU schedule of the fused attention compute (topi/nn/attention.h), written with tir::Schedule
// primitives. The output's rows are cut into blocks of `rows` queries; every stage is compute_at
// the block loop, so a block's scores, exponentials, maxima and sums live in buffers of rows x N
// (CompactBufferAllocation: 20 x 1500 floats, 117 KiB, for Whisper) that stay in L2 while the
// block's keys and values stream through L1:
//
//   parallel(fuse(batch.., i / rows))            one task per (batch, block of query rows)
//     T_attn_score: for j / lanes, for i / mr:   the scores, a GEMM micro-kernel with k_t's
//                     init 0; for k (D):         j-panel (D x lanes) in L1 for every row tile:
//                       unroll mr, vector lanes  mr x lanes accumulators in registers
//     T_attn_max, T_attn_exp, T_attn_sum         the softmax along the block's rows, vectorized as
//                                                the default schedule does under a row loop (the
//                                                row reductions rfactor-ed by the lane count)
//     T_attn_pv:    for i / mr2:                 exp x v, a second micro-kernel: mr2 rows x Dv
//                     init 0; for j (N):         lanes of accumulators, one v row loaded per j
//                       unroll mr2, Dv / lanes, vector lanes
//     T_attn:       pv / sum, vectorized
// A key count that the lanes do not divide (1500) leaves a guarded last panel, which
// LoopPartition splits off.
//
// Tuning knobs (schedule_knobs.h): "T_attn.rows" (the query block: 4 .. 64 and the divisors of M in
// that range; fallback: the largest divisor of M in [12, 24]; else the divisor in [4, 64] nearest
// 16; else M when M <= 64; else 16), "T_attn_score.mr" and "T_attn_pv.mr" (the micro-kernels'
// rows, divisors of rows up to 12; fallback: the largest whose accumulators leave 4 vector
// registers free: 12 of AVX2's 16, 28 of AVX-512's 32). When rows do not divide M (197 tokens of
// a ViT), the blocks of one batch entry run serially under the parallel batch loop (parallel over
// the batch only), so LoopPartition can split the guarded last block off (a guard
// on the fused parallel loop would stay in every block and keep it scalar). Every step is a
// checked primitive; one
// the library refuses is skipped (blocks it could not place are left to the default schedule).
#pragma once

#include <set>
#include <string>

#include "tessera/tir/schedule/schedule.h"
#include "tessera/topi/x86/schedule.h"

namespace tessera::topi::x86 {

/// Schedules the attention compute's blocks of `sch` as above; returns the names of the blocks
/// it scheduled (empty when the kernel has no T_attn block).
std::set<std::string> ScheduleAttention(tir::Schedule& sch, const ScheduleOptions& options);

/// ScheduleAttention as an anchor schedule.
AnchorSchedule AttentionAnchor();

}  // namespace tessera::topi::x86
