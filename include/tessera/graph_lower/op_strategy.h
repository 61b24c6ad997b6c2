// Op strategies (TVM's relay.op.strategy, TVM paper §3 / §5): for every graph op and target, the
// implementations that may compute it, each a compute plus the template schedule of its blocks,
// with a priority (plevel) and a condition on the call (attrs, shapes, dtypes, the target's
// features). LowerToTE asks the table for every call of a primitive function; the schedules of
// the implementations it chose are applied to their blocks, and the default schedule
// (topi/x86/schedule.h) to the rest.
//
// Lookup: implementations are registered under a target key. A target's keys (target/target.h:
// {"cpu", "x86"}, {"cpu", "arm"}, {"cpu"}) and "generic" are searched together; among the
// implementations whose condition holds, the highest plevel wins (ties: the most specific key,
// then the first registered). An op without any registered implementation uses its FCompute from
// the op registry (graph_lower/compute_registry.h) as "<op>.generic", scheduled by the default
// schedule alone: every op with a compute lowers on every target.
//
// Registered (src/graph_lower/strategy/), implementation (plevel; condition):
//   cpu      nn.contrib_conv2d_NCHWc   conv2d_NCHWc.cpu (10; groups 1),
//                                      depthwise_conv2d_NCHWc.cpu (10; groups > 1)
//            nn.dense                  dense_pack.cpu (10)
//            nn.matmul                 matmul_pack.cpu (10; B a matrix, or batched with A >= 2-D;
//                                      symbolic M, N, K when batched with static batch dims)
//            nn.batch_matmul           batch_matmul_pack.cpu (10; 3-D operands, static batch; symbolic
//                                      M, N, K)
//            nn.contrib_dense_pack     gemm_packed.cpu takes a symbolic row count
//            nn.contrib_dense_pack, nn.contrib_batch_matmul_pack     gemm_packed.cpu (10)
//            nn.contrib_conv2d_winograd_{input,output}_transform     winograd.cpu (10)
//   x86      nn.contrib_conv2d_NCHWc   conv2d_NCHWc_im2col.x86 (20; topi::x86::UseIm2colConv)
//   generic  every op with an FCompute <op>.generic (0)
// AArch64 (keys cpu, arm) gets the cpu templates at NEON's widths: 16-channel blocks of 4 q
// registers, conv tiles of 6 pixels x 4 vectors and GEMM tiles of mr x 4 vectors within its 32
// registers (topi::x86::ChooseConvTile / ChooseGemmTile read the target's register count).
//
// The layout rewrites ask the same table through the target (TargetRewrites, RewritesFor):
// AlterOpLayout's NCHWc block, WinogradConv2d's tile (0: the direct convolution), PackGemmWeights'
// GEMM tile and the schedules' widths, each registered per key; the most specific key that sets a
// field wins. generic: the cache-line block (topi::BlockLanes), no Winograd, ChooseGemmTile,
// ScheduleOptionsFor; x86: Winograd F(2x2, 3x3) where topi::x86::WinogradTileSize picks it, and
// the tiles a tuner may choose instead (topi::x86::WinogradTileCandidates); the blocks a tuner
// may choose (topi::x86::LayoutBlockCandidates: 2 vectors per block beside the cache line's one
// where the conv's register tile takes them, AVX-512).
//
// Symbolic shapes (dynamic shapes, graph::Dim::Symbolic): a call whose argument tensors or output
// type have a symbolic extent considers only the implementations marked `symbolic_shapes`, then the
// op's FCompute ("<op>.generic", scheduled by the default schedule, which handles symbolic extents).
//
// Errors: Register throws InternalError for an empty name or compute; Select throws
// UnsupportedError naming the op and the target when the op has neither an implementation whose
// condition holds nor an FCompute.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/graph/attrs.h"
#include "tessera/graph/type.h"
#include "tessera/target/target.h"
#include "tessera/te/tensor.h"
#include "tessera/topi/nn/conv2d_nchwc.h"
#include "tessera/topi/nn/dense_pack.h"
#include "tessera/topi/x86/schedule.h"

