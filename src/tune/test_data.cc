// Deterministic inputs and output comparison (tune/test_data.h).
#include "tessera/tune/test_data.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

namespace tessera::tune {

void FillPseudoRandom(void* data, size_t bytes, runtime::DataType dtype, uint64_t seed) {
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  auto next = [&] {  // 31 bits: [0, 2^31)
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(s >> 33);
  };
  const size_t n = bytes / std::max(1, dtype.bytes());
  if (dtype.is_float() && dtype.bits() == 32) {
    float* p = static_cast<float*>(data);
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<float>(next()) / 1073741824.0f - 1.0f;
  } else if (dtype.is_float() && dtype.bits() == 64) {
    double* p = static_cast<double*>(data);
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<double>(next()) / 1073741824.0 - 1.0;
  } else {
    // Integers and booleans: 0 or 1 in the low byte (valid indices, valid bools).
    unsigned char* p = static_cast<unsigned char*>(data);
    std::memset(p, 0, bytes);
    const size_t width = static_cast<size_t>(std::max(1, dtype.bytes()));
    for (size_t i = 0; i < n; ++i) p[i * width] = static_cast<unsigned char>(next() & 1);
  }
}

std::string CompareOutput(const void* out, const void* ref, size_t bytes, runtime::DataType dtype, double tolerance,
                          size_t index) {
  const size_t n = bytes / std::max(1, dtype.bytes());
  auto check = [&](auto* x, const auto* r) -> std::string {
    double diff = 0, scale = 1;
    for (size_t i = 0; i < n; ++i) {
      const double a = x[i], b = r[i];
      if (std::isnan(a) != std::isnan(b)) return "NaN differs at element " + std::to_string(i);
      if (std::isnan(a)) continue;
      if (std::isinf(b) || std::isinf(a)) {
        if (a != b) return "infinity differs at element " + std::to_string(i);
        continue;
      }
      diff = std::max(diff, std::fabs(a - b));
      scale = std::max(scale, std::fabs(b));
    }
    if (diff / scale > tolerance) {
      std::ostringstream os;
      os << "output " << index << ": max |out - ref| = " << diff << " (reference max " << scale
         << ", tolerance " << tolerance << " relative)";
      return os.str();
    }
    return "";
  };
  if (dtype.is_float() && dtype.bits() == 32)
    return check(static_cast<const float*>(out), static_cast<const float*>(ref));
  if (dtype.is_float() && dtype.bits() == 64)
    return check(static_cast<const double*>(out), static_cast<const double*>(ref));
  if (std::memcmp(out, ref, bytes) != 0) return "output " + std::to_string(index) + " differs bitwise";
  return "";
}

}  // namespace tessera::tune
