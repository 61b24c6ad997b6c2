// x86 schedules of the NCHWc convolutions (topi/nn/conv2d_nchwc.h); TVM's topi x86
// conv2d_NCHWc / depthwise_conv2d_NCHWc schedules, written with tir::Schedule primitives.
//
// conv2d_NCHWc, loops n, ko, oh, ow, ki | rco, ry, rx, rci become
//   parallel(fuse(n, ko, oh))                   one task per (output-channel block, output row)
//     owo                                       ow / T tiles of the output row
//       init: acc[owi, ki] = 0                  (decompose_reduction)
//       rco, ry, rx, rci                        reduction, channel blocks outermost
//         unroll owi (T), vectorize ki (k)      the register-blocked micro-kernel: T zmm
//                                               accumulators, one kernel vector, T broadcast FMAs
//       epilogue (reverse_compute_at)           bias / relu / clip / add on the T x k tile
// The output tile lives at a loop-invariant address inside the reduction loops, and the
// kernel's buffers are noalias, so LLVM keeps the T accumulators in registers.
// T = ConvOwTile(OW, 14): with AVX-512 one zmm of k = 16 per accumulator; with AVX2 k = 16 is
// split into 2 x 8 lanes with the lane-block loop outside the reduction (16 ymm registers: up
// to 14 accumulators, a kernel vector, a broadcast). Fewer than ~10 accumulators leave the FMA
// pipes latency-bound (a 7/8-wide tile ran at ~40 % of peak at 56x56); a T x 2-ymm tile of 7
// needs 17 registers and spills accumulators.
//
// depthwise_conv2d_NCHWc, loops n, b, oh, ow, i | ry, rx become
//   parallel(fuse(n, b, oh)), owo, init, ry, rx, unroll owi, vectorize i, epilogue.
//
// The padding stage "data_pad_NCHWc" is left to the default schedule (parallel outer loops,
// vectorized channel lanes), computed into its own buffer before the convolution.
#pragma once

#include <set>
#include <string>

#include "tessera/tir/schedule/schedule.h"
#include "tessera/topi/x86/schedule.h"

namespace tessera::topi::x86 {

/// Schedules the first conv2d_NCHWc / depthwise_conv2d_NCHWc block of `sch` (and its
/// epilogue block). Returns the names of the blocks it scheduled; empty when the function has
/// no such block. Every step is a checked primitive; one the library refuses is skipped.
std::set<std::string> ScheduleConv2dNCHWc(tir::Schedule& sch, const ScheduleOptions& options);

/// The output-width tile of the micro-kernel for an output width `ow`, at most max_tile (or a
/// little more when ow itself fits): a divisor of ow in (max_tile/2, max_tile], else ow when
/// ow <= 1.5 max_tile, else a divisor >= 4, else max_tile (predicated).
int64_t ConvOwTile(int64_t ow, int64_t max_tile);

/// float32 lanes of the host's vector registers: 16 (AVX-512), 8 (AVX2), 4 otherwise.
int64_t HostVectorLanes();

/// Whether a block name is one the default schedule must not inline (the NCHWc padding stage).
bool KeepAsStage(const std::string& block_name);

}  // namespace tessera::topi::x86
