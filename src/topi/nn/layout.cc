#include "tessera/topi/nn/layout.h"

#include <cctype>

#include "tessera/support/error.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

int64_t ParseNCHWcBlock(const std::string& layout) {
  if (layout == "NCHW") return 0;
  bool ok = layout.size() > 5 && layout.compare(0, 4, "NCHW") == 0 && layout.back() == 'c';
  int64_t b = 0;
  for (size_t i = 4; ok && i + 1 < layout.size(); ++i) {
    ok = std::isdigit(static_cast<unsigned char>(layout[i])) != 0;
    b = b * 10 + (layout[i] - '0');
  }
  TESSERA_CHECK(ok && b >= 1, "layout '", layout, "' is not NCHW or NCHW<b>c");
  return b;
}

std::string NCHWcLayoutName(int64_t block) {
  return block == 0 ? std::string("NCHW") : "NCHW" + std::to_string(block) + "c";
}

Tensor layout_transform(const Tensor& x, const std::string& src_layout, const std::string& dst_layout,
                        int64_t channels) {
  const int64_t a = ParseNCHWcBlock(src_layout), b = ParseNCHWcBlock(dst_layout);
  std::vector<int64_t> s = ConstShape(x);
  TESSERA_CHECK(s.size() == (a ? 5u : 4u), "layout_transform: input of rank ", s.size(), " is not ", src_layout);
  const int64_t C = channels;
  TESSERA_CHECK(C >= 1 && (a ? (C + a - 1) / a == s[1] && s[4] == a : C == s[1]), "layout_transform: ", channels,
                " channels do not match the ", src_layout, " shape");
  std::vector<int64_t> out = {s[0], b ? (C + b - 1) / b : C, s[2], s[3]};
  if (b) out.push_back(b);
  auto read = [&](const PrimExpr& n, const PrimExpr& c, const PrimExpr& h, const PrimExpr& w) {
    if (!a) return x({n, c, h, w});
    return x({n, ir::floordiv(c, Index(a)), h, w, ir::floormod(c, Index(a))});
  };
  return te::compute(
      MakeShape(out),
      [&](const std::vector<Var>& i) {
        if (!b) return read(i[0], i[1], i[2], i[3]);
        PrimExpr c = i[1] * Index(b) + i[4];
        if (C % b == 0) return read(i[0], c, i[2], i[3]);
        // Padded channels: clamp the read in bounds and select zero.
        PrimExpr cc = ir::min(c, Index(C - 1));
        return ir::select(c < Index(C), read(i[0], cc, i[2], i[3]), ir::make_zero(x.dtype()));
      },
      "T_layout_trans", tag::kInjective);
}

std::vector<float> PackConv2dWeightNCHWc(const float* w, int64_t K, int64_t C, int64_t KH, int64_t KW, int64_t c,
                                         int64_t k) {
  const int64_t Kb = (K + k - 1) / k, Cb = (C + c - 1) / c;
  std::vector<float> out(static_cast<size_t>(Kb * Cb * KH * KW * c * k), 0.0f);
  for (int64_t o = 0; o < K; ++o)
    for (int64_t i = 0; i < C; ++i)
      for (int64_t y = 0; y < KH; ++y)
        for (int64_t x = 0; x < KW; ++x) {
          int64_t dst = ((((o / k * Cb + i / c) * KH + y) * KW + x) * c + i % c) * k + o % k;
          out[dst] = w[((o * C + i) * KH + y) * KW + x];
        }
  return out;
}

std::vector<float> PackDepthwiseWeightNCHWc(const float* w, int64_t C, int64_t KH, int64_t KW, int64_t c) {
  const int64_t Cb = (C + c - 1) / c;
  std::vector<float> out(static_cast<size_t>(Cb * KH * KW * c), 0.0f);
  for (int64_t i = 0; i < C; ++i)
    for (int64_t y = 0; y < KH; ++y)
      for (int64_t x = 0; x < KW; ++x) out[((i / c * KH + y) * KW + x) * c + i % c] = w[(i * KH + y) * KW + x];
  return out;
}

}  // namespace tessera::topi
