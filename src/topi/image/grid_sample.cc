#include "tessera/topi/image/grid_sample.h"

#include <functional>
#include <utility>

#include "tessera/support/error.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

namespace {

struct Tap {
  PrimExpr index;   ///< int32, inside the dim
  PrimExpr valid;   ///< "zeros" padding: the unclamped tap lies inside (else undefined: always)
  PrimExpr weight;  ///< undefined for nearest
};

// Reflects a coordinate into [lo, hi] by its nearer border until it is inside (the
// reference's _gs_reflect): an odd number of spans lands mirrored.
PrimExpr Reflect(const PrimExpr& x, double lo, double hi, DataType ft) {
  auto c = [&](double v) { return ir::make_const(ft, v); };
  const double span = hi - lo;
  if (span <= 0) return c(lo);
  PrimExpr below = x < c(lo), above = x > c(hi);
  PrimExpr dx = ir::select(below, c(lo) - x, x - c(hi));
  PrimExpr n = ir::floor(dx / c(span));
  PrimExpr r = dx - n * c(span);
  PrimExpr even = n - c(2) * ir::floor(n / c(2)) == c(0);
  PrimExpr from_below = ir::select(even, c(lo) + r, c(hi) - r);
  PrimExpr from_above = ir::select(even, c(hi) - r, c(lo) + r);
  return ir::select(below, from_below, ir::select(above, from_above, x));
}

PrimExpr ClampIndex(PrimExpr i, int64_t d) { return ir::min(ir::max(std::move(i), Index(0)), Index(d - 1)); }

// Keys' cubic convolution weights of the taps at offsets -1, 0, 1, 2 from floor, A = -0.75.
std::vector<PrimExpr> CubicWeights(const PrimExpr& f, DataType ft) {
  auto c = [&](double v) { return ir::make_const(ft, v); };
  const double A = -0.75;
  PrimExpr f1 = f + c(1), q = c(1) - f, q1 = c(2) - f;
  return {((c(A) * f1 - c(5 * A)) * f1 + c(8 * A)) * f1 - c(4 * A),
          ((c(A + 2) * f - c(A + 3)) * f * f + c(1)),
          ((c(A + 2) * q - c(A + 3)) * q * q + c(1)),
          ((c(A) * q1 - c(5 * A)) * q1 + c(8 * A)) * q1 - c(4 * A)};
}

}  // namespace

