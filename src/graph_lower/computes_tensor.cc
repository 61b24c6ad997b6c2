// FComputes of the elementwise and broadcasting ops.
#include <functional>

#include "computes.h"
#include "tessera/topi/broadcast.h"
#include "tessera/topi/elemwise.h"
#include "tessera/topi/math.h"

namespace tessera::graph_lower::detail {

void RegisterTensorComputes(graph::OpRegistry& r) {
  r.SetCompute("exp", UnaryCompute(&topi::exp));
  r.SetCompute("log", UnaryCompute(&topi::log));
  r.SetCompute("sqrt", UnaryCompute(&topi::sqrt));
  r.SetCompute("tanh", UnaryCompute(&topi::tanh));
  r.SetCompute("sigmoid", UnaryCompute(&topi::sigmoid));
  r.SetCompute("negative", UnaryCompute(&topi::negative));
  r.SetCompute("abs", UnaryCompute(&topi::abs));
  r.SetCompute("hard_swish", UnaryCompute(&topi::hard_swish));
  r.SetCompute("copy", [](const Attrs&, const Tensors& in, const Type&) -> Tensors { return {topi::copy(in[0])}; });
  r.SetCompute("clip", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::clip(in[0], a.GetDouble("a_min"), a.GetDouble("a_max"))};
  });
  r.SetCompute("hard_sigmoid", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::hard_sigmoid(in[0], a.GetDouble("alpha", 0.2), a.GetDouble("beta", 0.5))};
  });
  r.SetCompute("cast", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    tir::FloatCastOptions options;
    options.saturate = a.GetInt("saturate", 1) != 0;
    const std::string mode = a.GetString("round_mode", "up");
    options.round_mode = mode == "down" ? runtime::RoundMode::kDown
                         : mode == "nearest" ? runtime::RoundMode::kNearest : runtime::RoundMode::kUp;
    return {topi::cast(in[0], DataType::Parse(a.GetString("dtype")), options)};
  });
  r.SetCompute("reinterpret", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::reinterpret(in[0], DataType::Parse(a.GetString("dtype")))};
  });
  r.SetCompute("add", BinaryCompute(&topi::add));
  r.SetCompute("subtract", BinaryCompute(&topi::subtract));
  r.SetCompute("multiply", BinaryCompute(&topi::multiply));
  r.SetCompute("divide", BinaryCompute(&topi::divide));
  r.SetCompute("power", BinaryCompute(&topi::power));
  r.SetCompute("maximum", BinaryCompute(&topi::maximum));
  r.SetCompute("minimum", BinaryCompute(&topi::minimum));
}

}  // namespace tessera::graph_lower::detail
