// ONNX DFT-17/20 and STFT-17 as matrix products with constant twiddle matrices (O(n^2) per
// transform; exact for the short signals models carry, and FoldConstant / the GEMM schedule
// apply unchanged). Spec: onnx.defs.get_schema("DFT" / "STFT").doc; reference
// onnx/reference/ops/op_dft.py (numpy.fft) and op_stft.py.
//
// DFT: x [.., n, .., 1 | 2] (real | complex, the signal at `axis`), length L = dft_length
// (default n; IRFFT: 2 (n - 1)); the signal is truncated or zero-padded to L.
//   forward:            X[k] = sum_t x[t] e^{-2 pi i k t / L}, k < L (onesided: k <= L / 2; the
//                       spec asks a real input there, the reference also takes a complex one)
//   inverse:            x[t] = 1/L sum_k X[k] e^{+2 pi i k t / L}  (complex output)
//   inverse + onesided: IRFFT (numpy.fft.irfft): the first L / 2 + 1 bins extended by conjugate
//                       symmetry, real output [.., L, .., 1]; the imaginary parts of bin 0 and
//                       (L even) bin L / 2 are ignored.
// axis: opset 17 attribute (default 1); opset 20 input (default -2); one read at run time selects
// among one DFT per axis (run_time_switch.h; the output types must agree).
// With the signal axis moved last, (re, im) [B, n] -> re @ A + im @ B for each output part.
//
// STFT: signal [batch, len, 1 | 2], frame_step, window [W] (optional), frame_length (optional,
// default W, else len): frames = 1 + (len - frame_length) / frame_step; each frame (a take of the
// signal) times the window, then a DFT of length frame_length (onesided by default) ->
// [batch, frames, bins, 2].
#include <cmath>
#include <numbers>
#include <optional>

#include "const_eval.h"
#include "context.h"
#include "graph_build.h"
#include "run_time_switch.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

struct DftSpec {
  int64_t length;  // L
  bool inverse, onesided;
};

// cos / sin of 2 pi (k t mod L) / L, computed in double with the exact index reduction.
double Angle(int64_t k, int64_t t, int64_t l) {
  return 2.0 * std::numbers::pi * static_cast<double>((k * t) % l) / static_cast<double>(l);
}

/// The DFT of `x` along `axis` (x's layout [.., n, .., c], c = 1 or 2); returns [.., out, .., 1 | 2].
Expr EmitDft(NodeContext& ctx, Expr x, int64_t axis, const DftSpec& spec) {
  std::vector<int64_t> xs = StaticShape(ctx, x);
  const int64_t rank = static_cast<int64_t>(xs.size());
  const DataType dt = ctx.InputType(0).dtype;
  const int64_t l = spec.length, c = xs[rank - 1];
  const bool complex_in = c == 2;
  const bool irfft = spec.inverse && spec.onesided;
  // Move the signal axis just before the complex axis.
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != axis) perm.push_back(d);
  perm.push_back(axis);
  perm.push_back(rank - 1);
  const bool moved = axis != rank - 2;
  if (moved) x = Transpose(ctx, x, perm);
  // Rows used: the signal truncated to L (IRFFT: to L / 2 + 1 bins); missing rows are zeros.
  const int64_t n = xs[axis];
  const int64_t n_use = std::min(n, irfft ? l / 2 + 1 : l);
  if (n_use < n) x = SliceAxis(ctx, x, rank - 2, 0, n_use);
  const int64_t out = irfft ? l : (spec.onesided ? l / 2 + 1 : l);
  Expr re = ctx.Call("squeeze", {SliceAxis(ctx, x, rank - 1, 0, 1)}, Attrs{{"axis", std::vector<int64_t>{rank - 1}}});
  Expr im;
  if (complex_in) im = ctx.Call("squeeze", {SliceAxis(ctx, x, rank - 1, 1, 2)}, Attrs{{"axis", std::vector<int64_t>{rank - 1}}});
  // Matrices [n_use, out]: re_out = re @ rr + im @ ir, im_out = re @ ri + im @ ii.
  std::vector<double> rr, ir, ri, ii;
  const double scale = spec.inverse ? 1.0 / static_cast<double>(l) : 1.0;
  for (int64_t t = 0; t < n_use; ++t)
    for (int64_t k = 0; k < out; ++k) {
      if (irfft) {  // t: the input bin, k: the output sample
        const bool edge = t == 0 || (l % 2 == 0 && t == l / 2);
        const double w = (edge ? 1.0 : 2.0) * scale, a = Angle(t, k, l);
        rr.push_back(w * std::cos(a));
        ir.push_back(edge ? 0.0 : -w * std::sin(a));
        continue;
      }
      const double a = Angle(k, t, l), cs = std::cos(a) * scale, sn = std::sin(a) * scale;
      if (spec.inverse) {  // e^{+i a}
        rr.push_back(cs), ir.push_back(-sn), ri.push_back(sn), ii.push_back(cs);
      } else {  // e^{-i a}
        rr.push_back(cs), ir.push_back(sn), ri.push_back(-sn), ii.push_back(cs);
      }
    }
  auto mat = [&](const std::vector<double>& v) { return graph::ConstantNode::make(FromDoubles(v, {n_use, out}, dt)); };
  auto mm = [&](Expr a, const std::vector<double>& m) { return ctx.Call("nn.matmul", {a, mat(m)}); };
  Expr re_out = mm(re, rr);
  if (complex_in) re_out = ctx.Call("add", {re_out, mm(im, ir)});
  std::vector<Expr> parts = {ctx.Call("expand_dims", {re_out}, Attrs{{"axis", rank - 1}, {"num_newaxis", int64_t{1}}})};
  if (!irfft) {
    Expr im_out = mm(re, ri);
    if (complex_in) im_out = ctx.Call("add", {im_out, mm(im, ii)});
    parts.push_back(ctx.Call("expand_dims", {im_out}, Attrs{{"axis", rank - 1}, {"num_newaxis", int64_t{1}}}));
  }
  Expr y = parts.size() == 1 ? parts[0] : Concat(ctx, parts, rank - 1);
  if (moved) {
    std::vector<int64_t> inv(rank);
    for (int64_t d = 0; d < rank; ++d) inv[perm[d]] = d;
    y = Transpose(ctx, y, inv);
  }
  return y;
}

