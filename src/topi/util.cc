#include "tessera/topi/util.h"

#include <algorithm>

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

bool IsConst(const PrimExpr& e, int64_t v) {
  int64_t c = 0;
  return ir::as_const_int(e, &c) && c == v;
}

bool SameExtent(const PrimExpr& a, const PrimExpr& b) {
  int64_t x = 0, y = 0;
  if (ir::as_const_int(a, &x) && ir::as_const_int(b, &y)) return x == y;
  return a.get() == b.get();
}

bool SameExtents(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!SameExtent(a[i], b[i])) return false;
  return true;
}

std::string ShapeString(const std::vector<PrimExpr>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t v = 0;
    const auto* var = dims[i].as<ir::VarNode>();
    out += (i ? ", " : "") + (ir::as_const_int(dims[i], &v) ? std::to_string(v) : var ? var->name_hint : "?");
  }
  return out + "]";
}

std::vector<PrimExpr> BroadcastExtents(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
  const size_t n = std::max(a.size(), b.size());
  std::vector<PrimExpr> out(n);
  for (size_t i = 0; i < n; ++i) {
    PrimExpr da = i < n - a.size() ? Index(1) : a[i - (n - a.size())];
    PrimExpr db = i < n - b.size() ? Index(1) : b[i - (n - b.size())];
    TESSERA_CHECK(SameExtent(da, db) || IsConst(da, 1) || IsConst(db, 1), "shapes ", ShapeString(a), " and ",
                  ShapeString(b), " do not broadcast");
    out[i] = IsConst(da, 1) ? db : da;
  }
  return out;
}

PrimExpr ExtentProduct(const std::vector<PrimExpr>& shape) {
  PrimExpr p = Index(1);
  for (const PrimExpr& d : shape) p = IsConst(p, 1) ? d : p * d;
  return p;
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

std::vector<PrimExpr> Unravel(PrimExpr flat, const std::vector<int64_t>& shape) { return Unravel(flat, MakeShape(shape)); }

std::vector<PrimExpr> Unravel(PrimExpr flat, const std::vector<PrimExpr>& shape) {
  std::vector<PrimExpr> idx(shape.size());
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    if (i == 0) {
      idx[i] = flat;
    } else {
      idx[i] = ir::floormod(flat, shape[i]);
      flat = ir::floordiv(flat, shape[i]);
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
