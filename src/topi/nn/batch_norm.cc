#include "tessera/topi/nn/batch_norm.h"

#include "tessera/support/error.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

Tensor batch_norm_inference(const Tensor& data, const Tensor& gamma, const Tensor& beta, const Tensor& mean,
                            const Tensor& var, int64_t axis_in, double epsilon) {
  TESSERA_CHECK(data.dtype().is_float(), "batch_norm needs a float tensor, got ", data.dtype().str());
  std::vector<int64_t> ds = ConstShape(data);
  const int axis = NormalizeAxis(axis_in, static_cast<int>(ds.size()), "batch_norm");
  for (const Tensor* t : {&gamma, &beta, &mean, &var}) {
    std::vector<int64_t> s = ConstShape(*t);
    TESSERA_CHECK(s.size() == 1 && s[0] == ds[axis] && t->dtype() == data.dtype(), "batch_norm: ", t->name(),
                  " must be 1-D of extent ", ds[axis], " and dtype ", data.dtype().str());
  }
  PrimExpr eps = ir::make_const(data.dtype(), epsilon);
  return te::compute(
      data.shape(),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> c{i[axis]};
        return (data(AsExprs(i)) - mean(c)) / ir::sqrt(var(c) + eps) * gamma(c) + beta(c);
      },
      "T_batch_norm", tag::kBroadcast);
}

}  // namespace tessera::topi
