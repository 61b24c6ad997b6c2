// Random tensors (topi/random.h: counter-based, a pure function of a 64-bit key and the element's
// row-major position, the same at every run):
//   random.uniform_like(x) -> Tensor[x.shape, dtype]: low + (high - low) * U[0, 1). attrs: dtype
//     (float16 / bfloat16 / float32 / float64), low, high, key (int64: the generator key's bits).
//   random.normal_like(x) -> Tensor[x.shape, dtype]: mean + scale * N(0, 1). attrs: dtype, mean,
//     scale, key.
// Only x's shape is read (symbolic extents allowed). Injective, never elementwise: AlterOpLayout must
// not move it into a blocked layout, where positions (and so the values) would differ.
#include "op_groups.h"
#include "op_util.h"
#include "tessera/support/error.h"

namespace tessera::graph::op {

namespace {

Type RandomLikeRel(const std::vector<Type>& args, const Attrs& attrs) {
  const TensorTypeNode& x = TensorArg(args, 0);
  const DataType dtype = DataType::Parse(attrs.GetString("dtype"));
  TESSERA_CHECK(dtype.is_scalar() && (dtype.is_float() || dtype.is_bfloat16()) &&
                    (dtype.bits() == 16 || dtype.bits() == 32 || dtype.bits() == 64),
                "dtype must be float16, bfloat16, float32 or float64, got ", dtype.str());
  attrs.GetInt("key");
  return TensorTypeNode::make(x.shape, dtype);
}

}  // namespace

void RegisterRandomOps(OpRegistry& r) {
  r.Register("random.uniform_like", 1, kInjective, RandomLikeRel,
             "low + (high - low) * U[0, 1) of x's shape (counter-based: topi/random.h). attrs: dtype, low, high, key");
  r.Register("random.normal_like", 1, kInjective, RandomLikeRel,
             "mean + scale * N(0, 1) of x's shape (counter-based: topi/random.h). attrs: dtype, mean, scale, key");
}

}  // namespace tessera::graph::op
