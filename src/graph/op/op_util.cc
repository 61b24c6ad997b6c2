#include "op_util.h"

#include "tessera/support/checked_math.h"
#include "tessera/support/error.h"

namespace tessera::graph::op {

const TensorTypeNode& TensorArg(const std::vector<Type>& args, size_t i) {
  TESSERA_CHECK(i < args.size() && args[i] != nullptr, "missing argument ", i);
  auto* t = args[i]->as<TensorTypeNode>();
  TESSERA_CHECK(t != nullptr, "argument ", i, " must be a tensor, got ", args[i]->str());
  return *t;
}

Dim BroadcastDim(const Dim& a, const Dim& b) {
  if (a == b) return a;
  if (a.is_static() && a.value() == 1) return b;
  if (b.is_static() && b.value() == 1) return a;
  if (a.is_static() && b.is_static()) {
    TESSERA_THROW(UserError, "dimensions ", a.value(), " and ", b.value(),
                  " cannot be broadcast (numpy rules: equal, or one of them is 1)");
  }
  if (a.is_static()) return a;
  if (b.is_static()) return b;
  if (a.name() == "?") return b;
  if (b.name() == "?") return a;
  TESSERA_THROW(UserError, "symbolic dimensions ", a.name(), " and ", b.name(),
                " cannot be broadcast: bind them to static extents");
}

Shape BroadcastShapes(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    // right-aligned: position i counts from the left of the longer shape
    size_t ia = i + a.size(), ib = i + b.size();
    bool has_a = ia >= n, has_b = ib >= n;
    if (has_a && has_b) {
      try {
        out[i] = BroadcastDim(a[ia - n], b[ib - n]);
      } catch (const UserError& e) {
        TESSERA_THROW(UserError, "shapes ", ShapeStr(a), " and ", ShapeStr(b), " cannot be broadcast: ", e.what());
      }
    } else {
      out[i] = has_a ? a[ia - n] : b[ib - n];
    }
  }
  return out;
}

int64_t NormalizeAxis(int64_t axis, int64_t ndim) {
  int64_t a = axis < 0 ? axis + ndim : axis;
  TESSERA_CHECK(a >= 0 && a < ndim, "axis ", axis, " is out of range for a tensor of rank ", ndim);
  return a;
}

void CheckSameDtype(const TensorTypeNode& a, const TensorTypeNode& b) {
  TESSERA_CHECK(a.dtype == b.dtype, "dtypes differ: ", a.dtype.str(), " vs ", b.dtype.str());
}

std::vector<int64_t> Padding2D(const Attrs& attrs) {
  std::vector<int64_t> p = attrs.GetInts("padding", {0, 0, 0, 0});
  if (p.size() == 1) return {p[0], p[0], p[0], p[0]};
  if (p.size() == 2) return {p[0], p[1], p[0], p[1]};
  TESSERA_CHECK(p.size() == 4, "padding must have 1, 2 or 4 values, got ", p.size());
  return p;
}

Dim WindowOutDim(const Dim& in, int64_t pad_total, int64_t kernel, int64_t stride, int64_t dilation,
                 bool ceil_mode, int64_t pad_begin) {
  TESSERA_CHECK(stride >= 1, "stride must be >= 1, got ", stride);
  TESSERA_CHECK(dilation >= 1, "dilation must be >= 1, got ", dilation);
  TESSERA_CHECK(kernel >= 1, "kernel extent must be >= 1, got ", kernel);
  if (!in.is_static()) return Dim::Any();
  const int64_t eff = CheckedAdd(CheckedMul(kernel - 1, dilation, "the dilated window extent"), 1, "the dilated window extent");
  const int64_t span = CheckedAdd(in.value(), pad_total, "the padded input extent") - eff;
  TESSERA_CHECK(span >= 0, "window of extent ", eff, " (kernel ", kernel, ", dilation ", dilation,
                ") is larger than the padded input extent ", in.value() + pad_total);
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in.value() + pad_begin) --out;
  return Dim(out);
}

Type IdentityRel(const std::vector<Type>& args, const Attrs&) {
  const TensorTypeNode& t = TensorArg(args, 0);
  return TensorTypeNode::make(t.shape, t.dtype);
}

std::vector<Dim> SymbolsAttr(const Attrs& attrs, const std::string& key) {
  const std::string& names = attrs.GetString(key);
  std::vector<Dim> out;
  for (size_t at = 0; !names.empty() && at <= names.size();) {
    size_t comma = names.find(',', at);
    if (comma == std::string::npos) comma = names.size();
    TESSERA_CHECK(comma > at, "attr ", key, " '", names, "' has an empty name");
    out.push_back(Dim::Symbolic(names.substr(at, comma - at)));
    at = comma + 1;
  }
  return out;
}

}  // namespace tessera::graph::op
