#include "tessera/topi/nn/winograd.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string>

#include "tessera/support/error.h"
#include "tessera/topi/nn/conv2d_nchwc.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

namespace {

// sum_t coef[t] * term(t) with zero coefficients left out and +-1 ones as additions.
PrimExpr LinearCombination(const std::vector<double>& coef, const std::function<PrimExpr(size_t)>& term,
                           DataType dtype) {
  PrimExpr sum;
  for (size_t t = 0; t < coef.size(); ++t) {
    const double c = coef[t];
    if (c == 0.0) continue;
    PrimExpr x = term(t);
    const bool neg = c < 0;
    if (c != 1.0 && c != -1.0) x = x * ir::make_const(dtype, neg ? -c : c);
    if (!sum.defined()) sum = neg ? -x : x;
    else sum = neg ? sum - x : sum + x;
  }
  return sum.defined() ? sum : ir::make_zero(dtype);
}

// select(index == 0, cases[0], select(index == 1, cases[1], ... cases[n - 1])): after a schedule
// unrolls the loop of `index`, the simplifier keeps one case per copy.
PrimExpr SelectCase(const PrimExpr& index, const std::vector<PrimExpr>& cases) {
  PrimExpr out = cases.back();
  for (size_t i = cases.size() - 1; i-- > 0;)
    out = ir::select(index == Index(static_cast<int64_t>(i)), cases[i], out);
  return out;
}

// The coefficients of the 2-D transform X^T d X for output (r, s): X^T[r, i] * X^T[s, j] over
// the a x a tile (i, j), row-major; X^T is [rows, a].
std::vector<double> OuterRow(const std::vector<double>& xt, int64_t a, int64_t r, int64_t s) {
  std::vector<double> c(static_cast<size_t>(a * a));
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < a; ++j) c[i * a + j] = xt[r * a + i] * xt[s * a + j];
  return c;
}

}  // namespace

WinogradMatrices Winograd3x3(int64_t m) {
  WinogradMatrices w;
  w.m = m;
  w.alpha = m + 2;
  if (m == 2) {
    w.AT = {1, 1, 1, 0,  //
            0, 1, -1, -1};
    w.BT = {1, 0, -1, 0,  //
            0, 1, 1, 0,   //
            0, -1, 1, 0,  //
            0, 1, 0, -1};
    w.G = {1, 0, 0,          //
           0.5, 0.5, 0.5,    //
           0.5, -0.5, 0.5,   //
           0, 0, 1};
    return w;
  }
  TESSERA_CHECK(m == 4, "Winograd F(m x m, 3 x 3): m must be 2 or 4, got ", m);
  w.AT = {1, 1, 1, 1, 1, 0,    //
          0, 1, -1, 2, -2, 0,  //
          0, 1, 1, 4, 4, 0,    //
          0, 1, -1, 8, -8, 1};
  w.BT = {4, 0, -5, 0, 1, 0,    //
          0, -4, -4, 1, 1, 0,   //
          0, 4, -4, -1, 1, 0,   //
          0, -2, -1, 2, 1, 0,   //
          0, 2, -1, -2, 1, 0,   //
          0, 4, 0, -5, 0, 1};
  w.G = {1.0 / 4, 0, 0,                   //
         -1.0 / 6, -1.0 / 6, -1.0 / 6,    //
         -1.0 / 6, 1.0 / 6, -1.0 / 6,     //
         1.0 / 24, 1.0 / 12, 1.0 / 6,     //
         1.0 / 24, -1.0 / 12, 1.0 / 6,    //
         0, 0, 1};
  return w;
}

std::vector<double> WinogradKernelTransform(const WinogradMatrices& w, const float* g) {
  const int64_t a = w.alpha;
  std::vector<double> gg(static_cast<size_t>(a * 3), 0.0);  // G g: [alpha, 3]
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 3; ++k) gg[i * 3 + j] += w.G[i * 3 + k] * g[k * 3 + j];
  std::vector<double> u(static_cast<size_t>(a * a), 0.0);  // (G g) G^T: [alpha, alpha]
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < a; ++j)
      for (int64_t k = 0; k < 3; ++k) u[i * a + j] += gg[i * 3 + k] * w.G[j * 3 + k];
  return u;
}

