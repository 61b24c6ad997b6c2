// The x86 conv2d_NCHWc strategy: register tiles and the im2col choice (conv2d_nchwc.h). The
// schedule itself is in conv2d_nchwc_schedule.cc.
#include "tessera/topi/x86/conv2d_nchwc.h"

#include <algorithm>
#include <array>
#include <cstdlib>

#include "tessera/topi/nn/winograd.h"
#include "tessera/topi/target_layout.h"
#include "tessera/topi/util.h"

#include "block_util.h"

namespace tessera::topi::x86 {

bool KeepAsStage(const std::string& block_name) {
  return StartsWith(block_name, kNCHWcPadName) || StartsWith(block_name, kNCHWcSubsampleName) ||
         StartsWith(block_name, kNCHWcIm2colName);
}

int64_t ConvOwTile(int64_t ow, int64_t max_tile) {
  for (int64_t t = max_tile; t > max_tile / 2; --t)
    if (ow % t == 0) return t;
  if (ow <= max_tile + max_tile / 2) return ow;
  for (int64_t t = max_tile / 2; t >= 4; --t)
    if (ow % t == 0) return t;
  return max_tile;
}

ConvTile ChooseConvTile(int64_t oh, int64_t ow, int64_t oc_block, int64_t lanes, bool depthwise, int64_t registers) {
  const int64_t v = oc_block / lanes;
  if (!depthwise && oc_block % lanes == 0 && v >= 2 && v <= 4) {
    // With 32 registers and 2 vectors (AVX-512 with NCHW32c) up to 14 pixels fit beside the
    // kernel vectors and a broadcast: a divisor of ow in [max / 2, max], else two rows of one.
    const int64_t max_pixels = (registers - v - 1) / v;
    if (max_pixels >= 12) {
      for (int64_t t = max_pixels; t >= max_pixels / 2; --t)
        if (ow % t == 0) return {1, t, v};
      if (oh % 2 == 0)
        for (int64_t t = max_pixels / 2; t >= max_pixels / 4; --t)
          if (ow % t == 0) return {2, t, v};
      if (ow >= max_pixels) return {1, max_pixels, v};  // a tail of ow % max pixels (LoopPartition)
    }
  }
  if (!depthwise && oc_block % lanes == 0 && (v == 2 || v == 4) && registers >= 7 * v + 1) {
    if (ow % 6 == 0) return {1, 6, v};
    if (ow % 5 == 0) return {1, 5, v};
    if (ow >= 24) return {1, 6, v};  // a tail of ow % 6 pixels, which LoopPartition splits off
    if (ow % 4 == 0) return {1, 4, v};
    if (oh % 2 == 0 && ow >= 6) return {2, 3, v};  // a tail of ow % 3 pixels (LoopPartition)
    if (oh % 2 == 0 && ow % 2 == 0) return {2, 2, v};
  }
  return {1, ConvOwTile(ow, 14), 1};
}

bool UseIm2colConv(const std::vector<int64_t>& ds, const std::vector<int64_t>& ks, const Conv2DParams& p,
                   int64_t lanes, int64_t registers) {
  if (ds.size() != 5 || ks.size() != 6 || p.groups != 1 || ks[2] * ks[3] <= 1) return false;
  if (ks[5] != 2 * lanes) return false;
  const auto [oh, ow] = Conv2DOutHW(ds[2], ds[3], ks[2], ks[3], p);
  if (ChooseConvTile(oh, ow, ks[5], lanes, false, registers).oc_vectors != 1) return false;
  const int64_t bytes = 4 * ks[2] * ks[3] * oh * ow * ds[1] * ds[4];
  return bytes <= 4 * 1024 * 1024;
}

std::vector<int64_t> LayoutBlockCandidates(const target::Target& target) {
  const int64_t block = BlockLanes(target, 32), lanes = target.VectorLanes(32), wide = 2 * block;
  // Whether the conv template has a register tile of several vectors for the wider block (on a
  // 56x56 output, which takes every tile shape's first choice).
  if (ChooseConvTile(56, 56, wide, lanes, false, target.vector_registers).oc_vectors == 1) return {};
  return {block, wide};
}

std::vector<int64_t> WinogradTileCandidates(const std::vector<int64_t>& ds, const std::vector<int64_t>& ks,
                                            const Conv2DParams& p) {
  if (ds.size() != 5 || ks.size() != 6 || p.groups < 1 || ks[2] != 3 || ks[3] != 3) return {};
  if (p.strides != std::array<int64_t, 2>{1, 1} || p.dilation[0] != p.dilation[1] || p.dilation[0] < 1) return {};
  const auto [oh, ow] = Conv2DOutHW(ds[2], ds[3], 3, 3, p);
  if (oh <= 0 || ow <= 0) return {};
  const int64_t d = p.dilation[0];
  // Per group: a group's channels must be whole blocks of the data's and the output's (RegNet's
  // groups of 128 in 16-wide blocks), so each group is its own GEMM over contiguous channels.
  const int64_t groups = p.groups, channels = ds[1] * ds[4] / groups, units = ks[0] * ks[5] / groups;
  if (groups > 1 && ((ds[1] * ds[4]) % groups != 0 || channels % ds[4] != 0 || units % ks[5] != 0 ||
                     (ks[0] * ks[5]) % groups != 0))
    return {};
  std::vector<int64_t> out;
  for (int64_t m : {2, 4}) {
    const WinogradTiling t = WinogradTile(oh, ow, m, d);
    if (d * d * t.th * t.tw * m * m > oh * ow * 2) continue;  // tiles of mostly padding
    const int64_t alpha = m + 2, tiles = t.Tiles(ds[0]);
    const int64_t bytes = 4 * alpha * alpha * tiles * groups * std::max(channels, units);  // V or M
    if (bytes <= 64 * 1024 * 1024) out.push_back(m);
  }
  return out;
}

int64_t WinogradTileSize(const std::vector<int64_t>& ds, const std::vector<int64_t>& ks, const Conv2DParams& p) {
  const std::vector<int64_t> candidates = WinogradTileCandidates(ds, ks, p);
  if (candidates.empty()) return 0;
  const int64_t channels = ds[1] * ds[4] / p.groups, units = ks[0] * ks[5] / p.groups;
  int64_t max_m = 2;  // see the header: F(4x4, 3x3) only on request
  if (const char* env = std::getenv("TESSERA_WINOGRAD")) {  // experiments: 0 (off), 2 or 4
    max_m = std::atoi(env);
  } else if (channels < 32 || units < 32 || (p.groups > 1 && units < kWinogradMinGroupUnits)) {
    return 0;
  }
  const auto [oh, ow] = Conv2DOutHW(ds[2], ds[3], 3, 3, p);
  const int64_t d = p.dilation[0];
  for (int64_t m : {4, 2}) {
    if (m > max_m || std::find(candidates.begin(), candidates.end(), m) == candidates.end()) continue;
    const WinogradTiling t = WinogradTile(oh, ow, m, d);
    if (d * d * t.th * t.tw * m * m * 3 > oh * ow * 4) continue;  // partial tiles waste more than a third
    if (t.Tiles(ds[0]) < 16) continue;  // each transformed weight feeds < 16 GEMM rows: streaming 16/9 x the weights
    return m;
  }
  return 0;
}

te::Tensor Conv2dNCHWc(const te::Tensor& data, const te::Tensor& kernel, const Conv2DParams& p,
                       const target::Target& target) {
  return conv2d_NCHWc(data, kernel, p,
                      UseIm2colConv(ConstShape(data), ConstShape(kernel), p, target.VectorLanes(32), target.vector_registers));
}

}  // namespace tessera::topi::x86