namespace tessera::graph_lower {

/// One call as an implementation sees it: attrs, the arguments' TE tensors (static extents, or
/// int32 ir::Vars named after the graph's symbolic dims), the call's checked output type, and the
/// target being compiled for.
struct StrategyCall {
  const graph::Attrs& attrs;
  const std::vector<te::Tensor>& inputs;
  const graph::Type& out_type;
  const target::Target& target;
};

/// One way to compute an op (TVM's OpImplementation).
struct OpImplementation {
  std::string name;  ///< "<compute>.<key>", e.g. "conv2d_NCHWc.x86"
  int plevel = 10;   ///< priority among the implementations whose condition holds
  /// Whether it applies to the call (shapes, dtypes, attrs, target features). Empty: always.
  std::function<bool(const StrategyCall&)> condition;
  /// The TE compute: the output tensors, which must match the call's output type.
  std::function<std::vector<te::Tensor>(const StrategyCall&)> compute;
  /// The template schedule of the compute's blocks; none: the default schedule alone.
  std::optional<topi::x86::AnchorSchedule> schedule;
  /// Whether compute and schedule take symbolic extents; a call with any is given only such
  /// implementations (or the op's FCompute).
  bool symbolic_shapes = false;
};

/// Whether the call's argument tensors or its output type have a symbolic (non-constant) extent.
bool HasSymbolicShapes(const StrategyCall& call);

/// The decisions of the target-dependent rewrites (TVM's generic_func dispatch on target keys).
struct TargetRewrites {
  /// AlterOpLayout's NCHWc output-channel block for float32 (topi::BlockLanes).
  std::function<int64_t(const target::Target&)> layout_block;
  /// The blocks a tuner may choose from instead (the model-wide knob kLayoutBlockKnob), ascending,
  /// e.g. {16, 32}; the widest is also the block of wide convs (kWideBlockMinChannels). Empty (or
  /// unset): the block is not a knob and every conv takes layout_block.
  std::function<std::vector<int64_t>(const target::Target&)> layout_blocks;
  /// WinogradConv2d's output tile m for an NCHWc conv (data [N, C/c, H, W, c], kernel
  /// [K/k, C/c, KH, KW, c, k]); 0 keeps the direct convolution.
  std::function<int64_t(const std::vector<int64_t>& data, const std::vector<int64_t>& kernel,
                        const topi::Conv2DParams& p, const target::Target&)>
      winograd_tile;
  /// The tiles a tuner may choose from for that conv besides the direct convolution (0), e.g.
  /// {2, 4}; empty (or unset): none, winograd_tile's choice is not a knob.
  std::function<std::vector<int64_t>(const std::vector<int64_t>& data, const std::vector<int64_t>& kernel,
                                      const topi::Conv2DParams& p, const target::Target&)>
      winograd_tiles;
  /// The packed GEMM's register tile for an M x N x K float32 product.
  std::function<topi::GemmPackTile(int64_t m, int64_t n, int64_t k, const target::Target&)> gemm_tile;
  /// The widths and switches of the schedules.
  std::function<topi::x86::ScheduleOptions(const target::Target&)> schedule_options;
};

/// The knob of AlterOpLayout's block (TargetRewrites::layout_blocks): one per model, every conv but
/// the wide ones (kWideBlockMinChannels) and its neighbours blocked alike (tune/rewrite_choice.h
/// decides it).
inline constexpr const char* kLayoutBlockKnob = "AlterOpLayout.block";

/// Where the target lists several blocks, a conv of at least this many output channels (a multiple
/// of the widest block) takes the widest (AlterOpLayoutOptions::wide_block), the others the
/// model's block: AVX-512's 32-channel blocks hold 14 x 2 zmm register tiles, which lifts wide 1x1
/// convs (1024 -> 1024 at 14x14: 2.12 -> 1.88 ms, 1 thread), while narrow layers padded to 32
/// channels lose (ultraface-rfb-320 with every block 32: 1.55 -> 2.25 ms; with this rule 1.60).
inline constexpr int64_t kWideBlockMinChannels = 256;

/// The knob of that threshold, one per model beside kLayoutBlockKnob: kWideBlockMinChannels (the
/// fallback) or 0 (no conv takes the wide block).
inline constexpr const char* kWideBlockKnob = "AlterOpLayout.wide_min_channels";

class OpStrategyTable {
 public:
  /// The process-wide table with the generic, cpu, x86 and arm strategies registered.
  static OpStrategyTable& Global();

  /// Adds `impl` for `op` under `target_key` ("generic", "cpu", "x86", "arm", ...).
  void Register(const std::string& op, const std::string& target_key, OpImplementation impl);
  /// Sets the rewrites' decisions for `target_key`; a field left empty falls through to a less
  /// specific key.
  void RegisterRewrites(const std::string& target_key, TargetRewrites rewrites);

  /// The implementations registered for `op` under the target's keys or "generic", best first
  /// (plevel, then key specificity, then registration order), conditions not evaluated.
  std::vector<std::pair<std::string, const OpImplementation*>> Implementations(const std::string& op,
                                                                                const target::Target& target) const;
  /// The implementation the call gets (see the header comment).
  OpImplementation Select(const std::string& op, const StrategyCall& call) const;
  /// The rewrites' decisions for the target: each field from its most specific key that sets it.
  TargetRewrites RewritesFor(const target::Target& target) const;

 private:
  struct Entry {
    std::string key;
    OpImplementation impl;
  };
  std::map<std::string, std::vector<Entry>> impls_;
  std::map<std::string, TargetRewrites> rewrites_;
};

/// OpStrategyTable::Global().RewritesFor(target).
TargetRewrites RewritesFor(const target::Target& target);

}  // namespace tessera::graph_lower
