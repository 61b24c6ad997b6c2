// ONNX TfIdfVectorizer-9: n-gram counts of integer token rows, composed from graph ops.
// Spec: onnx.defs.get_schema("TfIdfVectorizer").doc; semantics as the ONNX reference
// implementation (onnx/reference/ops/op_tfidf_vectorizer.py) and ONNX Runtime:
//
//   X [L] or [B, L] (int32 / int64) -> Y [C] or [B, C] float32, C = max(ngram_indexes) + 1.
//   The pool (pool_int64s, split by ngram_counts into the 1-grams, 2-grams, ...) lists K n-grams;
//   n-gram k of length n adds to Y[b, ngram_indexes[k]] the number of (d, i) with
//   X[b, i + j d] = pool_k[j] for j < n, where i + (n - 1) d < L and the skip distance d runs over
//   1 .. max_skip_count + 1 (only d = 1 for 1-grams: they are not affected by skips). Only lengths
//   in [min_gram_length, max_gram_length] count. A pool n-gram listed twice counts once, for its
//   last index (the reference's trie keeps the last id).
//   mode TF: the counts. IDF: 1 where the count is > 0, else 0; with weights, weights[k] where
//   n-gram k occurs. TFIDF: the counts, each n-gram's times weights[k] with weights. weights[k]
//   belongs to pool n-gram k (the spec: one per ngram_indexes entry; ONNX Runtime 1.32 reads it so,
//   while ONNX's Python reference indexes it by output column). IDF with weights where several
//   n-grams share a column is refused: the implementations disagree there.
//
// Per (n, d): X's n shifted windows [B, m] (m = L - (n - 1) d) are compared with the pool's
// column j ([K_n]) by broadcasting ([B, m, K_n]), and-ed, summed over the positions; the counts
// [B, K_n] go to their output columns by a matmul with a one-hot [K_n, C]. String tokens
// (pool_strings) are refused: Tessera has no string tensors.
#include <map>

#include "const_eval.h"
#include "context.h"
#include "graph_build.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

// Bounds of what the composition builds: output columns, one-hot elements per n-gram length, and
// shifted windows (one slice each) over all lengths and skips.
constexpr int64_t kMaxColumns = int64_t{1} << 24;
constexpr int64_t kMaxOneHot = int64_t{1} << 26;
constexpr int64_t kMaxWindows = 1 << 14;

