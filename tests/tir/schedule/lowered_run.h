// Numerics after lowering: a scheduled function is lowered (transform::LowerToFlat) and
// run by the flat reference interpreter (tests/tir/ref_eval.h), then compared with the
// original lowered the same way, on random float32 inputs.
#pragma once

#include <cmath>
#include <vector>

#include "block_interp.h"
#include "ref_eval.h"
#include "tessera/tir/transform/lower.h"

namespace tessera::tir::testing {

/// Max abs difference between every parameter of a and b (lowered, run) on the same inputs.
inline double LoweredMaxDiff(const PrimFunc& a, const PrimFunc& b, unsigned seed = 7) {
  auto args = RandomArgs(a, seed);
  auto run = [&](const PrimFunc& f) {
    std::vector<std::vector<float>> mem;
    for (const auto& v : args) mem.emplace_back(v.begin(), v.end());
    std::vector<std::vector<float>*> ptrs;
    for (auto& m : mem) ptrs.push_back(&m);
    RunFlat(transform::LowerToFlat(f), ptrs);
    return mem;
  };
  auto ra = run(a), rb = run(b);
  double m = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    for (size_t j = 0; j < ra[i].size(); ++j) {
      double d = std::fabs(static_cast<double>(ra[i][j]) - rb[i][j]);
      if (std::isnan(d)) return INFINITY;
      m = std::max(m, d);
    }
  }
  return m;
}

}  // namespace tessera::tir::testing
