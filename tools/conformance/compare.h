// Comparing an output tensor with its reference (the ONNX backend test's expected output).
#pragma once

#include <optional>
#include <string>

#include "conformance.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::conformance {

/// Compares `got` with `ref`. Returns std::nullopt when they match, else a one-line
/// description of the mismatch: a dtype or shape difference, or how many elements differ
/// with the first one (its index, both values) and the largest absolute error.
///   float32 / float64: |got - ref| <= tol.atol + tol.rtol * |ref| elementwise; NaN matches
///                      NaN only, an infinity matches the same infinity only.
///   integer / bool:    exact.
std::optional<std::string> CompareTensors(const runtime::NDArray& got, const runtime::NDArray& ref,
                                          const Tolerance& tol);

/// Compares the output of a random operator (its values cannot be the reference's: the reference
/// drew them with NumPy's generator) by its support: the same dtype and shape, every value finite
/// and within the reference's [min, max], and integral where every reference value is (a Bernoulli
/// draw of 0 / 1 is then 0 or 1). Returns std::nullopt when it holds, else the first violation.
std::optional<std::string> CompareSupport(const runtime::NDArray& got, const runtime::NDArray& ref);

/// "atol 1e-05, rtol 0.001 (|got - ref| <= atol + rtol * |ref|; integers and bools exact)".
std::string DescribeTolerance(const Tolerance& tol);

}  // namespace tessera::conformance