Tensor grid_sample(const Tensor& x, const Tensor& grid, const std::string& mode, const std::string& padding_mode,
                   bool align_corners) {
  const std::vector<int64_t> xs = ConstShape(x), gs = ConstShape(grid);
  TESSERA_CHECK(mode == "nearest" || mode == "linear" || mode == "cubic", "grid_sample: unknown mode '", mode,
                "' (nearest, linear, cubic)");
  TESSERA_CHECK(padding_mode == "zeros" || padding_mode == "border" || padding_mode == "reflection",
                "grid_sample: unknown padding_mode '", padding_mode, "' (zeros, border, reflection)");
  const int64_t r = static_cast<int64_t>(xs.size()) - 2;
  TESSERA_CHECK(r >= 1, "grid_sample: x must be [N, C, D1, ...], got rank ", xs.size());
  TESSERA_CHECK(static_cast<int64_t>(gs.size()) == r + 2 && gs[0] == xs[0] && gs.back() == r,
                "grid_sample: grid must be [N, O1..O", r, ", ", r, "] for x of rank ", xs.size());
  TESSERA_CHECK(x.dtype().is_float() && grid.dtype().is_float(), "grid_sample: x and grid must be float tensors");
  for (int64_t i = 0; i < r; ++i) TESSERA_CHECK(xs[2 + i] >= 1, "grid_sample: spatial dim ", i, " of x is empty");
  const DataType dt = x.dtype();
  const DataType ft = dt.bits() == 64 ? DataType::Float(64) : DataType::Float(32);
  auto c = [&](double v) { return ir::make_const(ft, v); };
  std::vector<int64_t> out = {xs[0], xs[1]};
  out.insert(out.end(), gs.begin() + 1, gs.end() - 1);

  return te::compute(
      MakeShape(out),
      [&](const std::vector<Var>& o) {
        std::vector<std::pair<Var, PrimExpr>> lets;
        std::vector<std::vector<Tap>> taps(r);
        for (int64_t i = 0; i < r; ++i) {
          const int64_t d = xs[2 + i];
          const double lo = align_corners ? 0.0 : -0.5, hi = align_corners ? d - 1.0 : d - 0.5;
          std::vector<PrimExpr> gi = {o[0]};
          for (int64_t j = 0; j < r; ++j) gi.push_back(o[2 + j]);
          gi.push_back(Index(r - 1 - i));  // grid lists x (the innermost dim) first
          PrimExpr g = ir::cast(ft, grid(gi));
          PrimExpr v = align_corners ? (g + c(1)) / c(2) * c(static_cast<double>(d - 1))
                                     : ((g + c(1)) * c(static_cast<double>(d)) - c(1)) / c(2);
          if (mode == "nearest") v = ir::round(v);
          if (padding_mode == "border")
            v = ir::select(v < c(lo) || v > c(hi), ir::min(ir::max(v, c(0)), c(static_cast<double>(d - 1))), v);
          else if (padding_mode == "reflection")
            v = Reflect(v, lo, hi, ft);
          Var coord("gs_x" + std::to_string(i), ft);
          lets.emplace_back(coord, v);
          // The taps and their weights.
          std::vector<std::pair<PrimExpr, PrimExpr>> raw;  // (unclamped int32 index, weight)
          if (mode == "nearest") {
            raw.push_back({ir::cast(DataType::Int(32), coord), PrimExpr()});
          } else {
            PrimExpr fl = ir::floor(coord), f = coord - fl;
            PrimExpr base = ir::cast(DataType::Int(32), fl);
            if (mode == "linear") {
              raw = {{base, c(1) - f}, {base + Index(1), f}};
            } else {
              std::vector<PrimExpr> w = CubicWeights(f, ft);
              for (int k = 0; k < 4; ++k) raw.push_back({base + Index(k - 1), w[k]});
            }
          }
          for (auto& [t, w] : raw) {
            Tap tap;
            tap.weight = w;
            if (padding_mode == "zeros") {
              tap.valid = t >= Index(0) && t < Index(d);
              tap.index = ClampIndex(t, d);
            } else if (padding_mode == "border") {
              tap.index = ClampIndex(t, d);
            } else {
              tap.index = ClampIndex(ir::cast(DataType::Int(32), Reflect(ir::cast(ft, t), lo, hi, ft)), d);
            }
            taps[i].push_back(tap);
          }
        }
        // The sum over the cross product of the dims' taps.
        std::vector<PrimExpr> idx = {o[0], o[1]};
        idx.resize(2 + r);
        PrimExpr sum;
        std::function<void(int64_t, PrimExpr, PrimExpr)> visit = [&](int64_t i, PrimExpr w, PrimExpr valid) {
          if (i == r) {
            PrimExpr v = x(idx);
            if (mode != "nearest") v = ir::cast(ft, v) * w;
            if (valid.defined()) v = ir::select(valid, v, ir::make_zero(v.dtype()));
            sum = sum.defined() ? sum + v : v;
            return;
          }
          for (const Tap& t : taps[i]) {
            idx[2 + i] = t.index;
            PrimExpr w2 = !t.weight.defined() ? w : w.defined() ? w * t.weight : t.weight;
            PrimExpr v2 = !t.valid.defined() ? valid : valid.defined() ? (valid && t.valid) : t.valid;
            visit(i + 1, w2, v2);
          }
        };
        visit(0, PrimExpr(), PrimExpr());
        PrimExpr value = ir::cast(dt, sum);
        for (auto l = lets.rbegin(); l != lets.rend(); ++l) value = ir::LetNode::make(l->first, l->second, value);
        return value;
      },
      "T_grid_sample", tag::kInjective);
}

}  // namespace tessera::topi
