#include "tessera/topi/util.h"

#include "tessera/support/error.h"

namespace tessera::topi {

std::vector<PrimExpr> MakeShape(const std::vector<int64_t>& dims) {
  std::vector<PrimExpr> out;
  out.reserve(dims.size());
  for (int64_t d : dims) out.push_back(Index(d));
  return out;
}

std::vector<int64_t> ConstShape(const Tensor& t) {
  std::vector<int64_t> out;
  for (const PrimExpr& e : t.shape()) {
    int64_t v = 0;
    TESSERA_ICHECK(ir::as_const_int(e, &v), "tensor ", t.name(), " has a non-constant extent; topi needs static shapes");
    out.push_back(v);
  }
  return out;
}

std::string ShapeString(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + "]";
}

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

int NormalizeAxis(int64_t axis, int ndim, const std::string& op) {
  TESSERA_CHECK(axis >= -ndim && axis < ndim, op, ": axis ", axis, " is out of range for a tensor of rank ", ndim);
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

std::vector<PrimExpr> AsExprs(const std::vector<Var>& vars) { return std::vector<PrimExpr>(vars.begin(), vars.end()); }

std::vector<PrimExpr> Unravel(PrimExpr flat, const std::vector<int64_t>& shape) {
  std::vector<PrimExpr> idx(shape.size());
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    if (i == 0) {
      idx[i] = flat;
    } else {
      idx[i] = ir::floormod(flat, Index(shape[i]));
      flat = ir::floordiv(flat, Index(shape[i]));
    }
  }
  return idx;
}

PrimExpr Ravel(const std::vector<PrimExpr>& indices, const std::vector<int64_t>& shape) {
  PrimExpr flat = Index(0);
  for (size_t i = 0; i < shape.size(); ++i) flat = flat * Index(shape[i]) + indices[i];
  return flat;
}

}  // namespace tessera::topi
