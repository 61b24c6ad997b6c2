// Counter-based random numbers: see include/tessera/topi/random.h.
#include "tessera/topi/random.h"

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
  TESSERA_CHECK(dtype.is_scalar() && (dtype.is_float() || dtype.is_bfloat16()) &&
                    (dtype.bits() == 16 || dtype.bits() == 32 || dtype.bits() == 64),
                op, ": dtype must be float16, bfloat16, float32 or float64, got ", dtype.str());
}

// The compute type of a dtype: float64 for float64, float32 otherwise.
DataType ComputeType(DataType dtype) { return dtype == DataType::Float(64) ? DataType::Float(64) : DataType::Float(32); }

// U in [0, 1) of ComputeType(dtype) at stream position q.
PrimExpr Uniform01(const PrimExpr& q, uint64_t key, DataType dtype) {
  const PrimExpr z = splitmix64(q, key);
  const DataType ct = ComputeType(dtype);
  // The top 53 (24) bits: below 2^63, so a signed conversion is exact.
  if (ct == DataType::Float(64))
    return ir::cast(ct, ir::cast(DataType::Int(64), ir::shift_right(z, U64(11)))) * ir::make_const(ct, 0x1p-53);
  return ir::cast(ct, ir::cast(DataType::Int(64), ir::shift_right(z, U64(40)))) * ir::make_const(ct, 0x1p-24);
}

}  // namespace

PrimExpr splitmix64(PrimExpr position, uint64_t key) {
  TESSERA_ICHECK(position.dtype() == kU64, "splitmix64: the position must be uint64, got ", position.dtype().str());
  PrimExpr z = U64(key) + (position + U64(1)) * U64(0x9E3779B97F4A7C15ull);
  z = XorShift(z, 30) * U64(0xBF58476D1CE4E5B9ull);
  z = XorShift(z, 27) * U64(0x94D049BB133111EBull);
  return XorShift(z, 31);
}

Tensor random_uniform(const std::vector<PrimExpr>& shape, DataType dtype, uint64_t key, double low, double high,
                      const std::string& name) {
  CheckFloat(dtype, "random_uniform");
  const DataType ct = ComputeType(dtype);
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& i) {
        const PrimExpr u = Uniform01(Position(shape, i), key, dtype);
        return ir::cast(dtype, ir::make_const(ct, low) + u * ir::make_const(ct, high - low));
      },
      name, tag::kElemWise);
}

Tensor random_normal(const std::vector<PrimExpr>& shape, DataType dtype, uint64_t key, double mean, double scale,
                     const std::string& name) {
  CheckFloat(dtype, "random_normal");
  const DataType ct = ComputeType(dtype);
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& i) {
        const PrimExpr p2 = Position(shape, i) * U64(2);
        const PrimExpr u0 = Uniform01(p2, key, dtype), u1 = Uniform01(p2 + U64(1), key, dtype);
        // 1 - u0 is in (0, 1]: its log is finite.
        const PrimExpr radius = ir::sqrt(ir::make_const(ct, -2.0) * ir::log(ir::make_const(ct, 1.0) - u0));
        const PrimExpr angle = ir::make_const(ct, 2 * std::numbers::pi) * u1;
        const PrimExpr n = radius * ir::CallNode::make(ct, "cos", {angle});
        return ir::cast(dtype, ir::make_const(ct, mean) + ir::make_const(ct, scale) * n);
      },
      name, tag::kElemWise);
}

}  // namespace tessera::topi