WinogradTiling WinogradTile(int64_t oh, int64_t ow, int64_t m, int64_t d) {
  TESSERA_CHECK(m > 0 && oh > 0 && ow > 0, "Winograd F(", m, "x", m, ", 3x3): bad output ", oh, "x", ow);
  TESSERA_CHECK(d >= 1, "Winograd F(", m, "x", m, ", 3x3): dilation must be >= 1, got ", d);
  const int64_t ph = (oh + d - 1) / d, pw = (ow + d - 1) / d;  // the outputs of phase (0, 0)
  return {m, (ph + m - 1) / m, (pw + m - 1) / m, d};
}

Tensor winograd_input_transform(const Tensor& data, int64_t m, const std::array<int64_t, 4>& padding, int64_t rows,
                                int64_t d, int64_t groups) {
  std::vector<int64_t> ds = ConstShape(data);
  TESSERA_CHECK(ds.size() == 5, "winograd_input_transform: data must be 5-D NCHWc, got rank ", ds.size());
  TESSERA_CHECK(groups >= 1 && (ds[1] * ds[4]) % groups == 0, "winograd_input_transform: ", ds[1] * ds[4],
                " channels are not a multiple of ", groups, " groups");
  const WinogradMatrices w = Winograd3x3(m);
  Conv2DParams p;
  p.padding = padding;
  p.dilation = {d, d};
  const auto [oh, ow] = Conv2DOutHW(ds[2], ds[3], 3, 3, p);
  const WinogradTiling t = WinogradTile(oh, ow, m, d);
  const int64_t tiles = t.Tiles(ds[0]), a = w.alpha, cb = ds[4], cg = ds[1] * cb / groups;
  TESSERA_CHECK(rows >= tiles, "winograd_input_transform: ", rows, " rows for ", tiles, " tiles");
  // The last row / column of tiles of the last phase reaches row (d - 1) + d * (th * m + 1) of the
  // padded input: more padding below and right (d = 1: th * m - oh rows).
  const int64_t extra_h = d * (t.th * m + 2) - (ds[2] + padding[0] + padding[2]);
  const int64_t extra_w = d * (t.tw * m + 2) - (ds[3] + padding[1] + padding[3]);
  Tensor in = PadNCHWcStage(data, {padding[0], padding[1], padding[2] + std::max<int64_t>(extra_h, 0),
                                   padding[3] + std::max<int64_t>(extra_w, 0)});
  return te::compute(
      MakeShape({groups * a * a, rows, cg}),
      [&](const std::vector<Var>& i) {
        PrimExpr tile = rows == tiles ? PrimExpr(i[1]) : ir::min(PrimExpr(i[1]), Index(tiles - 1));
        // batch b = g * alpha^2 + e: group g's channels g * cg + i[2], element e of the tile
        PrimExpr e = groups > 1 ? floormod(i[0], Index(a * a)) : PrimExpr(i[0]);
        PrimExpr channel = groups > 1 ? floordiv(i[0], Index(a * a)) * Index(cg) + i[2] : PrimExpr(i[2]);
        PrimExpr n = floordiv(tile, Index(d * d * t.th * t.tw));
        PrimExpr y0 = floormod(floordiv(tile, Index(t.tw)), Index(t.th)) * Index(m * d);
        PrimExpr x0 = floormod(tile, Index(t.tw)) * Index(m * d);
        if (d > 1) {  // the phase's first row and column
          y0 = y0 + floormod(floordiv(tile, Index(d * t.th * t.tw)), Index(d));
          x0 = x0 + floormod(floordiv(tile, Index(t.th * t.tw)), Index(d));
        }
        PrimExpr co = floordiv(channel, Index(cb)), ci = floormod(channel, Index(cb));
        std::vector<PrimExpr> cases;
        for (int64_t eps = 0; eps < a; ++eps)
          for (int64_t nu = 0; nu < a; ++nu)
            cases.push_back(LinearCombination(
                OuterRow(w.BT, a, eps, nu),
                [&](size_t ij) {
                  const int64_t y = static_cast<int64_t>(ij) / a, x = static_cast<int64_t>(ij) % a;
                  return in({n, co, y0 + Index(y * d), x0 + Index(x * d), ci});
                },
                data.dtype()));
        return SelectCase(e, cases);
      },
      kWinogradInputName, tag::kInjective, {{kWinogradTileAttr, Index(m)}});
}