void ConvertDFT(NodeContext& ctx) {
  const std::vector<int64_t> xs = ctx.InputShape(0);
  const int64_t rank = static_cast<int64_t>(xs.size());
  const DataType dt = ctx.InputType(0).dtype;
  if (!dt.is_float()) ctx.Fail("input must be a float tensor, got " + dt.str());
  if (rank < 2 || (xs[rank - 1] != 1 && xs[rank - 1] != 2))
    ctx.Fail("input must be [.., 1] (real) or [.., 2] (complex) of rank >= 2");
  DftSpec spec;
  spec.inverse = ctx.AttrInt("inverse", 0) != 0;
  spec.onesided = ctx.AttrInt("onesided", 0) != 0;
  if (spec.inverse && spec.onesided && xs[rank - 1] != 2) ctx.Fail("IRFFT (inverse with onesided) needs a complex input");
  std::optional<int64_t> length;
  if (ctx.HasInput(1)) {
    const std::vector<int64_t> l = ctx.InputInts(1, "dft_length");
    if (l.size() != 1) ctx.Fail("dft_length must be a scalar");
    if (l[0] < 1) ctx.Fail("dft_length must be >= 1, got " + std::to_string(l[0]));
    length = l[0];
  }
  auto along = [&](int64_t axis) {  // axis in [0, rank - 2]
    DftSpec s = spec;
    s.length = length ? *length : spec.inverse && spec.onesided ? 2 * (xs[axis] - 1) : xs[axis];
    if (s.length < 1) ctx.Fail("the DFT length along axis " + std::to_string(axis) + " must be >= 1");
    return EmitDft(ctx, ctx.Input(0), axis, s);
  };
  int64_t axis = ctx.opset() >= 20 ? -2 : ctx.AttrInt("axis", 1);
  if (ctx.opset() >= 20 && ctx.HasInput(2)) {
    if (!ctx.InputConst(2).defined()) {  // one DFT per axis, chosen at run time (run_time_switch.h)
      ctx.SetOutput(0, SwitchOnRunTimeInt(ctx, 2, rank - 1, rank, "DFT's axis", along));
      return;
    }
    const std::vector<int64_t> a = ctx.InputInts(2, "axis");
    if (a.size() != 1) ctx.Fail("axis must be a scalar");
    axis = a[0];
  }
  if (axis < -rank || axis > rank - 2 || axis == -1)
    ctx.Fail("axis " + std::to_string(axis) + " is out of range [-r, -2] U [0, r-2] for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  ctx.SetOutput(0, along(axis));
}

void ConvertSTFT(NodeContext& ctx) {
  const std::vector<int64_t> xs = ctx.InputShape(0);
  const DataType dt = ctx.InputType(0).dtype;
  if (!dt.is_float()) ctx.Fail("signal must be a float tensor, got " + dt.str());
  if (xs.size() != 3 || (xs[2] != 1 && xs[2] != 2)) ctx.Fail("signal must be [batch, length, 1 | 2]");
  const std::vector<int64_t> step_v = ctx.InputInts(1, "frame_step");
  if (step_v.size() != 1 || step_v[0] < 1) ctx.Fail("frame_step must be a scalar >= 1");
  const int64_t step = step_v[0];
  int64_t fl = xs[1];
  if (ctx.HasInput(2)) {
    const std::vector<int64_t> ws = ctx.InputShape(2);
    if (ws.size() != 1) ctx.Fail("window must be 1-D");
    fl = ws[0];
  }
  if (ctx.HasInput(3)) {
    const std::vector<int64_t> f = ctx.InputInts(3, "frame_length");
    if (f.size() != 1) ctx.Fail("frame_length must be a scalar");
    if (ctx.HasInput(2) && f[0] != fl) ctx.Fail("frame_length must equal the window length");
    fl = f[0];
  }
  if (fl < 1 || fl > xs[1]) ctx.Fail("frame_length must be in [1, signal length], got " + std::to_string(fl));
  const bool onesided = ctx.AttrInt("onesided", 1) != 0;
  const int64_t frames = 1 + (xs[1] - fl) / step;
  std::vector<int64_t> idx;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t t = 0; t < fl; ++t) idx.push_back(f * step + t);
  Expr at = graph::ConstantNode::make(FromInts(idx, {frames, fl}, DataType::Int(64)));
  Expr framed = ctx.Call("take", {ctx.Input(0), at}, Attrs{{"axis", int64_t{1}}});  // [batch, frames, fl, c]
  if (ctx.HasInput(2)) {
    if (ctx.InputType(2).dtype != dt) ctx.Fail("window must have the signal's element type");
    framed = ctx.Call("multiply", {framed, Reshape(ctx, ctx.Input(2), {1, 1, fl, 1})});
  }
  ctx.SetOutput(0, EmitDft(ctx, framed, 2, DftSpec{fl, false, onesided}));
}

}  // namespace

void RegisterDftConverters(ConverterTable& t) {
  t["DFT"] = ConvertDFT;
  t["STFT"] = ConvertSTFT;
}

}  // namespace tessera::frontend::onnx_import
