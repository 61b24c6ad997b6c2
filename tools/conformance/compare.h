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

/// "atol 1e-05, rtol 0.001 (|got - ref| <= atol + rtol * |ref|; integers and bools exact)".
std::string DescribeTolerance(const Tolerance& tol);

}  // namespace tessera::conformance
