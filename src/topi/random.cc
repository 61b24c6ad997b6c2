// Counter-based random numbers: see include/tessera/topi/random.h.
#include "tessera/topi/random.h"

#include <functional>
#include <numbers>

#include "tessera/ir/op.h"
#include "tessera/support/error.h"
#include "tessera/topi/tags.h"

namespace tessera::topi {

namespace {

const DataType kU64 = DataType::UInt(64);

PrimExpr U64(uint64_t v) { return ir::make_const(kU64, static_cast<int64_t>(v)); }

// z ^ (z >> s) for a uint64 z.
PrimExpr XorShift(const PrimExpr& z, int s) { return ir::bitwise_xor(z, ir::shift_right(z, U64(static_cast<uint64_t>(s)))); }

// The row-major position of index `i` in `shape`, as uint64.
PrimExpr Position(const std::vector<PrimExpr>& shape, const std::vector<ir::Var>& i) {
  PrimExpr p = ir::make_const(DataType::Int(64), int64_t{0});
  for (size_t d = 0; d < shape.size(); ++d)
    p = p * ir::cast(DataType::Int(64), shape[d]) + ir::cast(DataType::Int(64), i[d]);
  return ir::cast(kU64, p);
}

void CheckFloat(DataType dtype, const char* op) {
  TESSERA_CHECK(is_random_dtype(dtype), op, ": dtype must be float16, bfloat16, float32 or float64, got ", dtype.str());
}

// U in [0, 1) of random_compute_type(dtype) at stream position q.
PrimExpr Uniform01(const PrimExpr& q, uint64_t key, DataType dtype) {
  const PrimExpr z = splitmix64(q, key);
  const DataType ct = random_compute_type(dtype);
  // The top 53 (24) bits: below 2^63, so a signed conversion is exact.
  if (ct == DataType::Float(64))
    return ir::cast(ct, ir::cast(DataType::Int(64), ir::shift_right(z, U64(11)))) * ir::make_const(ct, 0x1p-53);
  return ir::cast(ct, ir::cast(DataType::Int(64), ir::shift_right(z, U64(40)))) * ir::make_const(ct, 0x1p-24);
}

// An elementwise tensor of `shape` whose element is f(its row-major position) in the compute type,
// cast to `dtype`.
Tensor RandomCompute(const std::vector<PrimExpr>& shape, DataType dtype, const std::string& name, const char* op,
                     const std::function<PrimExpr(const PrimExpr&)>& f) {
  CheckFloat(dtype, op);
  return te::compute(
      shape, [&](const std::vector<ir::Var>& i) { return ir::cast(dtype, f(Position(shape, i))); }, name,
      tag::kElemWise);
}

}  // namespace

PrimExpr splitmix64(PrimExpr position, uint64_t key) {
  TESSERA_ICHECK(position.dtype() == kU64, "splitmix64: the position must be uint64, got ", position.dtype().str());
  PrimExpr z = U64(key) + (position + U64(1)) * U64(kSplitMixGamma);
  z = XorShift(z, 30) * U64(kSplitMixM1);
  z = XorShift(z, 27) * U64(kSplitMixM2);
  return XorShift(z, 31);
}

Tensor random_uniform(const std::vector<PrimExpr>& shape, DataType dtype, uint64_t key, double low, double high,
                      const std::string& name) {
  const DataType ct = random_compute_type(dtype);
  return RandomCompute(shape, dtype, name, "random_uniform", [&](const PrimExpr& p) {
    return ir::make_const(ct, low) + Uniform01(p, key, dtype) * ir::make_const(ct, high - low);
  });
}

Tensor random_normal(const std::vector<PrimExpr>& shape, DataType dtype, uint64_t key, double mean, double scale,
                     const std::string& name) {
  const DataType ct = random_compute_type(dtype);
  return RandomCompute(shape, dtype, name, "random_normal", [&](const PrimExpr& p) {
    const PrimExpr p2 = p * U64(2);
    const PrimExpr u0 = Uniform01(p2, key, dtype), u1 = Uniform01(p2 + U64(1), key, dtype);
    // 1 - u0 is in (0, 1]: its log is finite.
    const PrimExpr radius = ir::sqrt(ir::make_const(ct, -2.0) * ir::log(ir::make_const(ct, 1.0) - u0));
    const PrimExpr angle = ir::make_const(ct, 2 * std::numbers::pi) * u1;
    return ir::make_const(ct, mean) + ir::make_const(ct, scale) * (radius * ir::CallNode::make(ct, "cos", {angle}));
  });
}

}  // namespace tessera::topi
