#include "tessera/topi/nn/bias_add.h"

#include "tessera/support/error.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

Tensor bias_add(const Tensor& data, const Tensor& bias, int64_t axis_in) {
  std::vector<int64_t> ds = ConstShape(data), bs = ConstShape(bias);
  int axis = NormalizeAxis(axis_in, static_cast<int>(ds.size()), "bias_add");
  TESSERA_CHECK(bs.size() == 1 && bs[0] == ds[axis], "bias_add: bias must be 1-D of extent ", ds[axis]);
  TESSERA_CHECK(data.dtype() == bias.dtype(), "bias_add: dtypes differ");
  return te::compute(
      data.shape(), [&](const std::vector<Var>& i) { return data(AsExprs(i)) + bias({PrimExpr(i[axis])}); }, "T_bias_add",
      tag::kBroadcast);
}

}  // namespace tessera::topi
