// The names of the feature values (feature_extractor.h), in the order the extractor writes them.
#include <algorithm>

#include "tessera/support/error.h"
#include "tessera/tune/feature_extractor.h"

namespace tessera::tune {

const std::vector<std::string>& PerStoreFeatureNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {
        // computation (per lane, times the trip count)
        "float_addsub", "float_mul", "float_divmod", "float_minmax", "float_fma", "float_math_call",
        "float_cmp_select", "int_arith", "int_cmp_logic", "cast",
        // loop nest
        "trip_count", "num_loops", "vector_lanes", "vectorized_extent", "unrolled_extent", "parallel_extent",
        "innermost_extent", "innermost_serial", "innermost_parallel", "innermost_vectorized",
        "innermost_unrolled", "stores_in_innermost_body", "guarded"};
    TESSERA_ICHECK(n.size() == kPerStoreHeadLength);
    for (size_t b = 0; b < kMaxBuffers; ++b) {
      const std::string p = "buf" + std::to_string(b) + ".";
      for (const char* f : {"read", "write", "touched_bytes", "stride_innermost", "stride_lanes",
                            "stride_varying", "reuse",
                            "accessed_bytes", "buffer_bytes"}) {
        n.push_back(p + f);
      }
    }
    TESSERA_ICHECK(n.size() == kPerStoreLength);
    return n;
  }();
  return names;
}

const std::vector<std::string>& FeatureNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const char* agg : {"sum.", "max."}) {
      for (const auto& s : PerStoreFeatureNames()) n.push_back(agg + s);
    }
    for (const char* f : {"alloc_bytes", "num_allocs", "num_loops", "num_stores", "max_loop_depth", "param_bytes"}) {
      n.push_back(f);
    }
    TESSERA_ICHECK(n.size() == kFeatureLength);
    return n;
  }();
  return names;
}

size_t FeatureIndex(const std::string& name, bool per_store) {
  const auto& names = per_store ? PerStoreFeatureNames() : FeatureNames();
  auto it = std::find(names.begin(), names.end(), name);
  TESSERA_ICHECK(it != names.end(), "unknown feature name '", name, "'");
  return static_cast<size_t>(it - names.begin());
}

}  // namespace tessera::tune
