#include "tessera/topi/x86/conv2d_nchwc.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tessera/ir/op.h"
#include "tessera/tir/functor.h"
#include "tessera/topi/nn/conv2d_nchwc.h"

#include "block_util.h"

namespace tessera::topi::x86 {

namespace {

using tir::BlockRV;
using tir::LoopRV;
using tir::Schedule;
using tir::ScheduleError;

std::vector<const tir::BlockNode*> Blocks(const tir::PrimFunc& f) {
  std::vector<const tir::BlockNode*> blocks;
  for (const auto* r : NonRootRealizes(f)) blocks.push_back(r->block_node());
  return blocks;
}

bool StartsWith(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

int64_t Extent(const Schedule& sch, const LoopRV& l) {
  int64_t v = -1;
  if (!ir::as_const_int(sch.GetFor(l)->extent, &v)) return -1;
  return v;
}

bool ReadsBuffer(const tir::BlockNode* b, const tir::Buffer& buf) {
  for (const auto& r : b->reads)
    if (r.buffer.same_as(buf)) return true;
  return false;
}

bool IsParam(const tir::PrimFunc& f, const tir::Buffer& buf) {
  for (const auto& p : f->params)
    if (buf.same_as(p)) return true;
  return false;
}

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

}  // namespace

bool KeepAsStage(const std::string& block_name) {
  return StartsWith(block_name, kNCHWcPadName) || StartsWith(block_name, kNCHWcSubsampleName) ||
         StartsWith(block_name, kNCHWcIm2colName);
}

int64_t HostVectorLanes() {
#if defined(__x86_64__) || defined(__i386__)
  static const int64_t lanes = __builtin_cpu_supports("avx512f") ? 16 : __builtin_cpu_supports("avx") ? 8 : 4;
  return lanes;
#else
  return 4;
#endif
}

int64_t ConvOwTile(int64_t ow, int64_t max_tile) {
  for (int64_t t = max_tile; t > max_tile / 2; --t)
    if (ow % t == 0) return t;
  if (ow <= max_tile + max_tile / 2) return ow;
  for (int64_t t = max_tile / 2; t >= 4; --t)
    if (ow % t == 0) return t;
  return max_tile;
}

ConvTile ChooseConvTile(int64_t oh, int64_t ow, int64_t oc_block, int64_t lanes, bool depthwise) {
  if (!depthwise && oc_block == 2 * lanes) {
    if (ow % 6 == 0) return {1, 6, 2};
    if (ow % 5 == 0) return {1, 5, 2};
    if (ow >= 24) return {1, 6, 2};  // a tail of ow % 6 pixels, which LoopPartition splits off
    if (ow % 4 == 0) return {1, 4, 2};
    if (oh % 2 == 0 && ow >= 6) return {2, 3, 2};  // a tail of ow % 3 pixels (LoopPartition)
    if (oh % 2 == 0 && ow % 2 == 0) return {2, 2, 2};
  }
  return {1, ConvOwTile(ow, 14), 1};
}

bool UseIm2colConv(const std::vector<int64_t>& ds, const std::vector<int64_t>& ks, const Conv2DParams& p) {
  if (ds.size() != 5 || ks.size() != 6 || p.groups != 1 || ks[2] * ks[3] <= 1) return false;
  const int64_t lanes = HostVectorLanes();
  if (ks[5] != 2 * lanes) return false;
  const auto [oh, ow] = Conv2DOutHW(ds[2], ds[3], ks[2], ks[3], p);
  if (ChooseConvTile(oh, ow, ks[5], lanes, false).oc_vectors != 1) return false;
  const int64_t bytes = 4 * ks[2] * ks[3] * oh * ow * ds[1] * ds[4];
  return bytes <= 4 * 1024 * 1024;
}

te::Tensor Conv2dNCHWc(const te::Tensor& data, const te::Tensor& kernel, const Conv2DParams& p) {
  return conv2d_NCHWc(data, kernel, p, UseIm2colConv(ConstShape(data), ConstShape(kernel), p));
}

std::set<std::string> ScheduleConv2dNCHWc(Schedule& sch, const ScheduleOptions& opt) {
  const tir::BlockNode* conv = nullptr;
  bool depthwise = false;
  for (const tir::BlockNode* b : Blocks(sch.func())) {
    if (StartsWith(b->name_hint, tag::kConv2dNCHWc)) conv = b;
    else if (StartsWith(b->name_hint, tag::kDepthwiseConv2dNCHWc)) conv = b, depthwise = true;
    if (conv) break;
  }
  if (!conv) return {};
  const std::string conv_name = conv->name_hint;
  std::set<std::string> handled = {conv_name};
  // The epilogue: the single block that reads the convolution's (intermediate) output.
  std::string epilogue;
  const tir::Buffer out = conv->writes[0].buffer;
  if (!IsParam(sch.func(), out)) {
    int readers = 0;
    for (const tir::BlockNode* b : Blocks(sch.func()))
      if (b != conv && ReadsBuffer(b, out)) ++readers, epilogue = b->name_hint;
    if (readers != 1) epilogue.clear();
  }

  BlockRV block = sch.get_block(conv_name);
  // The im2col stage this conv reads, if any (UseIm2colConv). Its padding is inlined into it:
  // the stage is a copy anyway, and its selects only cost in the border (LoopPartition).
  std::string im2col;
  for (const tir::BlockNode* b : Blocks(sch.func()))
    if (StartsWith(b->name_hint, kNCHWcIm2colName) && ReadsBuffer(conv, b->writes[0].buffer)) im2col = b->name_hint;
  if (!im2col.empty()) {
    for (const tir::BlockNode* b : Blocks(sch.func())) {
      if (!StartsWith(b->name_hint, kNCHWcPadName)) continue;
      const std::string pad = b->name_hint;
      try {
        sch.compute_inline(sch.get_block(pad));
        handled.insert(pad);
      } catch (const ScheduleError& err) {
        if (std::getenv("TESSERA_DEBUG_SCHEDULE")) std::fprintf(stderr, "im2col padding: %s\n", err.what());
      }
      break;
    }
  }
  if (IsParam(sch.func(), out)) {
    // No epilogue: accumulate in a local tile and copy it out (TVM's cache_write), so the
    // accumulators live in a buffer CompactBufferAllocation shrinks to the register tile.
    try {
      BlockRV wb = sch.cache_write(block, 0, "local");
      epilogue = sch.GetBlock(wb)->name_hint;
    } catch (const ScheduleError& err) {
      if (std::getenv("TESSERA_DEBUG_SCHEDULE")) std::fprintf(stderr, "conv cache_write: %s\n", err.what());
    }
  }
  // Bytes of the (padded) input: the 5-d buffer the conv reads.
  int64_t input_bytes = 0;
  for (const tir::BufferRegion& r : sch.GetBlock(block)->reads) {
    if (r.buffer->shape.size() != 5) continue;
    int64_t b = 4;
    for (const PrimExpr& d : r.buffer->shape) b *= std::max<int64_t>(1, ir::get_const_int(d));
    input_bytes = std::max(input_bytes, b);
  }
  std::vector<LoopRV> loops = sch.get_loops(block);
  const size_t want = depthwise ? 7 : 9;
  if (loops.size() != want) return {};  // not the compute's own loop nest: leave it to the default
  for (const LoopRV& l : loops)
    if (Extent(sch, l) < 0) return {};
  LoopRV n = loops[0], ko = loops[1], oh = loops[2], ow = loops[3], ki = loops[4];
  std::vector<LoopRV> red(loops.begin() + 5, loops.end());
  try {
    const int64_t lanes = HostVectorLanes();
    const int64_t oh_ext = Extent(sch, oh), ow_ext = Extent(sch, ow), ki_ext = Extent(sch, ki);
    ConvTile t = ChooseConvTile(oh_ext, ow_ext, ki_ext, lanes, depthwise);
    int64_t rows = t.oh_tile, tile = t.ow_tile, vecs = t.oc_vectors;
    // TESSERA_CONV_TILE=R,T,V overrides the tile (for experiments; see ChooseConvTile).
    if (const char* e = std::getenv("TESSERA_CONV_TILE")) std::sscanf(e, "%ld,%ld,%ld", &rows, &tile, &vecs);
    if (depthwise || ki_ext % (lanes * vecs) != 0) vecs = 1;
    if (depthwise || rows < 1 || oh_ext % rows != 0) rows = 1;
    // Pixels contiguous across rows: a stride-1 unpadded 1x1 conv reads input[.., oh, ow, ..]
    // itself, an im2col conv (UseIm2colConv) col[.., oh * OW + ow, ..]. With no good tile for OW
    // (7x7) fuse (oh, ow) into one pixel loop and tile that with T x 2 vectors (49 = 8 x 6 + 1;
    // LoopPartition splits off the tail).
    bool pixels_fused = false;
    if (t.oc_vectors == 1 && !depthwise && ki_ext == 2 * lanes && !std::getenv("TESSERA_CONV_TILE")) {
      if (red.size() == 4 && Extent(sch, red[1]) == 1 && Extent(sch, red[2]) == 1) {
        for (const tir::BufferRegion& r : sch.GetBlock(block)->reads) {
          if (r.buffer->shape.size() == 5 && ir::get_const_int(r.buffer->shape[2]) == oh_ext &&
              ir::get_const_int(r.buffer->shape[3]) == ow_ext)
            pixels_fused = true;
        }
      }
      if (!im2col.empty()) pixels_fused = true;
    }
    if (pixels_fused) {
      ow = sch.fuse({oh, ow});
      oh = LoopRV();
      rows = 1, vecs = 2, tile = 6;
      const int64_t pixels = oh_ext * ow_ext;
      for (int64_t c : {6, 5, 4})
        if (pixels % c == 0) {
          tile = c;
          break;
        }
    }
    std::vector<LoopRV> inner;
    if (rows > 1) {
      std::vector<LoopRV> ohs = sch.split(oh, {-1, rows});
      oh = ohs[0];
      inner.push_back(ohs[1]);
    }
    std::vector<LoopRV> ows = sch.split(ow, {-1, tile});
    LoopRV owo = ows[0], owi = ows[1];
    std::vector<LoopRV> order;
    // Reduction blocking: when one output-channel block's kernel (C x R x S x 16 floats) is
    // larger than L1, every tile would stream it from L2; split the channel-block loop so a
    // chunk of the kernel (<= 16 KiB) stays in L1 across all tiles of the row (with fused
    // pixels: of the whole output block), accumulating them in a buffer between chunks.
    LoopRV row_loop = pixels_fused ? ko : oh;
    const int64_t rco_ext = depthwise ? 1 : Extent(sch, red.front());

    int64_t per_block = 4 * ki_ext;
    for (size_t r = 1; r < red.size(); ++r) per_block *= Extent(sch, red[r]);
    int64_t chunk = rco_ext;
    if (!depthwise && rco_ext * per_block > 32 * 1024) {
      chunk = 1;
      for (int64_t d = rco_ext; d >= 1; --d)
        if (rco_ext % d == 0 && d * per_block <= 16 * 1024) {
          chunk = d;
          break;
        }
    }
    if (chunk < rco_ext) {
      std::vector<LoopRV> rcos = sch.split(red.front(), {-1, chunk});
      order.push_back(rcos[0]);
      red.front() = rcos[1];
    }
    order.push_back(owo);
    inner.push_back(owi);
    if (ki_ext > lanes && ki_ext % lanes == 0) {
      std::vector<LoopRV> kis = sch.split(ki, {-1, vecs, lanes});
      order.push_back(kis[0]);
      if (vecs > 1) inner.push_back(kis[1]);
      else order.push_back(kis[1]);
      ki = kis[2];
    }
    inner.push_back(ki);
    // The innermost loop outside the reduction: the epilogue goes there, so the accumulator
    // tile CompactBufferAllocation leaves is exactly the registers' (constant offsets: LLVM's
    // SROA keeps it in registers; an offset in an outer channel-half loop var would not be).
    // With fused pixels the epilogue goes under the output-channel block instead: a tile of
    // the fused loop covers parts of two rows, not a box reverse_compute_at can bound.
    const bool blocked = chunk < rco_ext;
    const LoopRV tile_loop = blocked || pixels_fused ? row_loop : order.back();
    order.insert(order.end(), red.begin(), red.end());
    order.insert(order.end(), inner.begin(), inner.end());
    sch.reorder(order);
    BlockRV init = sch.decompose_reduction(block, blocked ? order.front() : red.front());
    handled.insert(sch.GetBlock(init)->name_hint);
    if (opt.vectorize) {
      sch.vectorize(ki);
      std::vector<LoopRV> il = sch.get_loops(init);
      sch.vectorize(il.back());
    }
    // A tile that does not divide OW leaves a guarded tail, which LoopPartition (LowerToFlat)
    // splits off: the main tiles and the tail are both unrolled and vectorized.
    for (size_t i = 0; i + 1 < inner.size(); ++i) sch.unroll(inner[i]);
    if (!epilogue.empty()) {
      try {
        BlockRV e = sch.get_block(epilogue);
        sch.reverse_compute_at(e, tile_loop);
        handled.insert(epilogue);
        if (opt.vectorize) {
          std::vector<LoopRV> el = sch.get_loops(e);
          const int64_t e_ext = Extent(sch, el.back());
          if (e_ext > 1 && e_ext <= 16) sch.vectorize(el.back());
          // Unroll the epilogue's loops under the tile loop (pixels, channel vectors): constant
          // offsets into the accumulator tile, so it stays in registers.
          const auto* tile_var = sch.GetFor(tile_loop)->loop_var.get();
          size_t first = el.size();
          for (size_t i = 0; i < el.size(); ++i)
            if (sch.GetFor(el[i])->loop_var.get() == tile_var) first = i + 1;
          for (size_t i = first; i + 1 < el.size(); ++i)
            if (Extent(sch, el[i]) > 1 && Extent(sch, el[i]) <= 16) sch.unroll(el[i]);
        }
      } catch (const ScheduleError& err) {
        if (std::getenv("TESSERA_DEBUG_SCHEDULE")) std::fprintf(stderr, "conv epilogue: %s\n", err.what());
        handled.erase(epilogue);  // the default schedule takes it
      }
    }
    // Task order: output-channel blocks outermost reads the whole input once per block; when
    // the input is larger than L2, rows outermost instead keeps a row's input in L2 while every
    // output-channel block of that row runs (1x1 convs on 14x14x1024, 28x28x512: 80 -> 94 GFLOP/s).
    const bool rows_outer = !depthwise && !pixels_fused && input_bytes > 256 * 1024;
    if (rows_outer) sch.reorder({oh, ko});
    LoopRV row = pixels_fused ? sch.fuse({n, ko}) : rows_outer ? sch.fuse({n, oh, ko}) : sch.fuse({n, ko, oh});
    if (opt.parallelize) sch.parallel(row);
    // Depthwise padding. Inlined, every load is a select; LoopPartition (LowerToFlat) splits
    // the tile and kernel-row loops into border and interior, and the interior runs with plain
    // loads (112x112x32: 36 -> 58 GFLOP/s; stride 2 at 112x112x96: 32 -> 42). When the padded
    // input fits in L2 a separate padding pass is cheap and keeps every tile clean: small maps
    // are mostly border (5x5 at 16x16x240: 52 as a stage, 43 inlined).
    const int64_t stride_h = depthwise ? DepthwiseStrideH(sch.GetBlock(block), Extent(sch, red.front())) : 1;
    if (depthwise && (stride_h > 1 || input_bytes > 512 * 1024)) {
      for (const tir::BlockNode* b : Blocks(sch.func())) {
        if (!StartsWith(b->name_hint, kNCHWcPadName) || !ReadsBuffer(sch.GetBlock(block), b->writes[0].buffer)) continue;
        const std::string pad = b->name_hint;
        try {
          sch.compute_inline(sch.get_block(pad));
          handled.insert(pad);
        } catch (const ScheduleError& err) {
          if (std::getenv("TESSERA_DEBUG_SCHEDULE")) std::fprintf(stderr, "depthwise padding: %s\n", err.what());
        }
        break;
      }
    }
  } catch (const ScheduleError& err) {
    // Whatever was applied is a valid schedule of the same computation.
    if (std::getenv("TESSERA_DEBUG_SCHEDULE")) std::fprintf(stderr, "conv schedule: %s\n", err.what());
  }
  return handled;
}

}  // namespace tessera::topi::x86
