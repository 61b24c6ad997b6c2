// topi::resize against a transcription of the ONNX reference implementation
// (onnx/reference/ops/op_resize.py): per axis, the reference takes the n source indices nearest
// to the source coordinate (ties to the lower index) from the edge-padded axis, with ratio 1 for
// an integer coordinate, and its own coefficient functions. The TE compute derives its taps
// differently (floor and fixed offsets), so agreement checks both.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "tessera/tir/printer.h"
#include "tessera/topi/image/resize.h"
#include "topi_test_util.h"

namespace tessera::topi {
namespace {

using testing::Data;

const DataType f32 = DataType::Float(32);

// ---- the reference -------------------------------------------------------------------------

std::vector<double> NearestCoeffs(double ratio, const std::string& mode, double scale) {
  if (ratio == std::floor(ratio)) return {0, 1};
  if (mode == "round_prefer_floor") return {double(ratio <= 0.5), double(ratio > 0.5)};
  if (mode == "round_prefer_ceil") return {double(ratio < 0.5), double(ratio >= 0.5)};
  if (mode == "floor") return {1, 0};
  if (mode == "ceil") return {0, 1};
  return scale < 1 ? std::vector<double>{0, 1} : std::vector<double>{1, 0};  // simple
}

std::vector<double> LinearCoeffs(double ratio, double scale, bool antialias) {
  if (!antialias) return {1 - ratio, ratio};
  scale = std::min(scale, 1.0);
  const int start = static_cast<int>(std::floor(-1 / scale)) + 1, footprint = 2 - 2 * start;
  std::vector<double> c;
  double sum = 0;
  for (int i = start; i < start + footprint; ++i) {
    c.push_back(std::clamp(1 - std::fabs((i - ratio) * scale), 0.0, 1.0));
    sum += c.back();
  }
  for (double& v : c) v /= sum;
  return c;
}

std::vector<double> CubicCoeffs(double r, double scale, double A, bool antialias) {
  if (!antialias) {
    return {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A, ((A + 2) * r - (A + 3)) * r * r + 1,
            ((A + 2) * (1 - r) - (A + 3)) * (1 - r) * (1 - r) + 1,
            ((A * ((1 - r) + 1) - 5 * A) * ((1 - r) + 1) + 8 * A) * ((1 - r) + 1) - 4 * A};
  }
  scale = std::min(scale, 1.0);
  const int i_start = static_cast<int>(std::floor(-2 / scale)) + 1, i_end = 2 - i_start;
  std::vector<double> c;
  double sum = 0;
  for (int i = i_start; i < i_end; ++i) {
    const double x = std::fabs(scale * (i - r));
    c.push_back(x < 1 ? ((A + 2) * x - (A + 3)) * x * x + 1 : x < 2 ? (((x - 5) * x + 8) * x - 4) * A : 0.0);
    sum += c.back();
  }
  for (double& v : c) v /= sum;
  return c;
}

// The reference's source coordinate; NaN for a tf_crop_and_resize point outside the axis.
double RefCoordinate(const ResizeParams& p, size_t a, int64_t x, int64_t in) {
  const double scale = p.scales[a], out = scale * in;
  const std::string& m = p.coordinate_transformation_mode;
  if (m == "align_corners") return out == 1 ? 0 : x * double(in - 1) / (out - 1);
  if (m == "asymmetric") return x / scale;
  if (m == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (m == "pytorch_half_pixel") return out == 1 ? 0 : (x + 0.5) / scale - 0.5;
  if (m == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (m == "half_pixel_symmetric") {
    const double adjustment = p.sizes[a] / out, center = in / 2.0, offset = center * (1 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
  const double s = p.roi_start[a], e = p.roi_end[a];  // tf_crop_and_resize
  double c = out == 1 ? (e - s) * (in - 1) / 2 : x * (e - s) * (in - 1) / (out - 1);
  c += s * (in - 1);
  return c < 0 || c > in - 1 ? NAN : c;
}

// One axis: the (unclamped) source indices and coefficients of output index x.
void RefTaps(const ResizeParams& p, size_t a, int64_t x, int64_t in, std::vector<int64_t>* idx,
             std::vector<double>* coeffs, bool* outside) {
  const double c = RefCoordinate(p, a, x, in);
  *outside = std::isnan(c);
  if (*outside) return;
  const double fl = std::floor(c);
  const double ratio = c == fl ? 1.0 : c - fl;
  if (p.mode == "nearest") *coeffs = NearestCoeffs(ratio, p.nearest_mode, p.scales[a]);
  else if (p.mode == "linear") *coeffs = LinearCoeffs(ratio, p.scales[a], p.antialias);
  else *coeffs = CubicCoeffs(ratio, p.scales[a], p.cubic_coeff_a, p.antialias);
  const int64_t n = static_cast<int64_t>(coeffs->size()), pad = (n + 1) / 2;
  // The n indices of the padded axis nearest to c + pad, ties to the lower, sorted.
  std::vector<int64_t> cand;
  for (int64_t i = 0; i < in + 2 * pad; ++i) cand.push_back(i);
  std::stable_sort(cand.begin(), cand.end(), [&](int64_t u, int64_t v) {
    return std::fabs(c + pad - u) < std::fabs(c + pad - v);
  });
  cand.resize(n);
  std::sort(cand.begin(), cand.end());
  idx->clear();
  for (int64_t i : cand) idx->push_back(i - pad);
  if (p.exclude_outside) {
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      if ((*idx)[j] < 0 || (*idx)[j] >= in) (*coeffs)[j] = 0;
      sum += (*coeffs)[j];
    }
    for (double& v : *coeffs) v /= sum;
  }
}

Data RefResize(const Data& x, const std::vector<int64_t>& shape, const ResizeParams& p) {
  std::vector<int64_t> out = ResizeOutShape(shape, p);
  const size_t rank = shape.size();
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  Data y(total);
  for (int64_t flat = 0; flat < total; ++flat) {
    std::vector<int64_t> o(rank);
    for (int64_t r = flat, d = static_cast<int64_t>(rank) - 1; d >= 0; --d) o[d] = r % out[d], r /= out[d];
    std::vector<std::vector<int64_t>> idx(p.axes.size());
    std::vector<std::vector<double>> co(p.axes.size());
    bool outside = false;
    for (size_t a = 0; a < p.axes.size(); ++a) {
      bool o_out = false;
      RefTaps(p, a, o[p.axes[a]], shape[p.axes[a]], &idx[a], &co[a], &o_out);
      outside |= o_out;
    }
    if (outside) {
      y[flat] = p.extrapolation_value;
      continue;
    }
    std::vector<int64_t> src = o;
    double sum = 0;
    std::function<void(size_t, double)> visit = [&](size_t a, double w) {
      if (a == p.axes.size()) {
        int64_t lin = 0;
        for (size_t d = 0; d < rank; ++d) lin = lin * shape[d] + src[d];
        sum += w * x[lin];
        return;
      }
      for (size_t j = 0; j < idx[a].size(); ++j) {
        src[p.axes[a]] = std::clamp<int64_t>(idx[a][j], 0, shape[p.axes[a]] - 1);  // edge padding
        visit(a + 1, w * co[a][j]);
      }
    };
    visit(0, 1.0);
    y[flat] = sum;
  }
  return y;
}

// ---- the checks ----------------------------------------------------------------------------

ResizeParams Params(std::string mode, std::string coord, std::vector<int64_t> axes, std::vector<int64_t> sizes,
                    std::vector<double> scales) {
  ResizeParams p;
  p.mode = std::move(mode);
  p.coordinate_transformation_mode = std::move(coord);
  p.axes = std::move(axes);
  p.sizes = std::move(sizes);
  p.scales = std::move(scales);
  return p;
}

const testing::Mode kCompiled = testing::HaveJIT() ? testing::Mode::kJIT : testing::Mode::kScheduledFlat;

// The run-time compute (ResizeRunTimeOperands) on the same case: the scales and the roi are read
// from float32 tensors the kernel is given, as the VM's vm.resize does (float32 is ONNX's dtype
// for both); the output extents stay p.sizes. `want`: the reference at the float32 values.
void CheckRunTime(const Tensor& x, const Data& in, const ResizeParams& p, const Data& want) {
  const int64_t k = static_cast<int64_t>(p.axes.size());
  const bool crop = p.coordinate_transformation_mode == "tf_crop_and_resize";
  Tensor scales = te::placeholder(MakeShape({k}), f32, "scales");
  Tensor roi = te::placeholder(MakeShape({2 * k}), f32, "roi");
  ResizeRunTimeOperands rt;
  Data scale_data, roi_data(2 * k);
  for (int64_t a = 0; a < k; ++a) {
    rt.sizes.push_back(Index(p.sizes[a]));
    rt.scales.push_back(ir::cast(DataType::Float(64), scales({Index(a)})));
    scale_data.push_back(static_cast<float>(p.scales[a]));
    if (crop) {
      rt.roi_start.push_back(ir::cast(DataType::Float(64), roi({Index(a)})));
      rt.roi_end.push_back(ir::cast(DataType::Float(64), roi({Index(k + a)})));
      roi_data[a] = static_cast<float>(p.roi_start[a]);
      roi_data[k + a] = static_cast<float>(p.roi_end[a]);
    }
  }
  Tensor y = resize(x, p, rt);
  testing::ExpectNear(testing::Run({x, scales, roi}, {y}, {in, scale_data, roi_data}, kCompiled)[0], want, 1e-5,
                      "resize with run-time operands");
}

void Check(const std::vector<int64_t>& shape, const ResizeParams& p, bool all_modes = false) {
  SCOPED_TRACE(p.mode + " / " + p.coordinate_transformation_mode + " / " + p.nearest_mode +
               (p.antialias ? " / antialias" : "") + (p.exclude_outside ? " / exclude_outside" : ""));
  Tensor x = te::placeholder(MakeShape(shape), f32, "x");
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  Data in = testing::Random(n, 7, -2, 2);
  Data want = RefResize(in, shape, p);
  Tensor y = resize(x, p);
  if (all_modes) {
    testing::CheckAllModes({x}, y, {in}, want, 1e-5);
  } else {  // the compiled kernel only: the interpreter is slow on the long select chains
    testing::ExpectNear(testing::Run({x}, {y}, {in}, kCompiled)[0], want, 1e-5, "resize");
  }
  ResizeParams pf = p;  // the reference at float32 scales and roi, as the run-time kernel reads them
  for (double& v : pf.scales) v = static_cast<float>(v);
  for (double& v : pf.roi_start) v = static_cast<float>(v);
  for (double& v : pf.roi_end) v = static_cast<float>(v);
  CheckRunTime(x, in, p, RefResize(in, shape, pf));
}

const std::vector<std::string> kCoordinateModes = {"half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
                                                   "align_corners", "asymmetric",           "tf_half_pixel_for_nn"};

TEST(TopiResize, NearestEveryRoundingAndCoordinateMode) {
  for (const std::string& coord : kCoordinateModes) {
    for (const char* nm : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
      // 2x upsampling (affine integer index), 0.6 downsampling and 3 / 7 (float index path).
      for (auto [size, scale] : std::vector<std::pair<int64_t, double>>{{10, 2.0}, {3, 0.6}, {7, 7.0 / 5}}) {
        ResizeParams p = Params("nearest", coord, {1}, {size}, {scale});
        p.nearest_mode = nm;
        Check({2, 5}, p);
      }
    }
  }
  ResizeParams simple = Params("nearest", "asymmetric", {0, 1}, {2, 7}, {0.5, 1.75});
  simple.nearest_mode = "simple";
  Check({4, 4}, simple);
}

TEST(TopiResize, LinearAndCubicEveryCoordinateMode) {
  for (const std::string& coord : kCoordinateModes) {
    for (const char* mode : {"linear", "cubic"}) {
      Check({1, 1, 4, 4}, Params(mode, coord, {2, 3}, {8, 6}, {2.0, 1.5}));   // up
      Check({1, 1, 4, 5}, Params(mode, coord, {2, 3}, {2, 3}, {0.6, 0.6}));   // down, scales
      Check({1, 1, 4, 5}, Params(mode, coord, {2, 3}, {3, 2}, {0.75, 0.4}));  // down, sizes
    }
  }
}

TEST(TopiResize, CubicCoefficientAndExcludeOutside) {
  ResizeParams p = Params("cubic", "half_pixel", {0, 1}, {9, 3}, {9.0 / 4, 3.0 / 4});
  p.cubic_coeff_a = -0.5;
  p.exclude_outside = true;
  Check({4, 4}, p);
  p.scales = {9.0 / 4, 0.75};
  p.coordinate_transformation_mode = "align_corners";
  Check({4, 4}, p);
}

TEST(TopiResize, AntialiasedDownsampling) {
  for (const char* mode : {"linear", "cubic"}) {
    ResizeParams p = Params(mode, "half_pixel", {2, 3}, {3, 2}, {0.6, 0.4});
    p.antialias = true;
    Check({1, 2, 5, 5}, p);
    p.exclude_outside = true;
    Check({1, 2, 5, 5}, p);
    p = Params(mode, "half_pixel", {2, 3}, {10, 2}, {2.0, 0.4});  // up on one axis: the plain filter
    p.antialias = true;
    Check({1, 1, 5, 5}, p);
  }
}

TEST(TopiResize, TfCropAndResizeExtrapolates) {
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    ResizeParams p = Params(mode, "tf_crop_and_resize", {2, 3}, {3, 3}, {0.75, 0.75});
    p.roi_start = {0.4, 0.6};
    p.roi_end = {0.6, 1.2};  // reaches outside the input
    p.extrapolation_value = 10;
    Check({1, 1, 4, 4}, p);
  }
}

TEST(TopiResize, ThreeAxesAndEveryExecutionMode) {
  Check({2, 3, 4}, Params("linear", "half_pixel", {0, 1, 2}, {3, 5, 2}, {1.5, 5.0 / 3, 0.5}));
  Check({3, 4}, Params("nearest", "half_pixel", {0, 1}, {6, 8}, {2.0, 2.0}), /*all_modes=*/true);
  Check({3, 4}, Params("linear", "align_corners", {1}, {7}, {7.0 / 4}), /*all_modes=*/true);
}

TEST(TopiResize, IntegerUpsamplingIsIntegerIndexArithmetic) {
  // 2x nearest in half_pixel: the index is o / 2 without a float coordinate.
  Tensor x = te::placeholder(MakeShape({3, 4}), f32, "x");
  Tensor y = resize(x, Params("nearest", "half_pixel", {0, 1}, {6, 8}, {2.0, 2.0}));
  const std::string ir = tir::AsText(te::create_prim_func({x, y}, "resize"));
  EXPECT_EQ(ir.find("float64"), std::string::npos) << ir;
  EXPECT_NE(ir.find("T_resize[vi, vj] = x[vi // 2, vj // 2]"), std::string::npos) << ir;
}

TEST(TopiResize, PeriodicLinearUsesIntegerTapsAndTabulatedFractions) {
  // 2x bilinear, half_pixel: floor(o / 2 - 0.25) = (o - 1) // 2 and the fraction alternates
  // 0.75, 0.25: no float coordinate, no floor intrinsic; numerics as the reference (above).
  Tensor x = te::placeholder(MakeShape({3, 4}), f32, "x");
  ResizeParams p = Params("linear", "half_pixel", {0, 1}, {6, 8}, {2.0, 2.0});
  const std::string ir = tir::AsText(te::create_prim_func({x, resize(x, p)}, "resize"));
  EXPECT_EQ(ir.find("floor("), std::string::npos) << ir;
  EXPECT_NE(ir.find("% 2"), std::string::npos) << ir;
  Check({3, 4}, p, /*all_modes=*/true);
}

TEST(TopiResize, RejectsBadParameters) {
  Tensor x = te::placeholder(MakeShape({2, 3}), f32, "x");
  auto fails_with = [&](const std::function<void()>& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "accepted: " << what;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  auto fails = [&](ResizeParams p, const std::string& what) { fails_with([&] { resize(x, p); }, what); };
  fails(Params("bicubic", "half_pixel", {1}, {6}, {2.0}), "unknown mode 'bicubic'");
  fails(Params("linear", "half", {1}, {6}, {2.0}), "unknown coordinate_transformation_mode 'half'");
  fails(Params("linear", "half_pixel", {2}, {6}, {2.0}), "axis 2 is out of range");
  fails(Params("linear", "half_pixel", {1, 1}, {6, 6}, {2.0, 2.0}), "axis 1 is listed twice");
  fails(Params("linear", "half_pixel", {1}, {0}, {2.0}), "must be >= 1");
  fails(Params("linear", "half_pixel", {1}, {6}, {-2.0}), "must be a positive number");
  fails(Params("linear", "tf_crop_and_resize", {1}, {6}, {2.0}), "needs a roi");
  // The run-time compute checks the modes and the operand counts the same way.
  ResizeRunTimeOperands rt{{Index(6)}, {ir::make_const(DataType::Float(64), 2.0)}, {}, {}};
  auto fails_rt = [&](ResizeParams p, const ResizeRunTimeOperands& ops, const std::string& what) {
    fails_with([&] { resize(x, p, ops); }, what);
  };
  fails_rt(Params("bicubic", "half_pixel", {1}, {}, {}), rt, "unknown mode 'bicubic'");
  fails_rt(Params("linear", "half_pixel", {0, 1}, {}, {}), rt, "1 sizes and 1 scales for 2 resized axes");
  fails_rt(Params("linear", "tf_crop_and_resize", {1}, {}, {}), rt, "needs a roi start and end");
}

}  // namespace
}  // namespace tessera::topi
