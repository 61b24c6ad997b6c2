// x86 schedule of the packed GEMM computes (topi/nn/dense_pack.h): nn.dense, nn.matmul and
// nn.batch_matmul with a right operand in the blocked layout Bp[NB, K, 16]. GotoBLAS's
// register-blocked micro-kernel, written with tir::Schedule primitives.
//
// T_gemm_packed, loops batch..., m..., n | k (the m loops fused into one; with several static row
// loops, when a row tile of at least half the wanted mr divides the innermost one, that one is
// tiled alone and the outer row loops stay tile loops, so the epilogue's region under the tile
// stays a box: channels-last [1, H, W, C] activations) become
//   parallel(fuse(batch..., no, mo))        one task per (batch, mr x nv*16 tile); tiles of one
//                                           column panel are consecutive, so a thread streams
//                                           the panel Bp[no] (K x nv*16) from L2 for all its rows
//     init: C[mi, nv, 16] = 0              (decompose_reduction)
//     k                                     the whole reduction inside the tile
//       unroll mi (mr), unroll nv,          the micro-kernel: mr * nv zmm accumulators, nv vector
//       vectorize l (16)                    loads of Bp[no, k, :], mr broadcasts of A[m, k], FMAs
//     epilogue                              bias / GELU / residual add / the unpadding copy of
//                                           this tile, under the tile loop (reverse_compute_at);
//                                           its row of nv * 16 vectorized 16 lanes at a time
// The tile of C sits at a loop-invariant address inside k and the kernel's buffers are
// noalias, so LLVM keeps the mr * nv accumulators in registers (checked by a test on the
// assembly); with the epilogue under the tile loop the intermediate C shrinks to the tile. Row
// loops of extent 1 are not fused into M (so the tile's rows are one loop and its region
// exact). M and N are padded by the computes to multiples of mr and nv * 16 (the unpadding copy
// "T_gemm_unpad" is an ordinary block); only dense over an x of rank > 2 (rows fused into M)
// gets a predicate on a partial row tile (LLVM splits that tile off the main loop). Dynamic
// shapes: a symbolic row count (dense_packed pads it to floordiv(m + mr - 1, mr) * mr) is split
// into whole tiles of mr rows (no predicate: the split proves the padded extent a multiple of
// mr), the same micro-kernel as static rows; the unpadding copy under the tile loop writes the
// real rows of the last tile (a predicate there only). A symbolic N (batch_matmul_packed pads
// it to a multiple of nv * 16) splits exactly too; a symbolic K is never blocked (kc = K). When rows
// fused across two non-unit dims make a tile's region not a box ([1, 14, 14, C] in 6-row tiles),
// the epilogue goes under the column panel loop instead (as with K blocking), the intermediate C
// shrinks to one panel (M x nv*16), and the parallel loop is the panel loop (with 8 panels or
// more; fewer keep the tiles parallel and the epilogue its own loop nest). Without it every k step
// read and wrote the whole [M, N] C: Swin-B's [196, 512] x [512, 2048] + GELU ran 2.6x slower.
//
// Tuning knobs (schedule_knobs.h): "<block>.mr" (rows of the micro-kernel, 1..12), "<block>.nv" (its
// column vectors, dividing the padded N / 16) and, with more than one row tile, "<block>.kc"
// (GotoBLAS's K blocking: the reduction in chunks of kc, a divisor of K, outside the row tiles, so
// a kc x nv*16 chunk of the panel stays in L1 for every row tile; the C tiles accumulate in memory
// across chunks and the epilogue moves under the column panel loop. Fallback K: no blocking).
//
// T_pack_b (packing of a non-constant right operand inside the kernel; constant weights are
// packed at compile time by graph_lower::PackGemmWeights) becomes
//   parallel(fuse(batch..., nb)), k, vectorize l.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "tessera/target/target.h"
#include "tessera/tir/schedule/schedule.h"
#include "tessera/topi/nn/dense_pack.h"
#include "tessera/topi/x86/schedule.h"

namespace tessera::topi::x86 {

/// The micro-kernel tile for an M x N x K product (float32) on `target`: rows mr and vectors nv
/// of bn = BlockLanes(target) lanes (topi/target_layout.h) that fit the target's vector
/// registers (AVX-512: 32 zmm, mr * nv <= 28; AVX2: 16 ymm, a 16-lane vector is 2 of them,
/// e.g. 6 x 1 = 12 accumulators), reusing each B vector over >= 3 rows when the
/// B panel streams from L2, preferring tiles that divide M and N, keep >= 16
/// accumulators and give both threads the same number of tiles. The environment variable
/// TESSERA_GEMM_TILE="mr,nv" overrides it (for experiments). m, n or k <= 0: a symbolic extent
/// (dynamic shapes): chosen as for many rows / columns, and a K of 256.
GemmPackTile ChooseGemmTile(int64_t m, int64_t n, int64_t k, const target::Target& target);

/// Whether the default schedule must keep a block as its own stage (the packing T_pack_b).
bool KeepGemmStage(const std::string& block_name);

/// Schedules every T_gemm_packed and T_pack_b block of `sch` as described above. Returns the
/// names of the blocks it scheduled (empty when there are none). Every step is a checked
/// primitive; one the library refuses is skipped, so the result is always valid.
std::set<std::string> ScheduleGemmPacked(tir::Schedule& sch, const ScheduleOptions& options);

/// ScheduleGemmPacked as an anchor schedule, keeping the KeepGemmStage stages.
AnchorSchedule GemmPackedAnchor();

}  // namespace tessera::topi::x86
