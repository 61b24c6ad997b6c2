#include "tessera/topi/elemwise.h"

#include "tessera/topi/tags.h"

namespace tessera::topi {

Tensor Unary(const Tensor& x, const UnaryFn& f, const std::string& name) {
  return te::compute(
      x.shape(), [&](const std::vector<Var>& i) { return f(x(AsExprs(i))); }, name, tag::kElemWise);
}

Tensor copy(const Tensor& x, const std::string& name) {
  return Unary(x, [](PrimExpr v) { return v; }, name);
}

}  // namespace tessera::topi
