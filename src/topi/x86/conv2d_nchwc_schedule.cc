// ScheduleConv2dNCHWc (conv2d_nchwc.h): the x86 schedule of the NCHWc convolutions, one step per
// decision: find the blocks, inline the padding where it belongs, plan the micro-kernel (register
// tile, fused pixels, reduction chunk), tile the loop nest, put the epilogue under the tile,
// and order and parallelize the tasks.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tessera/ir/op.h"
#include "tessera/topi/nn/conv2d_nchwc.h"
#include "tessera/topi/x86/conv2d_nchwc.h"

#include "block_util.h"

namespace tessera::topi::x86 {

namespace {

void Debug(const char* step, const ScheduleError& err) { DebugRefusedStep("conv", step, err); }

/// The blocks the schedule works on (names; empty when absent).
struct ConvBlocks {
  std::string conv;
  bool depthwise = false;
  std::string epilogue;  ///< the single block reading the conv's intermediate output
  std::string im2col;    ///< the im2col stage the conv reads (UseIm2colConv)
  std::string pad;       ///< the padding stage the conv (or its im2col stage) reads
  bool writes_param = false;  ///< the conv writes a parameter: no epilogue
};

std::optional<ConvBlocks> FindConvBlocks(const Schedule& sch) {
  const tir::PrimFunc& f = sch.func();
  const tir::BlockNode* conv = nullptr;
  ConvBlocks cb;
  for (const tir::BlockNode* b : NonRootBlocks(f)) {
    if (StartsWith(b->name_hint, tag::kConv2dNCHWc)) conv = b;
    else if (StartsWith(b->name_hint, tag::kDepthwiseConv2dNCHWc)) conv = b, cb.depthwise = true;
    if (conv) break;
  }
  if (!conv) return std::nullopt;
  cb.conv = conv->name_hint;
  const tir::Buffer out = conv->writes[0].buffer;
  cb.writes_param = IsParam(f, out);
  if (!cb.writes_param) cb.epilogue = SoleReader(f, conv);
  const tir::BlockNode* reader = conv;
  for (const tir::BlockNode* b : NonRootBlocks(f))
    if (StartsWith(b->name_hint, kNCHWcIm2colName) && ReadsBuffer(conv, b->writes[0].buffer))
      cb.im2col = b->name_hint, reader = b;
  for (const tir::BlockNode* b : NonRootBlocks(f))
    if (StartsWith(b->name_hint, kNCHWcPadName) && ReadsBuffer(reader, b->writes[0].buffer)) cb.pad = b->name_hint;
  return cb;
}

/// Bytes of the largest 5-d buffer a block reads (the conv's padded input).
int64_t InputBytes(const tir::BlockNode* b) {
  int64_t bytes = 0;
  for (const tir::BufferRegion& r : b->reads) {
    if (r.buffer->shape.size() != 5) continue;
    int64_t n = 4;
    for (const PrimExpr& d : r.buffer->shape) n *= std::max<int64_t>(1, ir::get_const_int(d));
    bytes = std::max(bytes, n);
  }
  return bytes;
}

/// Whether the dense conv's tasks go rows outermost (each row's input stays in L2 while every
/// output-channel block of the row runs; the kernel is read once per row) rather than
/// output-channel blocks outermost (each block's kernel stays in cache while every row runs; the
/// input is read once per block, from L2 when it fits there): rows outermost when the input does
/// not fit in half of one core's L2. Measured: the 1x1 convs on 14x14x1024 and 28x28x512 with a
/// 512 KiB L2, rows outermost, 80 -> 94 GFLOP/s; with a 2 MiB L2 (Intel Xeon, AVX-512, 1 thread)
/// blocks outermost, ResNet-50's 3x3 512 -> 512 conv at stride 2 (a 512 KiB input, a 9 MiB kernel
/// that rows outermost streamed once per row) 58 -> 97 GFLOP/s, its 1x1 2048 -> 512 at 7x7 57 ->
/// 94, the whole model 60.0 -> 55.4 ms.
bool RowsOuter(int64_t input_bytes, int64_t l2_bytes) { return input_bytes > l2_bytes / 2; }

/// The vertical stride of a depthwise block: its (padded) input height Hp, output height OH and
/// kernel height KH satisfy Hp = (OH - 1) * s + KH (+ slack below the last window).
int64_t DepthwiseStrideH(const tir::BlockNode* b, int64_t kh) {
  int64_t hp = 0, oh = 0;
  for (const auto& r : b->reads)
    if (r.buffer->shape.size() == 5) hp = std::max(hp, ir::get_const_int(r.buffer->shape[2]));
  if (!b->writes.empty() && b->writes[0].buffer->shape.size() == 5) oh = ir::get_const_int(b->writes[0].buffer->shape[2]);
  if (oh <= 1 || hp < kh) return 1;
  return std::max<int64_t>(1, (hp - kh) / (oh - 1));
}

/// Inlines the padding stage `pad` into its reader; on refusal it stays a stage.
void InlinePadding(Schedule& sch, const std::string& pad, std::set<std::string>* handled) {
  if (pad.empty()) return;
  try {
    sch.compute_inline(sch.get_block(pad));
    handled->insert(pad);
  } catch (const ScheduleError& err) {
    Debug("padding", err);
  }
}

/// Whether the padding goes into the loads of its reader:
///  * an im2col stage: it is a copy anyway, and its selects only cost in the border;
///  * a depthwise conv at stride 2, or with a padded input over 512 KiB: every load becomes a
///    select, which LoopPartition (LowerToFlat) splits into border and interior (112x112x32:
///    36 -> 58 GFLOP/s; stride 2 at 112x112x96: 32 -> 42). When the padded input fits in L2 a
///    separate padding pass is cheap and keeps every tile clean: small maps are mostly border
///    (5x5 at 16x16x240: 52 as a stage, 43 inlined).
///  * a dense conv keeps its stage: recomputed per tile it would repeat for every output block.
bool InlinesPadding(const ConvBlocks& cb, const tir::BlockNode* conv, int64_t kh, int64_t input_bytes) {
  if (!cb.im2col.empty()) return true;
  if (!cb.depthwise) return false;
  return DepthwiseStrideH(conv, kh) > 1 || input_bytes > 512 * 1024;
}

/// The loops of the conv block: n, ko, oh, ow, ki | reduction (rco, ry, rx, rci; depthwise ry, rx).
struct ConvLoops {
  LoopRV n, ko, oh, ow, ki;
  std::vector<LoopRV> red;
};

/// The micro-kernel: `rows` x `tile` output pixels x `vecs` channel vectors of accumulators;
/// `pixels_fused`: (oh, ow) fused into one pixel loop first; the reduction's channel-block loop
/// split into chunks of `chunk` blocks when that is below its extent.
struct ConvPlan {
  int64_t rows = 1, tile = 1, vecs = 1;
  bool pixels_fused = false;
  int64_t chunk = 0;
  bool blocked() const { return chunk > 0; }
};

ConvPlan PlanConv(const Schedule& sch, const BlockRV& block, const ConvLoops& l, const ConvBlocks& cb,
                  const ScheduleOptions& opt) {
  const int64_t lanes = opt.register_lanes;
  const int64_t oh = ConstExtent(sch, l.oh), ow = ConstExtent(sch, l.ow), ki = ConstExtent(sch, l.ki);
  const ConvTile t = ChooseConvTile(oh, ow, ki, lanes, cb.depthwise, opt.vector_registers);
  ConvPlan plan{t.oh_tile, t.ow_tile, t.oc_vectors};
  // TESSERA_CONV_TILE=R,T,V overrides the tile (for experiments; see ChooseConvTile).
  const char* forced = std::getenv("TESSERA_CONV_TILE");
  if (forced) std::sscanf(forced, "%ld,%ld,%ld", &plan.rows, &plan.tile, &plan.vecs);
  if (cb.depthwise || ki % (lanes * plan.vecs) != 0) plan.vecs = 1;
  if (cb.depthwise || plan.rows < 1 || oh % plan.rows != 0) plan.rows = 1;
  // Pixels contiguous across rows: a stride-1 unpadded 1x1 conv reads input[.., oh, ow, ..]
  // itself, an im2col conv col[.., oh * OW + ow, ..]. When the rows give no tile that fills the
  // registers, fuse (oh, ow) into one pixel loop and tile it with T x 2 vectors, T up to the
  // registers' `max_pixels` (AVX2 at 7x7: no 2-vector tile, 49 = 8 x 6 + 1; AVX-512 with 32
  // registers at 7x7: 7 x 2 of 28 accumulators, fused 14 x 2, 49 = 3 x 14 + 7: ResNet-50's
  // stage-4 1x1 convs on a Xeon 9.0 -> 8.1 ms at 1 thread, 5.5 -> 5.1 at 2). LoopPartition
  // splits off the tail. Knob `fuse_pixels` (0: the row tile of ChooseConvTile).
  const int64_t max_pixels = std::max<int64_t>((opt.vector_registers - 3) / 2, 1);
  const bool fills_registers = t.oc_vectors == 2 && 2 * t.oh_tile * t.ow_tile > max_pixels;
  bool contiguous_pixels = !cb.im2col.empty();
  if (!cb.depthwise && l.red.size() == 4 && ConstExtent(sch, l.red[1]) == 1 && ConstExtent(sch, l.red[2]) == 1) {
    for (const tir::BufferRegion& r : sch.GetBlock(block)->reads)
      if (r.buffer->shape.size() == 5 && ir::get_const_int(r.buffer->shape[2]) == oh &&
          ir::get_const_int(r.buffer->shape[3]) == ow)
        contiguous_pixels = true;
  }
  if (contiguous_pixels && !cb.depthwise && ki == 2 * lanes && !forced)
    plan.pixels_fused = Knob(opt.knobs, cb.conv + ".fuse_pixels", {0, 1}, fills_registers ? 0 : 1) != 0;
  if (plan.pixels_fused) {
    // The largest tile in [2/3 max, max] dividing the pixels, else max with a tail.
    plan.rows = 1, plan.vecs = 2, plan.tile = max_pixels;
    for (int64_t c = max_pixels; 3 * c >= 2 * max_pixels; --c)
      if ((oh * ow) % c == 0) {
        plan.tile = c;
        break;
      }
  }
  // The tuning knobs of the register tile (schedule_knobs.h); the values above are the fallbacks.
  KnobContext* knobs = opt.knobs;
  if (plan.pixels_fused) {
    std::vector<int64_t> tiles;
    for (int64_t t = 2; t <= std::max<int64_t>(8, max_pixels); ++t) tiles.push_back(t);
    plan.tile = Knob(knobs, cb.conv + ".pixel_tile", tiles, plan.tile);
  } else {
    std::vector<int64_t> tiles;
    for (int64_t t = 1; t <= std::min<int64_t>(ow, 16); ++t) tiles.push_back(t);
    plan.tile = Knob(knobs, cb.conv + ".ow_tile", tiles, plan.tile);
    if (!cb.depthwise && ki % lanes == 0)
      plan.vecs = Knob(knobs, cb.conv + ".oc_vectors", DivisorsInRange(ki / lanes, 1, 4), plan.vecs);
    if (!cb.depthwise && oh % 2 == 0) plan.rows = Knob(knobs, cb.conv + ".oh_tile", {1, 2}, plan.rows);
  }
  // Reduction blocking: when one output-channel block's kernel (C x R x S x 16 floats) is
  // larger than L1, every tile would stream it from L2; split the channel-block loop so a chunk
  // of the kernel (<= 16 KiB) stays in L1 across all tiles of the row (with fused pixels: of the
  // whole output block), accumulating them in a buffer between chunks.
  if (!cb.depthwise) {
    const int64_t rco = ConstExtent(sch, l.red.front());
    int64_t per_block = 4 * ki;
    for (size_t r = 1; r < l.red.size(); ++r) per_block *= ConstExtent(sch, l.red[r]);
    if (rco > 1 && rco * per_block > 32 * 1024) {
      plan.chunk = 1;
      for (int64_t d = rco - 1; d >= 1; --d)
        if (rco % d == 0 && d * per_block <= 16 * 1024) {
          plan.chunk = d;
          break;
        }
    }
    // 0: no blocking.
    std::vector<int64_t> chunks = DivisorsInRange(rco, 1, rco - 1);
    chunks.push_back(0);
    if (rco > 1) plan.chunk = Knob(knobs, cb.conv + ".reduction_chunk", chunks, plan.chunk);
  }
  return plan;
}

/// Applies the plan to the conv's loops: splits, the micro-kernel order (tiles, then the
/// reduction, then the unrolled tile loops and the vectorized channel lanes), the init block.
/// Returns the loop the epilogue goes under: the innermost loop outside the reduction, so the
/// accumulator tile CompactBufferAllocation leaves is the registers' (constant offsets: SROA
/// keeps it in registers); with reduction blocking or fused pixels the row / output-channel
/// block loop (a tile of the fused loop covers parts of two rows, not a box).
LoopRV TileConv(Schedule& sch, const BlockRV& block, ConvLoops& l, const ConvPlan& plan, const ScheduleOptions& opt,
                std::set<std::string>* handled) {
  const int64_t lanes = opt.register_lanes;
  if (plan.pixels_fused) {
    l.ow = sch.fuse({l.oh, l.ow});
    l.oh = LoopRV();
  }
  std::vector<LoopRV> order, inner;
  if (plan.rows > 1) {
    std::vector<LoopRV> ohs = sch.split(l.oh, {-1, plan.rows});
    l.oh = ohs[0];
    inner.push_back(ohs[1]);
  }
  std::vector<LoopRV> ows = sch.split(l.ow, {-1, plan.tile});
  std::vector<LoopRV> red = l.red;
  if (plan.blocked()) {
    std::vector<LoopRV> rcos = sch.split(red.front(), {-1, plan.chunk});
    order.push_back(rcos[0]);
    red.front() = rcos[1];
  }
  order.push_back(ows[0]);
  inner.push_back(ows[1]);
  LoopRV ki = l.ki;
  const int64_t ki_ext = ConstExtent(sch, ki);
  if (ki_ext > lanes && ki_ext % lanes == 0) {
    std::vector<LoopRV> kis = sch.split(ki, {-1, plan.vecs, lanes});
    order.push_back(kis[0]);
    if (plan.vecs > 1) inner.push_back(kis[1]);
    else order.push_back(kis[1]);
    ki = kis[2];
  }
  inner.push_back(ki);
  const LoopRV row_loop = plan.pixels_fused ? l.ko : l.oh;
  const LoopRV tile_loop = plan.blocked() || plan.pixels_fused ? row_loop : order.back();
  order.insert(order.end(), red.begin(), red.end());
  order.insert(order.end(), inner.begin(), inner.end());
  sch.reorder(order);
  BlockRV init = sch.decompose_reduction(block, plan.blocked() ? order.front() : red.front());
  handled->insert(sch.GetBlock(init)->name_hint);
  if (opt.vectorize) {
    sch.vectorize(ki);
    sch.vectorize(sch.get_loops(init).back());
  }
  // A tile that does not divide OW leaves a guarded tail, which LoopPartition (LowerToFlat)
  // splits off: the main tiles and the tail are both unrolled and vectorized.
  for (size_t i = 0; i + 1 < inner.size(); ++i) sch.unroll(inner[i]);
  return tile_loop;
}

/// One parallel task per (output-channel block, output row), or per output-channel block with
/// fused pixels; `rows_outer` (RowsOuter): rows outermost.
void ParallelizeTasks(Schedule& sch, const ConvLoops& l, const ConvPlan& plan, bool rows_outer,
                      const ScheduleOptions& opt) {
  if (rows_outer) sch.reorder({l.oh, l.ko});
  LoopRV row = plan.pixels_fused ? sch.fuse({l.n, l.ko}) : rows_outer ? sch.fuse({l.n, l.oh, l.ko})
                                                                      : sch.fuse({l.n, l.ko, l.oh});
  if (opt.parallelize) sch.parallel(row);
}

}  // namespace

std::set<std::string> ScheduleConv2dNCHWc(Schedule& sch, const ScheduleOptions& opt) {
  std::optional<ConvBlocks> cb = FindConvBlocks(sch);
  if (!cb) return {};
  std::set<std::string> handled = {cb->conv};
  BlockRV block = sch.get_block(cb->conv);
  if (cb->writes_param) {
    // No epilogue: accumulate in a local tile and copy it out (TVM's cache_write), so the
    // accumulators live in a buffer CompactBufferAllocation shrinks to the register tile.
    try {
      cb->epilogue = sch.GetBlock(sch.cache_write(block, 0, "local"))->name_hint;
    } catch (const ScheduleError& err) {
      Debug("cache_write", err);
    }
  }
  const int64_t input_bytes = InputBytes(sch.GetBlock(block));
  std::vector<LoopRV> loops = sch.get_loops(block);
  if (loops.size() != (cb->depthwise ? 7u : 9u)) return {};  // not the compute's own nest: the default
  for (const LoopRV& l : loops)
    if (ConstExtent(sch, l) < 0) return {};
  ConvLoops l{loops[0], loops[1], loops[2], loops[3], loops[4], {loops.begin() + 5, loops.end()}};
  bool inline_pad = InlinesPadding(*cb, sch.GetBlock(block), ConstExtent(sch, l.red.front()), input_bytes);
  if (!cb->pad.empty() && cb->im2col.empty())
    inline_pad = Knob(opt.knobs, cb->conv + ".inline_pad", {0, 1}, inline_pad) != 0;
  try {
    const ConvPlan plan = PlanConv(sch, block, l, *cb, opt);
    const LoopRV tile_loop = TileConv(sch, block, l, plan, opt, &handled);
    if (FuseEpilogue(sch, cb->epilogue, tile_loop, opt, "conv")) handled.insert(cb->epilogue);
    bool rows_outer = !cb->depthwise && !plan.pixels_fused && RowsOuter(input_bytes, opt.l2_bytes);
    if (!cb->depthwise && !plan.pixels_fused) rows_outer = Knob(opt.knobs, cb->conv + ".rows_outer", {0, 1}, rows_outer) != 0;
    ParallelizeTasks(sch, l, plan, rows_outer, opt);
    if (inline_pad) InlinePadding(sch, cb->pad, &handled);
  } catch (const ScheduleError& err) {
    Debug("schedule", err);  // whatever was applied is a valid schedule of the same computation
  }
  return handled;
}

AnchorSchedule Conv2dNCHWcAnchor() { return {"conv2d_NCHWc", ScheduleConv2dNCHWc, KeepAsStage}; }

}  // namespace tessera::topi::x86
