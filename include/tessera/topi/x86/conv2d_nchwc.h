// x86 schedules of the NCHWc convolutions (topi/nn/conv2d_nchwc.h); TVM's topi x86
// conv2d_NCHWc / depthwise_conv2d_NCHWc schedules, written with tir::Schedule primitives.
//
// conv2d_NCHWc, loops n, ko, oh, ow, ki | rco, ry, rx, rci become
//   parallel(fuse(n, ko, oh))                   one task per (output-channel block, output row)
//     owo                                       ow / T tiles of the output row
//       init: acc[owi, ki] = 0                  (decompose_reduction)
//       rco, ry, rx, rci                        reduction, channel blocks outermost
//         unroll owi (T), [unroll kv (V)],      the register-blocked micro-kernel: T x V vector
//         vectorize ki (lanes)                  accumulators, V kernel vectors, T broadcasts
//       epilogue (reverse_compute_at)           bias / relu / clip / add on the T x k tile
// Without an epilogue the conv accumulates into a cache_write "local" buffer copied out per
// tile, so after CompactBufferAllocation every conv accumulates in a tile-sized stack buffer
// that LLVM keeps in registers.
// (T, V) = ChooseConvTile: see there; a tile that does not divide OW leaves a tail that
// LoopPartition splits off. A conv whose OW has no good tile (7x7 with 16 registers) fuses (oh, ow)
// into one pixel loop tiled 6 x 2 vectors when its pixels are contiguous across rows: a stride-1 unpadded 1x1
// conv (NCHWc), or a conv reading the im2col stage (UseIm2colConv); its epilogue then goes under
// the output-channel block. Reduction blocking (a kernel chunk <= 16 KiB kept in L1 across the
// row's tiles, or the whole block's with fused pixels, accumulated between chunks) when one
// output block's kernel exceeds 32 KiB; rows outermost in the task order when the input exceeds
// half of one core's L2 (ScheduleOptions::l2_bytes; L2 reuse of the row across output blocks),
// else output-channel blocks outermost (the input re-read from L2, each kernel block read once).
// The code: conv2d_nchwc_schedule.cc, one function per decision.
//
// depthwise_conv2d_NCHWc, loops n, b, oh, ow, i | ry, rx become
//   parallel(fuse(n, b, oh))                   (data_pad_NCHWc inlined on large maps, see below)
//     owo, i_o                                  tile, channel half (AVX2)
//       init, ry, rx, unroll owi, vectorize i   T accumulators, one input load per FMA
//       epilogue (reverse_compute_at)
// The epilogue (or the cache_write copy-out) sits under the innermost loop outside the
// reduction and its tile loops are unrolled, so the accumulator tile CompactBufferAllocation
// leaves is indexed by constants and SROA keeps it in registers.
//
// The padding stage "data_pad_NCHWc" is left to the default schedule (parallel outer loops,
// vectorized channel lanes), computed into its own buffer before the convolution: per-row
// recomputation would repeat it for every output-channel block of a dense conv. A depthwise conv
// inlines it when the padded input exceeds 512 KiB or the stride is 2 (the extra pass over a map
// that does not stay in L2 costs more than the convolution's own reads): every load becomes a
// select, and LoopPartition (tir/transform/loop_partition.h) splits the tile and kernel-row
// loops into border and interior, the interior with plain loads. A strided 1x1 conv reads the
// "data_subsample_NCHWc" stage (topi/nn/conv2d_nchwc.h), also kept as a stage.
#pragma once

#include <set>
#include <string>

#include "tessera/tir/schedule/schedule.h"
#include "tessera/topi/nn/conv2d_nchwc.h"
#include "tessera/topi/x86/schedule.h"

