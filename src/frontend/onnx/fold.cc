#include "fold.h"

#include <cmath>

#include "const_eval.h"
#include "tessera/support/error.h"

namespace tessera::frontend::onnx_import {

namespace {
std::vector<long double> Values(const runtime::NDArray& a) {
  std::vector<long double> out;
  if (a.dtype().is_floating()) {
    for (double v : ToDoubles(a)) out.push_back(v);
  } else {
    for (int64_t v : ToInts(a)) out.push_back(static_cast<long double>(v));
  }
  return out;
}

std::vector<int64_t> BroadcastOf(const std::vector<std::vector<int64_t>>& shapes) {
  size_t nd = 0;
  for (const auto& s : shapes) nd = std::max(nd, s.size());
  std::vector<int64_t> out(nd, 1);
  for (const auto& s : shapes) {
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[nd - s.size() + i];
      if (s[i] == 1) continue;
      if (o != 1 && o != s[i]) TESSERA_THROW(UserError, "shapes do not broadcast");
      o = s[i];
    }
  }
  return out;
}
}  // namespace

runtime::NDArray FoldBroadcast(const std::vector<runtime::NDArray>& ins, DataType out_dtype,
                               const std::function<long double(const std::vector<long double>&)>& f) {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::vector<long double>> vals;
  for (const auto& a : ins) {
    shapes.push_back(a.shape());
    vals.push_back(Values(a));
  }
  std::vector<int64_t> out_shape = BroadcastOf(shapes);
  int64_t n = 1;
  for (int64_t d : out_shape) n *= d;
  const size_t nd = out_shape.size();
  std::vector<long double> result(n);
  std::vector<int64_t> idx(nd, 0);
  std::vector<long double> args(ins.size());
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t rem = flat;
    for (size_t d = nd; d-- > 0;) {
      idx[d] = rem % out_shape[d];
      rem /= out_shape[d];
    }
    for (size_t k = 0; k < ins.size(); ++k) {
      const auto& s = shapes[k];
      int64_t off = 0;
      for (size_t i = 0; i < s.size(); ++i) off = off * s[i] + (s[i] == 1 ? 0 : idx[nd - s.size() + i]);
      args[k] = vals[k][off];
    }
    result[flat] = f(args);
  }
  if (out_dtype.is_floating()) {
    std::vector<double> r(result.begin(), result.end());
    return FromDoubles(r, out_shape, out_dtype);
  }
  std::vector<int64_t> r;
  for (long double v : result) r.push_back(std::isfinite(v) ? static_cast<int64_t>(v) : 0);
  return FromInts(r, out_shape, out_dtype);
}

bool CanFold(NodeContext& ctx, int required) {
  if (!ctx.AllInputsConst(required)) return false;
  std::vector<std::vector<int64_t>> shapes;
  for (int i = 0; i < ctx.NumInputs(); ++i)
    if (ctx.HasInput(i)) shapes.push_back(ctx.InputConst(i).shape());
  try {
    int64_t n = 1;
    for (int64_t d : BroadcastOf(shapes)) n *= d;
    return n <= kMaxFoldElements;
  } catch (const UserError&) {
    return false;
  }
}

}  // namespace tessera::frontend::onnx_import
