// FComputes of the activation ops and log_softmax (op/activation.cc).
#include "computes.h"
#include "tessera/topi/nn/activation.h"
#include "tessera/topi/nn/softmax.h"

namespace tessera::graph_lower::detail {

void RegisterActivationComputes(graph::OpRegistry& r) {
  r.SetCompute("nn.leaky_relu", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::leaky_relu(in[0], a.GetDouble("alpha", 0.01))};
  });
  r.SetCompute("nn.elu", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::elu(in[0], a.GetDouble("alpha", 1.0))};
  });
  r.SetCompute("nn.selu", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::selu(in[0], a.GetDouble("alpha", 1.67326319217681884765625),
                       a.GetDouble("gamma", 1.05070102214813232421875))};
  });
  r.SetCompute("nn.celu", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::celu(in[0], a.GetDouble("alpha", 1.0))};
  });
  r.SetCompute("nn.thresholded_relu", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::thresholded_relu(in[0], a.GetDouble("alpha", 1.0))};
  });
  r.SetCompute("nn.softplus", [](const Attrs&, const Tensors& in, const Type&) -> Tensors {
    return {topi::softplus(in[0])};
  });
  r.SetCompute("nn.softsign", [](const Attrs&, const Tensors& in, const Type&) -> Tensors {
    return {topi::softsign(in[0])};
  });
  r.SetCompute("nn.mish", [](const Attrs&, const Tensors& in, const Type&) -> Tensors { return {topi::mish(in[0])}; });
  r.SetCompute("nn.gelu", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::gelu(in[0], a.GetString("approximate", "none") == "tanh")};
  });
  r.SetCompute("nn.swish", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::swish(in[0], a.GetDouble("alpha", 1.0))};
  });
  r.SetCompute("nn.shrink", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::shrink(in[0], a.GetDouble("lambd", 0.5), a.GetDouble("bias", 0.0))};
  });
  r.SetCompute("nn.prelu", [](const Attrs&, const Tensors& in, const Type&) -> Tensors {
    return {topi::prelu(in[0], in[1])};
  });
  r.SetCompute("nn.log_softmax", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::log_softmax(in[0], a.GetInt("axis", -1))};
  });
}

}  // namespace tessera::graph_lower::detail
