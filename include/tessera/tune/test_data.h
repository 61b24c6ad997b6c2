// The data a measurement runs on and how its outputs are checked, shared by kernel measurement
// (measure.h: every candidate of a task on the same inputs, checked against the hand-written
// schedule's outputs) and the end-to-end check of a tuned model (driver/tune_model.h: the tuned
// build's outputs against the default build's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/runtime/data_type.h"

namespace tessera::tune {

/// Fills `bytes` bytes at `data` (elements of `dtype`) with a deterministic pseudo-random sequence
/// of `seed` (a linear congruential generator): float32 / float64 uniform in [-1, 1); every other
/// dtype 0 or 1 in the low byte of each element, the rest zero (valid indices, valid booleans).
void FillPseudoRandom(void* data, size_t bytes, runtime::DataType dtype, uint64_t seed);

/// "" when `out` matches `ref` (both `bytes` bytes of `dtype`), else why not, naming output `index`.
/// float32 / float64: max |out - ref| / max(1, max |ref|) must not exceed `tolerance`; NaN or an
/// infinity where the other side has none (or another one) is a mismatch. Other dtypes: bitwise.
std::string CompareOutput(const void* out, const void* ref, size_t bytes, runtime::DataType dtype, double tolerance,
                          size_t index);

}  // namespace tessera::tune
