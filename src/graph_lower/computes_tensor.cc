// FComputes of the elementwise and broadcasting ops.
#include <functional>

#include "computes.h"
#include "tessera/topi/broadcast.h"
#include "tessera/topi/elemwise.h"
#include "tessera/topi/math.h"

namespace tessera::graph_lower::detail {

namespace {
using graph::Attrs;
using graph::Type;
using te::Tensor;
using Tensors = std::vector<Tensor>;

graph::FCompute Unary(Tensor (*f)(const Tensor&)) {
  return [f](const Attrs&, const Tensors& in, const Type&) -> Tensors { return {f(in[0])}; };
}
graph::FCompute Binary(Tensor (*f)(const Tensor&, const Tensor&)) {
  return [f](const Attrs&, const Tensors& in, const Type&) -> Tensors { return {f(in[0], in[1])}; };
}
}  // namespace

void RegisterTensorComputes(graph::OpRegistry& r) {
  r.SetCompute("exp", Unary(&topi::exp));
  r.SetCompute("log", Unary(&topi::log));
  r.SetCompute("sqrt", Unary(&topi::sqrt));
  r.SetCompute("tanh", Unary(&topi::tanh));
  r.SetCompute("sigmoid", Unary(&topi::sigmoid));
  r.SetCompute("negative", Unary(&topi::negative));
  r.SetCompute("abs", Unary(&topi::abs));
  r.SetCompute("hard_swish", Unary(&topi::hard_swish));
  r.SetCompute("copy", [](const Attrs&, const Tensors& in, const Type&) -> Tensors { return {topi::copy(in[0])}; });
  r.SetCompute("clip", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::clip(in[0], a.GetDouble("a_min"), a.GetDouble("a_max"))};
  });
  r.SetCompute("hard_sigmoid", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::hard_sigmoid(in[0], a.GetDouble("alpha", 0.2), a.GetDouble("beta", 0.5))};
  });
  r.SetCompute("cast", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::cast(in[0], DataType::Parse(a.GetString("dtype")))};
  });
  r.SetCompute("add", Binary(&topi::add));
  r.SetCompute("subtract", Binary(&topi::subtract));
  r.SetCompute("multiply", Binary(&topi::multiply));
  r.SetCompute("divide", Binary(&topi::divide));
  r.SetCompute("power", Binary(&topi::power));
  r.SetCompute("maximum", Binary(&topi::maximum));
  r.SetCompute("minimum", Binary(&topi::minimum));
}

}  // namespace tessera::graph_lower::detail
