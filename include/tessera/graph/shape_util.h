// Shape arithmetic shared by the type relations and by importers that fold shape
// computations (so both agree on the edge cases).
#pragma once

#include <cstdint>

namespace tessera::graph {

/// One axis of a strided slice after numpy/ONNX clamping: elements begin, begin+stride, ...
/// (extent of them). Negative begin/end count from the end; out-of-range values are clamped
/// (for stride < 0, to [-1, dim-1]). UserError when stride == 0.
struct SliceRange {
  int64_t begin = 0;
  int64_t extent = 0;
  int64_t stride = 1;
};
SliceRange NormalizeSlice(int64_t dim, int64_t begin, int64_t end, int64_t stride);

}  // namespace tessera::graph
