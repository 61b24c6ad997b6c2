// ONNX HannWindow / HammingWindow / BlackmanWindow-17 and MelWeightMatrix-17: constant
// generators, folded at import when their operands are known there; a window whose size is a
// run-time value is computed by the VM over vm.range (RunTimeWindow). Spec:
// onnx.defs.get_schema(...).doc; reference onnx/reference/ops/op_*_window.py and
// op_mel_weight_matrix.py. With N = size (periodic=1, default) or size - 1 (periodic=0), n < size:
//   Hann:     sin^2(pi n / N)
//   Hamming:  a - (1 - a) cos(2 pi n / N), a = 25 / 46
//   Blackman: 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)
// output_datatype (default float) is any numeric ONNX element type Tessera reads.
// MelWeightMatrix [dft_length / 2 + 1, num_mel_bins]: triangular filters with peak 1 between
// num_mel_bins + 2 points spaced on mel(f) = 2595 log10(1 + f / 700); as the reference, the mel
// step is (mel(upper) - mel(lower)) / (num_mel_bins + 2) and the points map to DFT bins
// floor((dft_length + 1) f / sample_rate).
#include <cmath>
#include <numbers>

#include "const_eval.h"
#include "context.h"
#include "tensor_convert.h"

namespace tessera::frontend::onnx_import {

namespace {

DataType OutputType(NodeContext& ctx) {
  return DataTypeFromONNX(static_cast<int>(ctx.AttrInt("output_datatype", 1)), ctx.Where());
}

double Scalar(NodeContext& ctx, int i, const std::string& what) {
  const std::vector<double> v = ctx.InputDoubles(i, what);
  if (v.size() != 1) ctx.Fail(what + " must be a scalar");
  return v[0];
}

enum class Window { kHann, kHamming, kBlackman };

// A window whose size is a run-time value: the same formulas in float64 graph ops over n =
// vm.range(0, size) (graph/op/vm.cc), run by the VM, then cast to output_datatype.
void RunTimeWindow(NodeContext& ctx, Window kind, int64_t periodic) {
  const DataType st = ctx.InputType(0).dtype, f64 = DataType::Float(64);
  if (!st.is_int()) ctx.Fail("size must be an int32 or int64 scalar, got " + st.str());
  const graph::Expr size = ctx.Input(0), zero = ctx.ScalarConst(0, st), one = ctx.ScalarConst(1, st);
  const graph::Expr length = ctx.Call("vm.range_shape", {zero, size, one}, graph::Attrs{{"source", ctx.Label()}});
  const graph::Expr n = ctx.Call("vm.range", {zero, one, length}, graph::Attrs{{"symbols", ctx.OutputSymbols(1)}});
  auto cast = [&](const graph::Expr& e, DataType t) { return ctx.Call("cast", {e}, graph::Attrs{{"dtype", t.str()}}); };
  auto c = [&](double v) { return ctx.ScalarConst(v, f64); };
  auto mul = [&](const graph::Expr& a, const graph::Expr& b) { return ctx.Call("multiply", {a, b}); };
  auto sub = [&](const graph::Expr& a, const graph::Expr& b) { return ctx.Call("subtract", {a, b}); };
  const graph::Expr x = cast(n, f64);
  graph::Expr n_div = cast(size, f64);
  if (!periodic) n_div = sub(n_div, c(1));
  // angle(k) = k pi x / N, as the compile-time form computes it.
  auto angle = [&](double k) { return ctx.Call("divide", {mul(x, c(k * std::numbers::pi)), n_div}); };
  graph::Expr w;
  switch (kind) {
    case Window::kHann: {
      const graph::Expr s = ctx.Call("sin", {angle(1)});
      w = mul(s, s);
      break;
    }
    case Window::kHamming: {
      const double a = 25.0 / 46.0;
      w = sub(c(a), mul(ctx.Call("cos", {angle(2)}), c(1 - a)));
      break;
    }
    case Window::kBlackman:
      w = ctx.Call("add", {sub(c(0.42), mul(c(0.5), ctx.Call("cos", {angle(2)}))), mul(c(0.08), ctx.Call("cos", {angle(4)}))});
      break;
  }
  ctx.SetOutput(0, cast(w, OutputType(ctx)));
}

void ConvertWindow(NodeContext& ctx, Window kind) {
  const int64_t periodic = ctx.AttrInt("periodic", 1);
  if (periodic != 0 && periodic != 1) ctx.Fail("periodic must be 0 or 1");
  if (ctx.InputIsRunTime(0)) return RunTimeWindow(ctx, kind, periodic);
  const double size_d = Scalar(ctx, 0, "size");
  const int64_t size = static_cast<int64_t>(size_d);
  if (size < 0 || static_cast<double>(size) != size_d) ctx.Fail("size must be an integer >= 0");
  const double n_div = static_cast<double>(periodic ? size : size - 1);
  const double pi = std::numbers::pi;
  std::vector<double> w;
  for (int64_t n = 0; n < size; ++n) {
    const double x = static_cast<double>(n);
    switch (kind) {
      case Window::kHann: {
        const double s = std::sin(pi * x / n_div);
        w.push_back(s * s);
        break;
      }
      case Window::kHamming: {
        const double a = 25.0 / 46.0;
        w.push_back(a - std::cos(2 * pi * x / n_div) * (1 - a));
        break;
      }
      case Window::kBlackman:
        w.push_back(0.42 - 0.5 * std::cos(2 * pi * x / n_div) + 0.08 * std::cos(4 * pi * x / n_div));
        break;
    }
  }
  ctx.SetOutputConst(0, FromDoubles(w, {size}, OutputType(ctx)));
}

void ConvertMelWeightMatrix(NodeContext& ctx) {
  const int64_t mels = static_cast<int64_t>(Scalar(ctx, 0, "num_mel_bins"));
  const int64_t dft_length = static_cast<int64_t>(Scalar(ctx, 1, "dft_length"));
  const double rate = Scalar(ctx, 2, "sample_rate"), lower = Scalar(ctx, 3, "lower_edge_hertz"),
               upper = Scalar(ctx, 4, "upper_edge_hertz");
  if (mels < 1 || dft_length < 1 || rate <= 0) ctx.Fail("num_mel_bins, dft_length and sample_rate must be positive");
  if (lower < 0 || upper < lower) ctx.Fail("need 0 <= lower_edge_hertz <= upper_edge_hertz");
  const int64_t bins = dft_length / 2 + 1;
  auto mel = [](double f) { return 2595.0 * std::log1p(f / 700.0) / std::log(10.0); };
  const double lo_mel = mel(lower), step = (mel(upper) - lo_mel) / static_cast<double>(mels + 2);
  std::vector<int64_t> point(mels + 2);
  for (int64_t i = 0; i < mels + 2; ++i) {
    const double hz = 700.0 * std::expm1((static_cast<double>(i) * step + lo_mel) / 2595.0 * std::log(10.0));
    point[i] = static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / rate));
  }
  if (point[mels + 1] > bins || point[mels] >= bins)
    ctx.Fail("upper_edge_hertz maps past the last DFT bin (sample_rate / 2)");
  std::vector<double> out(static_cast<size_t>(bins * mels), 0.0);
  for (int64_t i = 0; i < mels; ++i) {
    const int64_t left = point[i], center = point[i + 1], right = point[i + 2];
    if (center == left) {
      out[center * mels + i] = 1.0;
    } else {
      for (int64_t j = left; j <= center; ++j)
        out[j * mels + i] = static_cast<double>(j - left) / static_cast<double>(center - left);
    }
    for (int64_t j = center; j < right; ++j)
      out[j * mels + i] = static_cast<double>(right - j) / static_cast<double>(right - center);
  }
  ctx.SetOutputConst(0, FromDoubles(out, {bins, mels}, OutputType(ctx)));
}

}  // namespace

void RegisterWindowConverters(ConverterTable& t) {
  t["HannWindow"] = [](NodeContext& ctx) { ConvertWindow(ctx, Window::kHann); };
  t["HammingWindow"] = [](NodeContext& ctx) { ConvertWindow(ctx, Window::kHamming); };
  t["BlackmanWindow"] = [](NodeContext& ctx) { ConvertWindow(ctx, Window::kBlackman); };
  t["MelWeightMatrix"] = ConvertMelWeightMatrix;
}

}  // namespace tessera::frontend::onnx_import
