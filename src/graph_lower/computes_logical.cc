// FComputes of the comparison, logic, where, mod and extra elementwise math ops (op/logical.cc).
#include "computes.h"
#include "tessera/topi/logical.h"
#include "tessera/topi/unary.h"

namespace tessera::graph_lower::detail {

void RegisterLogicalComputes(graph::OpRegistry& r) {
  r.SetCompute("equal", BinaryCompute(&topi::equal));
  r.SetCompute("not_equal", BinaryCompute(&topi::not_equal));
  r.SetCompute("less", BinaryCompute(&topi::less));
  r.SetCompute("less_equal", BinaryCompute(&topi::less_equal));
  r.SetCompute("greater", BinaryCompute(&topi::greater));
  r.SetCompute("greater_equal", BinaryCompute(&topi::greater_equal));
  r.SetCompute("logical_and", BinaryCompute(&topi::logical_and));
  r.SetCompute("logical_or", BinaryCompute(&topi::logical_or));
  r.SetCompute("logical_xor", BinaryCompute(&topi::logical_xor));
  r.SetCompute("bitwise_and", BinaryCompute(&topi::bitwise_and));
  r.SetCompute("bitwise_or", BinaryCompute(&topi::bitwise_or));
  r.SetCompute("bitwise_xor", BinaryCompute(&topi::bitwise_xor));
  r.SetCompute("shift_left", BinaryCompute(&topi::shift_left));
  r.SetCompute("shift_right", BinaryCompute(&topi::shift_right));
  r.SetCompute("bitwise_not", UnaryCompute(&topi::bitwise_not));
  r.SetCompute("logical_not", [](const Attrs&, const Tensors& in, const Type&) -> Tensors {
    return {topi::logical_not(in[0])};
  });
  r.SetCompute("where", [](const Attrs&, const Tensors& in, const Type&) -> Tensors {
    return {topi::where(in[0], in[1], in[2])};
  });
  r.SetCompute("mod", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::mod(in[0], in[1], a.GetInt("fmod", 0) != 0)};
  });
  for (const char* name : {"erf", "floor", "ceil", "round", "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan",
                           "sinh", "cosh", "asinh", "acosh", "atanh"}) {
    std::string op = name;
    r.SetCompute(op, [op](const Attrs&, const Tensors& in, const Type&) -> Tensors {
      return {topi::float_unary(in[0], op)};
    });
  }
  r.SetCompute("sign", [](const Attrs&, const Tensors& in, const Type&) -> Tensors { return {topi::sign(in[0])}; });
  r.SetCompute("isnan", [](const Attrs&, const Tensors& in, const Type&) -> Tensors { return {topi::isnan(in[0])}; });
  r.SetCompute("isinf", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::isinf(in[0], a.GetInt("detect_positive", 1) != 0, a.GetInt("detect_negative", 1) != 0)};
  });
}

}  // namespace tessera::graph_lower::detail