namespace tessera::topi::x86 {

/// Schedules the first conv2d_NCHWc / depthwise_conv2d_NCHWc block of `sch` (and its
/// epilogue block). Returns the names of the blocks it scheduled; empty when the function has
/// no such block. Every step is a checked primitive; one the library refuses is skipped.
std::set<std::string> ScheduleConv2dNCHWc(tir::Schedule& sch, const ScheduleOptions& options);

/// ScheduleConv2dNCHWc as an anchor schedule, keeping the KeepAsStage stages.
AnchorSchedule Conv2dNCHWcAnchor();

/// The output-width tile of the micro-kernel for an output width `ow`, at most max_tile (or a
/// little more when ow itself fits): a divisor of ow in (max_tile/2, max_tile], else ow when
/// ow <= 1.5 max_tile, else a divisor >= 4, else max_tile (predicated).
int64_t ConvOwTile(int64_t ow, int64_t max_tile);

/// The register tile of the conv micro-kernel: `oh_tile` output rows x `ow_tile` output pixels
/// x `oc_vectors` vectors of output channels.
struct ConvTile {
  int64_t oh_tile = 1;
  int64_t ow_tile = 1;
  int64_t oc_vectors = 1;
};

/// The register tile for an output of oh x ow pixels, an output-channel block of `oc_block`
/// channels, `lanes` float32 lanes per vector register and `registers` vector registers.
///  * oc_block == V lanes with 2 <= V <= 4 and P = (registers - V - 1) / V >= 12 pixels of V
///    accumulators beside V kernel vectors and a broadcast (AVX-512 with NCHW32c: V = 2, P = 14):
///    1 x T x V with T the largest divisor of ow in [P / 2, P]; else 2 rows x T (T in [P / 4, P / 2]
///    dividing ow) when 2 | oh; else 1 x P with a tail when ow >= P. Per input channel T + 2 loads
///    feed 2T FMAs (1 x 14 x 1 zmm: 15 loads for 14 FMAs, bound by the loads). 1x1 convs, 1 thread,
///    chains of 20 / 10 in one library: 1024 -> 1024 at 14x14 (2 rows x 3 x 2 before) 1.95 -> 1.88
///    ms per conv; 512 <-> 2048 at 7x7 (1 x 7 x 1) 0.61 -> 0.53; 64 <-> 256 at 56x56 (1 x 6 x 2)
///    0.47 -> 0.45. Otherwise:
///  * oc_block == V lanes with V = 2 or 4 and registers >= 7 V + 1 (AVX2 with NCHW16c: V = 2 of
///    16 ymm; NEON with NCHW16c: V = 4 of 32 q registers): the tiles below with V vectors instead
///    of 2 (6 x 4 q accumulators + 4 kernel vectors + 1 broadcast = 29 NEON registers).
///    For AVX2: 1 x T x 2 ymm accumulators
///    (12 / 10 / 8) + 2 kernel vectors + 1 broadcast; per input channel T + 2 loads feed 2T FMAs
///    (a T x 1 tile needs T + 1 loads for T FMAs). T = 6 or 5 when it divides ow; else 6 when
///    ow >= 24, with a tail of ow % 6 pixels (56, 28, 112): 12 accumulators leave slack over the
///    8 that hide the FMA latency, which 4-pixel tiles do not (1x1 at 56x56: 4.24 -> 3.82 ms,
///    3x3 at 28x28: 3.29 -> 2.89 ms, medians of alternated runs); else T = 4 when it divides.
///    Measured on 56x56 / 28x28 / 40x40 3x3 convs: 87-100 GFLOP/s against 72-84 for 14 x 1.
///  * else, with 2 | oh: 2 rows x 3 x 2 ymm when ow >= 6, with a tail of ow % 3 pixels (14x14:
///    3x3 at 14x14x256 2.80 -> 2.67 ms, 1x1 1024 -> 256 1.35 -> 1.27 ms against 2 rows x 2),
///    else 2 rows x 2 x 2 ymm when 2 | ow.
///  * otherwise (AVX-512 with NCHW16c, odd sizes such as 7x7 with 16 registers, depthwise):
///    1 x ConvOwTile(ow, 14) x 1 vector.
///    A 7 x 2-ymm tile needs 17 registers: LLVM spills accumulators (25-45 GFLOP/s).
ConvTile ChooseConvTile(int64_t oh, int64_t ow, int64_t oc_block, int64_t lanes, bool depthwise, int64_t registers = 16);

/// Whether the x86 strategy computes conv2d_NCHWc (data [N, C/c, H, W, c], kernel
/// [K/k, C/c, KH, KW, c, k]) through its im2col stage (topi/nn/conv2d_nchwc.h), for `lanes`
/// float32 lanes and `registers` vector registers: a kernel larger than 1x1, k = 2 vector lanes,
/// an output width with no register tile (ChooseConvTile with those registers falls back to one
/// vector: 7x7 on AVX2; AVX-512's 32 registers have 1 x 7 x 2) and an im2col buffer of at most
/// 4 MiB. The schedule then tiles the fused
/// pixel loop 6 x 2 vectors and blocks the reduction over every pixel of an output-channel block:
/// ResNet-50's 3x3 convs at 7x7, stride 1 and 2, 5.3 / 5.7 -> 3.8 / 3.7 ms.
bool UseIm2colConv(const std::vector<int64_t>& data_shape, const std::vector<int64_t>& kernel_shape,
                   const Conv2DParams& p, int64_t lanes, int64_t registers = 16);

/// The NCHWc blocks (float32 channels) a tuner may choose for a model on `target`, ascending:
/// BlockLanes(target) and twice it when the conv's register tile takes the wider block's vectors
/// (ChooseConvTile gives a tile of several vectors for it; AVX-512: 16 and 32, a block of two zmm
/// registers as AVX2's NCHW16c has two ymm); else empty (AVX2, NEON: the one block).
std::vector<int64_t> LayoutBlockCandidates(const target::Target& target);

/// The Winograd output tiles m (topi/nn/winograd.h) a conv2d_NCHWc (data [N, C/c, H, W, c], kernel
/// [K/k, C/g/c, KH, KW, c, k]) can take, ascending, of {2, 4}; empty when it cannot take any: a
/// 3x3, stride-1 conv with equal dilations and groups whose channels are whole blocks (below),
/// whose tiles hold at most twice its outputs and whose transformed input / product fits in 64
/// MiB. What the tuner chooses from (WinogradConv2d's knob, graph_lower/winograd_conv2d.h), with 0.
std::vector<int64_t> WinogradTileCandidates(const std::vector<int64_t>& data_shape,
                                            const std::vector<int64_t>& kernel_shape, const Conv2DParams& p);

/// The least output channels per group (K/g) for which a grouped conv (g > 1) takes Winograd by
/// default. A group's GEMM then does K/g multiply-adds per transformed input value; with fewer, the
/// transformed input and product (16/4 x the input and output for F(2x2)) cost more memory traffic
/// than the multiply-adds Winograd saves. ResNeXt-101 32x8d in the model, 1 thread, Zen 4
/// (AVX-512): its 22 grouped 3x3 convs at 14x14 (K/g = 32) 37-40 ms with F(2x2) against 26-28
/// direct (ONNX Runtime's direct: 26.7), its two at 7x7 (K/g = 64) 3.7 against 2.6. The tuner's
/// Winograd knob still offers every tile of WinogradTileCandidates.
inline constexpr int64_t kWinogradMinGroupUnits = 128;

/// The Winograd output tile m (topi/nn/winograd.h) the x86 strategy uses for conv2d_NCHWc (data
/// [N, C/c, H, W, c], kernel [K/k, C/g/c, KH, KW, c, k]), or 0 for the direct convolution: m = 2
/// for a 3x3, stride-1 conv with equal dilations d (d x d phases of an undilated conv each,
/// topi/nn/winograd.h) and g groups whose channels are whole blocks (C/g a multiple of c, K/g of
/// k; one GEMM per group), with C/g and K/g >= 32 (and K/g >= kWinogradMinGroupUnits for g > 1), when
///  * the partial tiles of an output that 2 does not divide waste at most a third (7x7: 16 tiles
///    for 49 pixels; d = 4 on 28x28: 16 phases of 4 x 4 tiles for 784 pixels; DeepLabV3's ASPP
///    dilations 12 / 24 / 36 on 28x28 waste more and stay direct),
///  * there are >= 16 tiles (each transformed weight, 16/9 x the direct conv's, feeds >= 16 GEMM
///    rows), and
///  * the transformed input / product (alpha^2 x tiles x g x max(C/g, K/g) floats) is at most 64 MiB.
/// ResNet-50's 3x3 convs with bias + relu, 1 thread: 56x56 / 28x28 / 14x14 alone 3.4 / 3.1 / 3.5
/// -> 1.9 / 1.7 / 1.7 ms; 7x7 in the model 3.2 -> 2.55 ms. super-resolution-10's two 224x224
/// convs (V 49 MiB): the model 1 / 2 threads 85 / 44 -> 70 / 39 ms, peak activation memory
/// 25 -> 98 MiB. F(4x4, 3x3) is not chosen: 2-3 % faster on ResNet-50, but its error on one conv
/// is 10-20x F(2x2)'s (5e-5 against 3e-6 on outputs of magnitude 8); a tuning that measures it
/// faster may choose it (a relative error of ~1e-5 in float32). The environment variable
/// TESSERA_WINOGRAD=0|2|4 overrides the choice (the largest m allowed; experiments).
int64_t WinogradTileSize(const std::vector<int64_t>& data_shape, const std::vector<int64_t>& kernel_shape,
                         const Conv2DParams& p);

/// conv2d_NCHWc as the x86 strategy computes it for `target` (with its im2col stage when
/// UseIm2colConv for the target's float32 lanes).
te::Tensor Conv2dNCHWc(const te::Tensor& data, const te::Tensor& kernel, const Conv2DParams& p,
                       const target::Target& target);

/// Whether a block name is one the default schedule must not inline (the NCHWc padding and
/// strided-1x1 subsampling stages).
bool KeepAsStage(const std::string& block_name);

}  // namespace tessera::topi::x86
