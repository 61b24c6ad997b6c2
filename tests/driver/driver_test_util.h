// Helpers shared by the driver tests: tensor types, op calls, conv attrs, random inputs; a graph
// rewrite decision in a tuning database, a step of an IR dump.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "tessera/graph/expr.h"
#include "tessera/runtime/ndarray.h"
#include "tessera/tune/database.h"
#include "tessera/tune/rewrite_choice.h"

namespace tessera::driver::testing {

/// A float32 tensor type of a static shape.
inline graph::Type F32(std::vector<int64_t> shape) {
  return graph::TensorTypeNode::make(std::move(shape), DataType::Float(32));
}

/// A call of the registered op `op`.
inline graph::Expr Call(const std::string& op, std::vector<graph::Expr> args, graph::Attrs attrs = {}) {
  return graph::CallNode::make(graph::OpNode::Get(op), std::move(args), std::move(attrs));
}

/// nn.conv2d attrs: `stride` both ways, padding {top, left, bottom, right}, no dilation, `groups`.
inline graph::Attrs ConvAttrs(int64_t stride, std::vector<int64_t> padding, int64_t groups = 1) {
  return graph::Attrs{{"strides", std::vector<int64_t>{stride, stride}}, {"padding", std::move(padding)},
                      {"dilation", std::vector<int64_t>{1, 1}}, {"groups", groups}};
}

/// A float32 array of seeded uniform [lo, hi) values.
inline runtime::NDArray Random(std::vector<int64_t> shape, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  auto a = runtime::NDArray::Empty(shape, DataType::Float(32));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < a.NumElements(); ++i) a.data<float>()[i] = u(rng);
  return a;
}

/// One output of a 3x3, stride-1, pad-1 convolution in double: sum over c, r, s of
/// x[n, c, h + r - 1, w + s - 1] * wt[k, c, r, s] (x [N, C, H, W], wt [K, C, 3, 3], row-major).
inline double Conv3x3Pad1At(const float* x, const float* wt, int64_t C, int64_t H, int64_t W, int64_t n, int64_t k,
                            int64_t h, int64_t w) {
  double acc = 0;
  for (int64_t c = 0; c < C; ++c)
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t s = 0; s < 3; ++s) {
        const int64_t ih = h + r - 1, iw = w + s - 1;
        if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
        acc += double(x[((n * C + c) * H + ih) * W + iw]) * wt[((k * C + c) * 3 + r) * 3 + s];
      }
  return acc;
}

/// Appends to the tuning database at `db_path` the decision `knob` = `value` for `target`, as
/// tune::DecideRewrites records it (tune/rewrite_choice.h).
inline void CommitRewriteDecision(const std::string& db_path, const std::string& knob, const std::string& target,
                                  int64_t value) {
  tune::Database db(db_path);
  tune::TuningRecord r;
  r.workload_hash = tune::RewriteHash(knob);
  r.target = target;
  r.config = {{"value", value}};
  r.run_secs = {1e-3};
  db.CommitBatch({r});
}

/// The text of the file of `dump_dir` (BuildOptions::dump_ir_dir) whose name contains `step`; ""
/// when there is none.
inline std::string DumpedStep(const std::string& dump_dir, const std::string& step) {
  for (const auto& f : std::filesystem::directory_iterator(dump_dir))
    if (f.path().filename().string().find(step) != std::string::npos) {
      std::ifstream is(f.path());
      return std::string(std::istreambuf_iterator<char>(is), std::istreambuf_iterator<char>());
    }
  return "";
}

}  // namespace tessera::driver::testing
