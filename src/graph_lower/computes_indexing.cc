// FComputes of broadcast_to, tile, pad, gather_elements, gather_nd, scatter_elements, scatter_nd,
// trilu, argmax, argmin, topk_indices, unique_inverse (op/indexing.cc).
#include <optional>

#include "computes.h"
#include "tessera/topi/gather_scatter.h"
#include "tessera/topi/indexing.h"
#include "tessera/topi/unique.h"

namespace tessera::graph_lower::detail {

void RegisterIndexingComputes(graph::OpRegistry& r) {
  r.SetCompute("broadcast_to", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::broadcast_to(in[0], a.GetInts("shape"))};
  });
  r.SetCompute("tile", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::tile(in[0], a.GetInts("reps"))};
  });
  r.SetCompute("pad", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::pad_mode(in[0], a.GetInts("pad_before"), a.GetInts("pad_after"), a.GetString("mode", "constant"),
                           a.GetDouble("pad_value", 0.0))};
  });
  r.SetCompute("gather_elements", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::gather_elements(in[0], in[1], a.GetInt("axis", 0))};
  });
  r.SetCompute("gather_nd", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::gather_nd(in[0], in[1], a.GetInt("batch_dims", 0))};
  });
  r.SetCompute("scatter_elements", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::scatter_elements(in[0], in[1], in[2], a.GetInt("axis", 0), a.GetString("reduction", "none"))};
  });
  r.SetCompute("scatter_nd", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::scatter_nd(in[0], in[1], in[2], a.GetString("reduction", "none"))};
  });
  r.SetCompute("trilu", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::trilu(in[0], in[1], a.GetInt("upper", 1) != 0)};
  });
  r.SetCompute("unique_inverse", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    const std::optional<int64_t> axis = a.Has("axis") ? std::optional<int64_t>(a.GetInt("axis")) : std::nullopt;
    return {topi::unique_inverse(in[0], axis, a.GetInt("sorted", 1) != 0)};
  });
  r.SetCompute("topk_indices", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::topk_indices(in[0], a.GetInt("k"), a.GetInt("axis", -1), a.GetInt("largest", 1) != 0)};
  });
  r.SetCompute("argmax", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::argmax(in[0], a.GetInt("axis", 0), a.GetInt("keepdims", 1) != 0,
                         a.GetInt("select_last_index", 0) != 0)};
  });
  r.SetCompute("argmin", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::argmin(in[0], a.GetInt("axis", 0), a.GetInt("keepdims", 1) != 0,
                         a.GetInt("select_last_index", 0) != 0)};
  });
}

}  // namespace tessera::graph_lower::detail