Tensor winograd_output_transform(const Tensor& mm, int64_t m, int64_t n, int64_t oh, int64_t ow, int64_t k_block,
                                 int64_t d, int64_t groups) {
  std::vector<int64_t> ms = ConstShape(mm);
  const WinogradMatrices w = Winograd3x3(m);
  const int64_t a = w.alpha;
  TESSERA_CHECK(groups >= 1 && ms.size() == 3 && ms[0] == groups * a * a, "winograd_output_transform: M must be [",
                groups * a * a, ", rows, K], got rank ", ms.size());
  const WinogradTiling t = WinogradTile(oh, ow, m, d);
  TESSERA_CHECK(ms[1] >= t.Tiles(n), "winograd_output_transform: ", ms[1], " rows for ", t.Tiles(n), " tiles");
  TESSERA_CHECK(k_block > 0 && ms[2] % k_block == 0, "winograd_output_transform: ", ms[2],
                " channels", groups > 1 ? " per group" : "", " are not a multiple of the block ", k_block);
  std::map<std::string, PrimExpr> annotations{{kWinogradTileAttr, Index(m)}};
  if (d > 1) annotations[kWinogradDilationAttr] = Index(d);
  const int64_t kg = ms[2];  // each group's output channels (padded when groups == 1)
  return te::compute(
      MakeShape({n, groups * kg / k_block, oh, ow, k_block}),
      [&](const std::vector<Var>& i) {
        // The output's row and column within its phase (y / d, x / d) and the image's phase.
        PrimExpr y = d > 1 ? floordiv(i[2], Index(d)) : PrimExpr(i[2]);
        PrimExpr x = d > 1 ? floordiv(i[3], Index(d)) : PrimExpr(i[3]);
        PrimExpr image = i[0];
        if (d > 1) image = (PrimExpr(i[0]) * Index(d) + floormod(i[2], Index(d))) * Index(d) + floormod(i[3], Index(d));
        PrimExpr tile = (image * Index(t.th) + floordiv(y, Index(m))) * Index(t.tw) + floordiv(x, Index(m));
        PrimExpr k = PrimExpr(i[1]) * Index(k_block) + i[4];
        PrimExpr base = Index(0);  // M's batch of element 0 of the channel's group
        if (groups > 1) {  // whole blocks per group: the lanes ki stay contiguous in M
          base = floordiv(i[1], Index(kg / k_block)) * Index(a * a);
          k = floormod(i[1], Index(kg / k_block)) * Index(k_block) + i[4];
        }
        std::vector<PrimExpr> rows;
        for (int64_t r = 0; r < m; ++r) {
          std::vector<PrimExpr> cols;
          for (int64_t s = 0; s < m; ++s)
            cols.push_back(LinearCombination(
                OuterRow(w.AT, a, r, s), [&](size_t e) { return mm({base + Index(static_cast<int64_t>(e)), tile, k}); },
                mm.dtype()));
          rows.push_back(SelectCase(floormod(x, Index(m)), cols));
        }
        return SelectCase(floormod(y, Index(m)), rows);
      },
      kWinogradOutputName, tag::kInjective, annotations);
}

}  // namespace tessera::topi
