#include "compare.h"

#include "tessera/runtime/float_formats.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <vector>

namespace tessera::conformance {
namespace {

std::string IndexToString(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > 0) {
      idx[d] = flat % shape[d];
      flat /= shape[d];
    }
  }
  std::ostringstream os;
  os << "[";
  for (size_t d = 0; d < idx.size(); ++d) os << (d ? ", " : "") << idx[d];
  os << "]";
  return os.str();
}

bool CloseEnough(double got, double ref, const Tolerance& tol) {
  if (std::isnan(ref) || std::isnan(got)) return std::isnan(ref) && std::isnan(got);
  if (std::isinf(ref) || std::isinf(got)) return got == ref;
  return std::fabs(got - ref) <= tol.atol + tol.rtol * std::fabs(ref);
}

// Reads element i of a scalar array as a double (floats) or as an exact integer.
template <typename T>
void Load(const void* base, int64_t i, T* out) {
  std::memcpy(out, static_cast<const char*>(base) + i * sizeof(T), sizeof(T));
}

std::optional<std::string> CompareFloats(const runtime::NDArray& got, const runtime::NDArray& ref,
                                         const Tolerance& tol) {
  // float16 / bfloat16 / float8 / float4 codes are decoded to their values (exactly).
  auto at = [&](const runtime::NDArray& a, int64_t i) -> double { return runtime::LoadAsDouble(a.raw_data(), i, a.dtype()); };
  int64_t n = ref.NumElements(), bad = 0, first = -1;
  double max_err = 0;
  for (int64_t i = 0; i < n; ++i) {
    double g = at(got, i), r = at(ref, i);
    if (CloseEnough(g, r, tol)) continue;
    ++bad;
    if (first < 0) first = i;
    double err = std::fabs(g - r);
    if (!(err <= max_err)) max_err = err;  // also records NaN
  }
  if (bad == 0) return std::nullopt;
  std::ostringstream os;
  os.precision(9);
  os << bad << " of " << n << " elements differ; first at " << IndexToString(first, ref.shape()) << ": got "
     << at(got, first) << ", expected " << at(ref, first) << "; max abs error " << max_err;
  return os.str();
}

template <typename T>
std::optional<std::string> CompareExact(const runtime::NDArray& got, const runtime::NDArray& ref) {
  int64_t n = ref.NumElements(), bad = 0, first = -1;
  for (int64_t i = 0; i < n; ++i) {
    T g, r;
    Load(got.raw_data(), i, &g);
    Load(ref.raw_data(), i, &r);
    if (g == r) continue;
    ++bad;
    if (first < 0) first = i;
  }
  if (bad == 0) return std::nullopt;
  T g, r;
  Load(got.raw_data(), first, &g);
  Load(ref.raw_data(), first, &r);
  std::ostringstream os;
  os << bad << " of " << n << " elements differ; first at " << IndexToString(first, ref.shape()) << ": got "
     << +g << ", expected " << +r;
  return os.str();
}

}  // namespace

std::optional<std::string> CompareSupport(const runtime::NDArray& got, const runtime::NDArray& ref) {
  if (got.dtype() != ref.dtype()) return "dtype " + got.dtype().str() + ", expected " + ref.dtype().str();
  if (got.shape() != ref.shape()) {
    return "shape " + runtime::ShapeToString(got.shape()) + ", expected " + runtime::ShapeToString(ref.shape());
  }
  const int64_t n = ref.NumElements();
  if (n == 0) return std::nullopt;
  double lo = INFINITY, hi = -INFINITY;
  bool integral = true;
  for (int64_t i = 0; i < n; ++i) {
    const double r = runtime::LoadAsDouble(ref.raw_data(), i, ref.dtype());
    lo = std::fmin(lo, r);
    hi = std::fmax(hi, r);
    integral = integral && std::isfinite(r) && r == std::floor(r);
  }
  for (int64_t i = 0; i < n; ++i) {
    const double g = runtime::LoadAsDouble(got.raw_data(), i, got.dtype());
    if (!std::isfinite(g) || g < lo || g > hi || (integral && g != std::floor(g))) {
      std::ostringstream os;
      os.precision(9);
      os << "element " << IndexToString(i, ref.shape()) << " is " << g << ", outside the reference's support ["
         << lo << ", " << hi << "]" << (integral ? " of integers" : "");
      return os.str();
    }
  }
  return std::nullopt;
}

std::optional<std::string> CompareTensors(const runtime::NDArray& got, const runtime::NDArray& ref,
                                          const Tolerance& tol) {
  if (got.dtype() != ref.dtype()) return "dtype " + got.dtype().str() + ", expected " + ref.dtype().str();
  if (got.shape() != ref.shape()) {
    return "shape " + runtime::ShapeToString(got.shape()) + ", expected " + runtime::ShapeToString(ref.shape());
  }
  DataType t = ref.dtype();
  if (t.is_floating()) return CompareFloats(got, ref, tol);
  if (t.is_bool()) {
    // Compare truth values: any non-zero byte is true.
    int64_t n = ref.NumElements();
    const auto* g = static_cast<const uint8_t*>(got.raw_data());
    const auto* r = static_cast<const uint8_t*>(ref.raw_data());
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < n; ++i) {
      if ((g[i] != 0) != (r[i] != 0)) {
        ++bad;
        if (first < 0) first = i;
      }
    }
    if (bad == 0) return std::nullopt;
    std::ostringstream os;
    os << bad << " of " << n << " elements differ; first at " << IndexToString(first, ref.shape()) << ": got "
       << (g[first] ? "true" : "false") << ", expected " << (r[first] ? "true" : "false");
    return os.str();
  }
  if (t.is_int() || t.is_uint()) {
    switch (t.bits()) {
      case 2: case 4:  // one element per byte, sign- or zero-extended (data_type.h)
      case 8: return t.is_int() ? CompareExact<int8_t>(got, ref) : CompareExact<uint8_t>(got, ref);
      case 16: return t.is_int() ? CompareExact<int16_t>(got, ref) : CompareExact<uint16_t>(got, ref);
      case 32: return t.is_int() ? CompareExact<int32_t>(got, ref) : CompareExact<uint32_t>(got, ref);
      case 64: return t.is_int() ? CompareExact<int64_t>(got, ref) : CompareExact<uint64_t>(got, ref);
      default: break;
    }
  }
  // Any other type (none today: the TensorProto reader rejects them): compare the bytes.
  if (got.NBytes() != ref.NBytes() || std::memcmp(got.raw_data(), ref.raw_data(), ref.NBytes()) != 0) {
    return "the " + t.str() + " data differs byte-wise";
  }
  return std::nullopt;
}

std::string DescribeTolerance(const Tolerance& tol) {
  std::ostringstream os;
  os << "rtol " << tol.rtol << ", atol " << tol.atol
     << " (|got - ref| <= atol + rtol * |ref| elementwise, NaN only matches NaN; integers and bools exact)";
  return os.str();
}

}  // namespace tessera::conformance
