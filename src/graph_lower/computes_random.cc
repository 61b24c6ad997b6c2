// FComputes of random.uniform_like and random.normal_like (op/random.cc): topi/random.h over the
// input's shape (only its extents are read).
#include "computes.h"
#include "tessera/topi/random.h"

namespace tessera::graph_lower::detail {

void RegisterRandomComputes(graph::OpRegistry& r) {
  r.SetCompute("random.uniform_like", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::random_uniform(in[0].shape(), DataType::Parse(a.GetString("dtype")),
                                 static_cast<uint64_t>(a.GetInt("key")), a.GetDouble("low"), a.GetDouble("high"))};
  });
  r.SetCompute("random.normal_like", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::random_normal(in[0].shape(), DataType::Parse(a.GetString("dtype")),
                                static_cast<uint64_t>(a.GetInt("key")), a.GetDouble("mean"), a.GetDouble("scale"))};
  });
}

}  // namespace tessera::graph_lower::detail
