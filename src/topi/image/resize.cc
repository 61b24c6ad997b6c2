#include "tessera/topi/image/resize.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <set>

#include "tessera/support/error.h"
#include "tessera/topi/tags.h"
#include "resize_util.h"

namespace tessera::topi {

using namespace resize_detail;

namespace {

// The coordinate transformation of the ONNX spec, written once for doubles (compile-time index
// tables) and for float64 PrimExprs (kernel code): `k` makes a constant of T. As the reference
// implementation, the resized length is the real scale * n (not the integer output extent):
// align_corners with scales 0.6 over 4 columns divides by 2.4 - 1.
template <typename T, typename K>
T Coordinate(const ResizeParams& p, size_t a, T o, int64_t n, K k) {
  const std::string& mode = p.coordinate_transformation_mode;
  const double s = p.scales[a];
  const double out_width = s * static_cast<double>(n);
  if (mode == "half_pixel") return (o + k(0.5)) / k(s) - k(0.5);
  if (mode == "half_pixel_symmetric") {
    const double adjustment = static_cast<double>(p.sizes[a]) / out_width;
    const double offset = static_cast<double>(n) / 2 * (1 - adjustment);
    return k(offset) + (o + k(0.5)) / k(s) - k(0.5);
  }
  // pytorch_half_pixel of a length-1 output: 0, as the spec and ONNX Runtime (the reference says -0.5).
  if (mode == "pytorch_half_pixel") return out_width == 1 ? k(0.0) : (o + k(0.5)) / k(s) - k(0.5);
  if (mode == "align_corners") return out_width == 1 ? k(0.0) : o * k(static_cast<double>(n - 1)) / k(out_width - 1);
  if (mode == "asymmetric") return o / k(s);
  if (mode == "tf_half_pixel_for_nn") return (o + k(0.5)) / k(s);
  // tf_crop_and_resize: roi in normalised coordinates.
  const double start = p.roi_start[a], end = p.roi_end[a], span = static_cast<double>(n - 1);
  if (out_width == 1) return k((end - start) * span / 2 + start * span);
  return o * k((end - start) * span) / k(out_width - 1) + k(start * span);
}

double Konst(double v) { return v; }

// Rounds a source coordinate to a source index as nearest_mode says (before clamping).
int64_t NearestIndex(const ResizeParams& p, size_t a, double c) {
  const double fl = std::floor(c), r = c - fl;
  const std::string& m = p.nearest_mode;
  if (m == "round_prefer_floor") return static_cast<int64_t>(r <= 0.5 ? fl : fl + 1);
  if (m == "round_prefer_ceil") return static_cast<int64_t>(r < 0.5 ? fl : fl + 1);
  if (m == "floor") return static_cast<int64_t>(fl);
  if (m == "ceil") return static_cast<int64_t>(std::ceil(c));
  return static_cast<int64_t>(p.scales[a] < 1 ? std::ceil(c) : fl);  // simple
}

PrimExpr NearestIndexExpr(const ResizeParams& p, size_t a, const PrimExpr& c) {
  PrimExpr fl = ir::floor(c), r = c - fl;
  const std::string& m = p.nearest_mode;
  PrimExpr idx;
  if (m == "round_prefer_floor") idx = ir::select(r <= F64(0.5), fl, fl + F64(1));
  else if (m == "round_prefer_ceil") idx = ir::select(r < F64(0.5), fl, fl + F64(1));
  else if (m == "floor") idx = fl;
  else if (m == "ceil" || p.scales[a] < 1) idx = ir::ceil(c);
  else idx = fl;  // simple, upsampling
  return ir::cast(DataType::Int(32), idx);
}

PrimExpr Clamp(PrimExpr i, int64_t n) { return ir::min(ir::max(std::move(i), Index(0)), Index(n - 1)); }

// floor((q * o + b) / p) reproducing a nearest index table (clamped into [0, n)), when one
// exists with p, q <= 64: integer up- and downsampling by rational factors in the common modes.
struct AffineIndex {
  int64_t p = 0, q = 0, b = 0;
};
// With n > 0 the table is clamped into [0, n); n = 0 matches it exactly.
bool FindAffineIndex(const std::vector<int64_t>& table, int64_t n, AffineIndex* out, int64_t max_p = 64) {
  const int64_t m = static_cast<int64_t>(table.size());
  auto fdiv = [](int64_t x, int64_t d) { return x >= 0 ? x / d : -((-x + d - 1) / d); };
  auto fit = [&](int64_t v) { return n > 0 ? std::clamp<int64_t>(v, 0, n - 1) : v; };
  for (int64_t p = 1; p <= max_p; ++p) {
    for (int64_t q = 1; q <= 64; ++q) {
      if (std::gcd(p, q) != 1) continue;
      // floor(b / p) is table[0] where it is not clamped to 0.
      const bool exact = n <= 0 || table[0] > 0;
      const int64_t lo = exact ? p * table[0] : -4 * p, hi = exact ? p * table[0] + p : p;
      for (int64_t b = lo; b < hi; ++b) {
        bool ok = true;
        for (int64_t o = 0; o < m && ok; ++o) ok = fit(fdiv(q * o + b, p)) == table[o];
        if (ok) {
          *out = {p, q, b};
          return true;
        }
      }
    }
  }
  return false;
}

// One tap of one axis: a (clamped) source index and its float64 weight.
struct Tap {
  PrimExpr index;
  PrimExpr weight;
};

struct AxisTaps {
  std::vector<Tap> taps;
  PrimExpr valid;  ///< tf_crop_and_resize: the coordinate lies inside the axis (else undefined)
  /// Normalised weights are bound once (Let) and referenced by every tap's product: the sum
  /// over the cross product of k taps per axis would otherwise repeat all k weights in each of
  /// its k^2 terms (antialiased cubic at scale 0.4: 10 taps per axis).
  std::vector<std::pair<Var, PrimExpr>> lets;
};

// Linear interpolation along an axis whose source coordinate is affine in o with a rational
// slope q / p (p <= 8; integer and simple fractional scales): floor(c) = floor((q o + b) / p)
// and the fraction depends on o mod p only. Fills `base` (int32) and `r` (float64: a select
// over o mod p of the compile-time fractions) and returns true when every output index checks.
bool PeriodicLinear(const ResizeParams& p, size_t a, const PrimExpr& o, int64_t n, PrimExpr* base, PrimExpr* r) {
  const int64_t m = p.sizes[a];
  std::vector<int64_t> floors(m);
  std::vector<double> fractions(m);
  for (int64_t i = 0; i < m; ++i) {
    const double c = Coordinate(p, a, static_cast<double>(i), n, Konst);
    floors[i] = static_cast<int64_t>(std::floor(c));
    fractions[i] = c - std::floor(c);
  }
  AffineIndex f;
  if (!FindAffineIndex(floors, 0, &f, 8)) return false;
  for (int64_t i = f.p; i < m; ++i)
    if (std::fabs(fractions[i] - fractions[i % f.p]) > 1e-12) return false;
  PrimExpr b = f.q == 1 ? PrimExpr(o) : PrimExpr(o * Index(f.q));
  if (f.b != 0) b = b + Index(f.b);
  *base = f.p == 1 ? b : ir::floordiv(b, Index(f.p));
  PrimExpr phase = f.p == 1 ? Index(0) : ir::floormod(o, Index(f.p));
  *r = F64(fractions[0]);
  for (int64_t k = 1; k < std::min<int64_t>(f.p, m); ++k) *r = ir::select(phase == Index(k), F64(fractions[k]), *r);
  return true;
}

AxisTaps InterpolationTaps(const ResizeParams& p, size_t a, const PrimExpr& o, int64_t n) {
  AxisTaps t;
  PrimExpr c = Coordinate(p, a, ir::cast(DataType::Float(64), o), n, F64);
  if (p.coordinate_transformation_mode == "tf_crop_and_resize")
    t.valid = c >= F64(0) && c <= F64(static_cast<double>(n - 1));
  PrimExpr fl = ir::floor(c), r = c - fl;
  PrimExpr base = ir::cast(DataType::Int(32), fl);
  const bool plain_linear = p.mode == "linear" && !(p.antialias && p.scales[a] < 1) && !p.exclude_outside &&
                            p.coordinate_transformation_mode != "tf_crop_and_resize";
  if (plain_linear) PeriodicLinear(p, a, o, n, &base, &r);
  const bool cubic = p.mode == "cubic";
  const double s = p.scales[a];
  std::vector<int64_t> offsets;
  std::vector<PrimExpr> weights;
  bool normalise = false;
  if (p.antialias && s < 1) {
    // The filter widened by 1 / s (reference: _linear_coeffs_antialias / _cubic_coeffs_antialias).
    const int64_t start = static_cast<int64_t>(std::floor((cubic ? -2.0 : -1.0) / s)) + 1;
    const int64_t k = 2 - 2 * start;
    for (int64_t j = 0; j < k; ++j) {
      PrimExpr d = (F64(static_cast<double>(start + j)) - r) * F64(s);
      offsets.push_back(start + j);
      weights.push_back(cubic ? CubicKernel(d, p.cubic_coeff_a) : ir::max(F64(1) - ir::fabs(d), F64(0)));
    }
    normalise = true;
  } else if (cubic) {
    const double A = p.cubic_coeff_a;
    PrimExpr r1 = r + F64(1), q = F64(1) - r, q1 = q + F64(1);
    offsets = {-1, 0, 1, 2};
    weights = {((F64(A) * r1 - F64(5 * A)) * r1 + F64(8 * A)) * r1 - F64(4 * A),
               ((F64(A + 2) * r - F64(A + 3)) * r * r + F64(1)),
               ((F64(A + 2) * q - F64(A + 3)) * q * q + F64(1)),
               ((F64(A) * q1 - F64(5 * A)) * q1 + F64(8 * A)) * q1 - F64(4 * A)};
  } else {
    offsets = {0, 1};
    weights = {F64(1) - r, r};
  }
  if (p.exclude_outside) {
    for (size_t j = 0; j < offsets.size(); ++j) {
      PrimExpr i = base + Index(offsets[j]);
      weights[j] = ir::select(i >= Index(0) && i < Index(n), weights[j], F64(0));
    }
    normalise = true;
  }
  if (normalise) {
    PrimExpr sum;
    for (size_t j = 0; j < weights.size(); ++j) {
      Var w("resize_w" + std::to_string(a) + "_" + std::to_string(j), DataType::Float(64));
      t.lets.emplace_back(w, weights[j]);
      weights[j] = w;
      sum = sum.defined() ? sum + weights[j] : weights[j];
    }
    Var total("resize_wsum" + std::to_string(a), DataType::Float(64));
    t.lets.emplace_back(total, sum);
    for (PrimExpr& w : weights) w = w / total;
  }
  for (size_t j = 0; j < offsets.size(); ++j) {
    PrimExpr i = offsets[j] == 0 ? base : base + Index(offsets[j]);
    t.taps.push_back({Clamp(i, n), weights[j]});
  }
  return t;
}

AxisTaps NearestTap(const ResizeParams& p, size_t a, const PrimExpr& o, int64_t n) {
  const int64_t m = p.sizes[a];
  std::vector<int64_t> table(m);
  bool all_valid = true;
  for (int64_t i = 0; i < m; ++i) {
    const double c = Coordinate(p, a, static_cast<double>(i), n, Konst);
    if (c < 0 || c > static_cast<double>(n - 1)) all_valid = false;
    table[i] = std::clamp<int64_t>(NearestIndex(p, a, c), 0, n - 1);
  }
  AxisTaps t;
  const bool crop = p.coordinate_transformation_mode == "tf_crop_and_resize";
  AffineIndex f;
  if ((!crop || all_valid) && FindAffineIndex(table, n, &f)) {
    PrimExpr i = f.q == 1 ? PrimExpr(o) : PrimExpr(o * Index(f.q));
    if (f.b != 0) i = i + Index(f.b);
    if (f.p != 1) i = ir::floordiv(i, Index(f.p));
    if (f.b < 0) i = ir::max(i, Index(0));
    if ((f.q * (m - 1) + f.b) / f.p > n - 1) i = ir::min(i, Index(n - 1));
    t.taps.push_back({i, PrimExpr()});
    return t;
  }
  PrimExpr c = Coordinate(p, a, ir::cast(DataType::Float(64), o), n, F64);
  if (crop && !all_valid) t.valid = c >= F64(0) && c <= F64(static_cast<double>(n - 1));
  t.taps.push_back({Clamp(NearestIndexExpr(p, a, c), n), PrimExpr()});
  return t;
}

}  // namespace

void CheckResizeParams(const std::vector<int64_t>& in_shape, DataType dtype, const ResizeParams& p) {
  const size_t k = p.axes.size();
  CheckResizeModes(dtype, p);
  TESSERA_CHECK(p.sizes.size() == k && p.scales.size() == k, "resize: ", p.sizes.size(), " sizes and ",
                     p.scales.size(), " scales for ", k, " resized axes");
  std::set<int64_t> seen;
  for (size_t a = 0; a < k; ++a) {
    TESSERA_CHECK(p.axes[a] >= 0 && p.axes[a] < static_cast<int64_t>(in_shape.size()), "resize: axis ",
                       p.axes[a], " is out of range for a tensor of rank ", in_shape.size());
    TESSERA_CHECK(seen.insert(p.axes[a]).second, "resize: axis ", p.axes[a], " is listed twice");
    TESSERA_CHECK(p.sizes[a] >= 1, "resize: output extent ", p.sizes[a], " of axis ", p.axes[a],
                       " must be >= 1");
    TESSERA_CHECK(std::isfinite(p.scales[a]) && p.scales[a] > 0, "resize: scale ", p.scales[a], " of axis ",
                       p.axes[a], " must be a positive number");
    TESSERA_CHECK(in_shape[p.axes[a]] >= 1, "resize: axis ", p.axes[a], " of the input is empty");
  }
  if (p.coordinate_transformation_mode == "tf_crop_and_resize") {
    TESSERA_CHECK(p.roi_start.size() == k && p.roi_end.size() == k,
                       "resize: tf_crop_and_resize needs a roi with a start and an end for each of the ", k,
                       " resized axes, got ", p.roi_start.size(), " starts and ", p.roi_end.size(), " ends");
  }
}

std::vector<int64_t> ResizeOutShape(const std::vector<int64_t>& in_shape, const ResizeParams& p) {
  std::vector<int64_t> out = in_shape;
  for (size_t a = 0; a < p.axes.size(); ++a) out[p.axes[a]] = p.sizes[a];
  return out;
}

Tensor resize(const Tensor& x, const ResizeParams& p) {
  const std::vector<int64_t> xs = ConstShape(x);
  CheckResizeParams(xs, x.dtype(), p);
  const DataType dt = x.dtype();
  const bool nearest = p.mode == "nearest";
  return te::compute(
      MakeShape(ResizeOutShape(xs, p)),
      [&](const std::vector<Var>& o) {
        std::vector<AxisTaps> axes;
        for (size_t a = 0; a < p.axes.size(); ++a) {
          const int64_t d = p.axes[a];
          axes.push_back(nearest ? NearestTap(p, a, o[d], xs[d]) : InterpolationTaps(p, a, o[d], xs[d]));
        }
        PrimExpr valid;
        for (const AxisTaps& t : axes)
          if (t.valid.defined()) valid = valid.defined() ? (valid && t.valid) : t.valid;
        std::vector<PrimExpr> idx = AsExprs(o);
        PrimExpr value;
        if (nearest) {
          for (size_t a = 0; a < p.axes.size(); ++a) idx[p.axes[a]] = axes[a].taps[0].index;
          value = x(idx);
        } else {
          // The weighted sum over the cross product of the axes' taps.
          const DataType acc = AccumulateType(dt);
          PrimExpr sum;
          std::function<void(size_t, PrimExpr)> visit = [&](size_t a, PrimExpr w) {
            if (a == axes.size()) {
              PrimExpr term = ir::cast(acc, w) * ir::cast(acc, x(idx));
              sum = sum.defined() ? sum + term : term;
              return;
            }
            for (const Tap& tap : axes[a].taps) {
              idx[p.axes[a]] = tap.index;
              visit(a + 1, w.defined() ? w * tap.weight : tap.weight);
            }
          };
          visit(0, PrimExpr());
          value = ToOutput(sum, dt);
        }
        if (valid.defined()) value = ir::select(valid, value, ir::make_const(dt, p.extrapolation_value));
        for (auto a = axes.rbegin(); a != axes.rend(); ++a)
          for (auto l = a->lets.rbegin(); l != a->lets.rend(); ++l) value = ir::LetNode::make(l->first, l->second, value);
        return value;
      },
      "T_resize", tag::kInjective);
}

namespace resize_detail {

namespace {

const std::set<std::string> kModes = {"nearest", "linear", "cubic"};
const std::set<std::string> kCoordinateModes = {"half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
                                                "align_corners", "asymmetric",           "tf_half_pixel_for_nn",
                                                "tf_crop_and_resize"};
const std::set<std::string> kNearestModes = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple"};

std::string Joined(const std::set<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

PrimExpr CubicKernel(const PrimExpr& d, double A) {
  PrimExpr x = ir::fabs(d);
  PrimExpr near = ((F64(A + 2) * x - F64(A + 3)) * x * x + F64(1));
  PrimExpr far = ((((x - F64(5)) * x + F64(8)) * x - F64(4)) * F64(A));
  return ir::select(x < F64(1), near, ir::select(x < F64(2), far, F64(0)));
}

DataType AccumulateType(DataType t) {
  if (t.is_float() && t.bits() == 64) return DataType::Float(64);
  if (t.is_int() || t.is_uint()) return DataType::Float(64);
  return DataType::Float(32);
}

PrimExpr ToOutput(const PrimExpr& sum, DataType dt) {
  if (dt.is_float() || dt.is_bfloat16()) return ir::cast(dt, sum);
  const DataType acc = AccumulateType(dt);
  PrimExpr r = ir::round(sum);
  r = ir::min(ir::max(r, ir::cast(acc, ir::min_value(dt))), ir::cast(acc, ir::max_value(dt)));
  return ir::cast(dt, r);
}

void CheckResizeModes(DataType dtype, const ResizeParams& p) {
  TESSERA_CHECK(kModes.count(p.mode), "resize: unknown mode '", p.mode, "' (", Joined(kModes), ")");
  TESSERA_CHECK(kCoordinateModes.count(p.coordinate_transformation_mode),
                "resize: unknown coordinate_transformation_mode '", p.coordinate_transformation_mode, "' (",
                Joined(kCoordinateModes), ")");
  TESSERA_CHECK(kNearestModes.count(p.nearest_mode), "resize: unknown nearest_mode '", p.nearest_mode, "' (",
                Joined(kNearestModes), ")");
  TESSERA_CHECK(p.mode == "nearest" || !dtype.is_bool(), "resize: ", p.mode,
                " interpolation of a bool tensor (only nearest copies bools)");
}

}  // namespace resize_detail

}  // namespace tessera::topi
