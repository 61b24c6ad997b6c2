#include "tessera/graph/shape_util.h"

#include <algorithm>

#include "tessera/support/error.h"

namespace tessera::graph {

SliceRange NormalizeSlice(int64_t dim, int64_t begin, int64_t end, int64_t stride) {
  TESSERA_CHECK(stride != 0, "slice step must not be 0");
  auto wrap = [dim](int64_t v) {
    // avoid overflow for INT64_MIN / INT64_MAX sentinels
    if (v < 0) return v < -dim ? int64_t{-1} - dim : v + dim;
    return v;
  };
  int64_t b = wrap(begin), e = wrap(end);
  SliceRange r;
  r.stride = stride;
  if (stride > 0) {
    b = std::clamp<int64_t>(b, 0, dim);
    e = std::clamp<int64_t>(e, 0, dim);
    r.begin = b;
    r.extent = e > b ? (e - b + stride - 1) / stride : 0;
  } else {
    b = std::clamp<int64_t>(b, -1, dim - 1);
    e = std::clamp<int64_t>(e, -1, dim - 1);
    r.begin = b;
    r.extent = b > e ? (b - e + (-stride) - 1) / (-stride) : 0;
  }
  return r;
}

}  // namespace tessera::graph