void ConvertTfIdfVectorizer(NodeContext& ctx) {
  if (ctx.HasAttr("pool_strings") && !ctx.HasAttr("pool_int64s"))
    ctx.Unsupported("string n-grams (pool_strings): Tessera has no string tensors; integer tokens (pool_int64s) are supported");
  const DataType in_dt = ctx.InputType(0).dtype;
  if (in_dt != DataType::Int(32) && in_dt != DataType::Int(64))
    ctx.Fail("X must be int32 or int64 tokens, got " + in_dt.str());
  const std::vector<int64_t> xs = ctx.InputShape(0);
  if (xs.size() != 1 && xs.size() != 2) ctx.Fail("X must be [C] or [N, C], got rank " + std::to_string(xs.size()));
  const int64_t rows = xs.size() == 2 ? xs[0] : 1, len = xs.back();
  const int64_t min_n = ctx.AttrInt("min_gram_length"), max_n = ctx.AttrInt("max_gram_length");
  const int64_t max_skip = ctx.AttrInt("max_skip_count");
  if (min_n < 1 || max_n < min_n) ctx.Fail("need 1 <= min_gram_length <= max_gram_length");
  if (max_skip < 0) ctx.Fail("max_skip_count must be >= 0");
  const std::string mode = ctx.AttrString("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") ctx.Fail("mode must be TF, IDF or TFIDF, got '" + mode + "'");
  const std::vector<int64_t> counts = ctx.AttrInts("ngram_counts", {});
  const std::vector<int64_t> indexes = ctx.AttrInts("ngram_indexes", {});
  const std::vector<int64_t> pool = ctx.AttrInts("pool_int64s", {});
  const std::vector<float> weights = ctx.AttrFloats("weights");
  if (indexes.empty()) ctx.Fail("ngram_indexes is empty");
  int64_t out_cols = 0;
  for (int64_t v : indexes) {
    if (v < 0 || v >= kMaxColumns)
      ctx.Fail("ngram_indexes holds " + std::to_string(v) + ", outside [0, " + std::to_string(kMaxColumns) + ")");
    out_cols = std::max(out_cols, v + 1);
  }
  if (!weights.empty() && weights.size() != indexes.size())
    ctx.Fail("weights has " + std::to_string(weights.size()) + " values; it needs one per n-gram (" +
             std::to_string(indexes.size()) + ", as ngram_indexes)");

  if (mode == "IDF" && !weights.empty()) {
    std::vector<int64_t> seen(static_cast<size_t>(out_cols), 0);
    for (int64_t c : indexes)
      if (++seen[c] == 2)
        ctx.Unsupported("mode IDF with weights where several n-grams share output column " + std::to_string(c) +
                        " (ONNX Runtime keeps the weight of the n-gram found last, ONNX's reference the column's): "
                        "give each n-gram its own column in ngram_indexes");
  }
  // The pool's n-grams of each counted length, deduplicated (the last index wins), with the
  // weight of each (the n-gram's position in the pool).
  struct Gram {
    int64_t column = 0;
    double weight = 1.0;
  };
  std::map<int64_t, std::map<std::vector<int64_t>, Gram>> grams;  // n -> tokens -> column, weight
  int64_t id = 0;
  for (size_t s = 0; s < counts.size(); ++s) {
    const int64_t n = static_cast<int64_t>(s) + 1;
    const int64_t begin = counts[s], end = s + 1 < counts.size() ? counts[s + 1] : static_cast<int64_t>(pool.size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) || (end - begin) % n != 0)
      ctx.Fail("ngram_counts does not split pool_int64s into whole " + std::to_string(n) + "-grams");
    for (int64_t p = begin; p < end; p += n, ++id) {
      if (id >= static_cast<int64_t>(indexes.size())) ctx.Fail("ngram_indexes has fewer entries than the pool has n-grams");
      if (n >= min_n && n <= max_n)
        grams[n][std::vector<int64_t>(pool.begin() + p, pool.begin() + p + n)] =
            Gram{indexes[id], weights.empty() ? 1.0 : static_cast<double>(weights[id])};
    }
  }

  int64_t windows = 0;
  for (const auto& [n, entries] : grams) {
    if (static_cast<int64_t>(entries.size()) > kMaxOneHot / out_cols)
      ctx.Unsupported(std::to_string(entries.size()) + " " + std::to_string(n) + "-grams x " + std::to_string(out_cols) +
                      " output columns exceed the one-hot matrix Tessera builds (" + std::to_string(kMaxOneHot) + " elements)");
    for (int64_t d = 1; d <= (n == 1 ? 1 : max_skip + 1) && len - (n - 1) * d > 0; ++d)
      if ((windows += n) > kMaxWindows)
        ctx.Unsupported("the n-gram windows over the skips are unrolled; more than " + std::to_string(kMaxWindows) +
                        " (a long row with a large max_skip_count)");
  }

  const DataType f32 = DataType::Float(32), i64 = DataType::Int(64);
  Expr x = ctx.Call("cast", {ctx.Input(0)}, Attrs{{"dtype", std::string("int64")}});
  if (xs.size() == 1) x = Reshape(ctx, x, {1, len});
  Expr y;
  for (const auto& [n, entries] : grams) {
    const int64_t k = static_cast<int64_t>(entries.size());
    std::vector<std::vector<int64_t>> column(n);  // column[j][e]: token j of n-gram e
    std::vector<double> onehot(static_cast<size_t>(k * out_cols), 0.0), gram_weights;
    int64_t e = 0;
    for (const auto& [tokens, g] : entries) {
      for (int64_t j = 0; j < n; ++j) column[j].push_back(tokens[j]);
      onehot[e * out_cols + g.column] = 1.0;
      gram_weights.push_back(g.weight);
      ++e;
    }
    Expr counted;  // [rows, k]
    for (int64_t d = 1; d <= (n == 1 ? 1 : max_skip + 1); ++d) {
      const int64_t m = len - (n - 1) * d;
      if (m <= 0) break;
      Expr match;  // [rows, m, k]
      for (int64_t j = 0; j < n; ++j) {
        Expr window = ctx.Call("expand_dims", {SliceAxis(ctx, x, 1, j * d, j * d + m)},
                               Attrs{{"axis", int64_t{2}}, {"num_newaxis", int64_t{1}}});
        Expr eq = ctx.Call("equal", {window, graph::ConstantNode::make(FromInts(column[j], {k}, i64))});
        match = match ? ctx.Call("logical_and", {match, eq}) : eq;
      }
      Expr c = ctx.Call("sum", {ctx.Call("cast", {match}, Attrs{{"dtype", std::string("float32")}})},
                        Attrs{{"axis", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}});
      counted = counted ? ctx.Call("add", {counted, c}) : c;
    }
    if (!counted) continue;
    if (!weights.empty() && mode != "TF") {
      if (mode == "IDF") counted = ctx.Call("cast", {ctx.Call("greater", {counted, ctx.ScalarConst(0, f32)})},
                                            Attrs{{"dtype", std::string("float32")}});
      counted = ctx.Call("multiply", {counted, graph::ConstantNode::make(FromDoubles(gram_weights, {k}, f32))});
    }
    Expr cols = ctx.Call("nn.matmul", {counted, graph::ConstantNode::make(FromDoubles(onehot, {k, out_cols}, f32))});
    y = y ? ctx.Call("add", {y, cols}) : cols;
  }
  if (!y) y = ctx.Call("broadcast_to", {ctx.ScalarConst(0, f32)}, Attrs{{"shape", std::vector<int64_t>{rows, out_cols}}});
  if (mode == "IDF" && weights.empty())
    y = ctx.Call("cast", {ctx.Call("greater", {y, ctx.ScalarConst(0, f32)})}, Attrs{{"dtype", std::string("float32")}});
  if (xs.size() == 1) y = Reshape(ctx, y, {out_cols});
  ctx.SetOutput(0, y);
}

}  // namespace

void RegisterTfIdfConverters(ConverterTable& t) { t["TfIdfVectorizer"] = ConvertTfIdfVectorizer; }

}  // namespace tessera::frontend::onnx_import
