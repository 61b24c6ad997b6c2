#include "tessera/topi/broadcast.h"

#include "tessera/support/error.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

namespace {
std::string Str(const std::vector<int64_t>& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}
}  // namespace

std::vector<int64_t> BroadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    TESSERA_CHECK(da == db || da == 1 || db == 1, "shapes ", Str(a), " and ", Str(b), " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

PrimExpr BroadcastRead(const Tensor& t, const std::vector<Var>& out_index) {
  const std::vector<PrimExpr>& shape = t.shape();
  size_t offset = out_index.size() - shape.size();
  std::vector<PrimExpr> idx;
  for (size_t i = 0; i < shape.size(); ++i)
    idx.push_back(IsConst(shape[i], 1) ? Index(0) : PrimExpr(out_index[offset + i]));
  return t(idx);
}

Tensor BroadcastBinary(const Tensor& a, const Tensor& b, const BinaryFn& f, const std::string& name) {
  TESSERA_CHECK(a.dtype() == b.dtype(), name, ": operand dtypes differ (", a.dtype().str(), " vs ", b.dtype().str(),
                "); insert a cast");
  const std::vector<PrimExpr>& sa = a.shape();
  const std::vector<PrimExpr>& sb = b.shape();
  const std::vector<PrimExpr> out = BroadcastExtents(sa, sb);
  const char* tg = (SameExtents(sa, out) && SameExtents(sb, out)) ? tag::kElemWise : tag::kBroadcast;
  return te::compute(
      out, [&](const std::vector<Var>& i) { return f(BroadcastRead(a, i), BroadcastRead(b, i)); }, name,
      tg);
}

Tensor add(const Tensor& a, const Tensor& b) {
  return BroadcastBinary(a, b, [](PrimExpr x, PrimExpr y) { return x + y; }, "T_add");
}
Tensor subtract(const Tensor& a, const Tensor& b) {
  return BroadcastBinary(a, b, [](PrimExpr x, PrimExpr y) { return x - y; }, "T_subtract");
}
Tensor multiply(const Tensor& a, const Tensor& b) {
  return BroadcastBinary(a, b, [](PrimExpr x, PrimExpr y) { return x * y; }, "T_multiply");
}
Tensor divide(const Tensor& a, const Tensor& b) {
  return BroadcastBinary(a, b, [](PrimExpr x, PrimExpr y) { return x / y; }, "T_divide");
}
Tensor power(const Tensor& a, const Tensor& b) {
  TESSERA_CHECK(a.dtype().is_float(), "power needs float tensors, got ", a.dtype().str());
  return BroadcastBinary(a, b, [](PrimExpr x, PrimExpr y) { return ir::pow(x, y); }, "T_power");
}
Tensor maximum(const Tensor& a, const Tensor& b) {
  return BroadcastBinary(a, b, [](PrimExpr x, PrimExpr y) { return ir::max(x, y); }, "T_maximum");
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  return BroadcastBinary(a, b, [](PrimExpr x, PrimExpr y) { return ir::min(x, y); }, "T_minimum");
}

}  // namespace tessera::topi
