// ONNX Einsum-12 as reductions, transposes and batched matmuls (the numpy.einsum semantics of
// the spec: explicit "ab,bc->ac" or implicit output (the labels used once, sorted), "..." for
// broadcast dims aligned from the right, a repeated label within one operand takes its
// diagonal):
//   1. per operand: diagonals (x * eye, summed over the second axis of the pair), then the
//      labels no other operand or the output uses are summed out;
//   2. operands are contracted left to right: the labels both hold that a later operand or the
//      output needs are batch dims, the others are contracted by one nn.matmul over
//      [batch, rows, k] x [batch, k, cols];
//   3. the result's leftover labels are summed and the rest transposed to the output order.
#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "const_eval.h"
#include "context.h"
#include "graph_build.h"

namespace tessera::frontend::onnx_import {

using graph::Attrs;
using graph::Expr;

namespace {

using Labels = std::vector<int>;  // letters as chars; ellipsis dims as 256 + position from the right

struct Operand {
  Expr x;
  Labels labels;
  std::vector<int64_t> shape;
};

int64_t Product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>());
}

// Parses one term ("ab...c") of an operand of rank `rank` (rank < 0: the output term, whose
// ellipsis has `ellipsis_rank` dims).
Labels ParseTerm(NodeContext& ctx, const std::string& term, int64_t rank, int64_t ellipsis_rank) {
  Labels out;
  const size_t dots = term.find("...");
  int64_t letters = 0;
  for (char ch : term)
    if (std::isalpha(static_cast<unsigned char>(ch))) ++letters;
    else if (ch != '.') ctx.Fail("invalid character '" + std::string(1, ch) + "' in equation term '" + term + "'");
  const int64_t n_ell = dots == std::string::npos ? 0 : (rank >= 0 ? rank - letters : ellipsis_rank);
  if (rank >= 0 && (n_ell < 0 || (dots == std::string::npos && letters != rank)))
    ctx.Fail("equation term '" + term + "' does not match an operand of rank " + std::to_string(rank));
  for (size_t i = 0; i < term.size(); ++i) {
    if (i == dots) {
      for (int64_t k = n_ell; k-- > 0;) out.push_back(256 + static_cast<int>(k));
      i += 2;
    } else {
      out.push_back(term[i]);
    }
  }
  return out;
}

Expr SumAxes(NodeContext& ctx, Expr x, std::vector<int64_t> axes) {
  return ctx.Call("sum", {x}, Attrs{{"axis", std::move(axes)}, {"keepdims", int64_t{0}}});
}

// Takes the diagonal of every label repeated within one operand.
void TakeDiagonals(NodeContext& ctx, Operand& op) {
  for (size_t i = 0; i < op.labels.size(); ++i) {
    for (size_t j = i + 1; j < op.labels.size(); ++j) {
      if (op.labels[i] != op.labels[j]) continue;
      const int64_t n = op.shape[i];
      if (op.shape[j] != n) ctx.Fail("repeated label with different extents " + std::to_string(n) + " and " + std::to_string(op.shape[j]));
      std::vector<int64_t> eye_shape(op.shape.size(), 1);
      eye_shape[i] = eye_shape[j] = n;
      std::vector<double> eye(n * n, 0.0);
      for (int64_t k = 0; k < n; ++k) eye[k * n + k] = 1;
      const DataType dt = ctx.InputType(0).dtype;
      Expr mask = graph::ConstantNode::make(FromDoubles(eye, eye_shape, dt));
      op.x = SumAxes(ctx, ctx.Call("multiply", {op.x, mask}), {static_cast<int64_t>(j)});
      op.labels.erase(op.labels.begin() + j);
      op.shape.erase(op.shape.begin() + j);
      --j;
    }
  }
}

// Sums out the labels of `op` that `keep` lacks.
void SumUnused(NodeContext& ctx, Operand& op, const std::multiset<int>& keep) {
  std::vector<int64_t> axes;
  Labels labels;
  std::vector<int64_t> shape;
  for (size_t i = 0; i < op.labels.size(); ++i) {
    if (keep.count(op.labels[i])) {
      labels.push_back(op.labels[i]);
      shape.push_back(op.shape[i]);
    } else {
      axes.push_back(static_cast<int64_t>(i));
    }
  }
  if (axes.empty()) return;
  op.x = SumAxes(ctx, op.x, axes);
  op.labels = labels;
  op.shape = shape;
}

// Transposes x, labelled `from`, to the label order `to` (a permutation); no op when equal.
Expr Permute(NodeContext& ctx, Expr x, const Labels& from, const Labels& to) {
  if (from == to) return x;
  std::vector<int64_t> perm;
  for (int l : to) perm.push_back(std::find(from.begin(), from.end(), l) - from.begin());
  return Transpose(ctx, std::move(x), std::move(perm));
}

// Transposes op to the label order `order` and reshapes it to `groups` (products of
// consecutive runs of that order).
Expr Arrange(NodeContext& ctx, const Operand& op, const Labels& order, const std::vector<int64_t>& groups) {
  return Reshape(ctx, Permute(ctx, op.x, op.labels, order), groups);
}

Operand Contract(NodeContext& ctx, Operand a, Operand b, const std::multiset<int>& later) {
  Labels batch, rows, cols, k;
  std::map<int, int64_t> extent;
  for (size_t i = 0; i < a.labels.size(); ++i) extent[a.labels[i]] = a.shape[i];
  for (size_t i = 0; i < b.labels.size(); ++i) {
    int64_t& e = extent[b.labels[i]];
    if (e != 0 && e != b.shape[i] && e != 1 && b.shape[i] != 1)
      ctx.Fail("label extents " + std::to_string(e) + " and " + std::to_string(b.shape[i]) + " do not broadcast");
    e = std::max(e, b.shape[i]);
  }
  for (int l : a.labels) {
    const bool in_b = std::count(b.labels.begin(), b.labels.end(), l) > 0;
    (in_b ? (later.count(l) ? batch : k) : rows).push_back(l);
  }
  for (int l : b.labels)
    if (!std::count(a.labels.begin(), a.labels.end(), l)) cols.push_back(l);
  // Broadcast the shared dims of extent 1 to the other operand's extent.
  for (Operand* op : {&a, &b}) {
    std::vector<int64_t> full;
    for (size_t i = 0; i < op->labels.size(); ++i) {
      const int l = op->labels[i];
      const bool own = std::count(rows.begin(), rows.end(), l) || std::count(cols.begin(), cols.end(), l);
      full.push_back(own ? op->shape[i] : extent[l]);
    }
    if (full != op->shape) {
      op->x = ctx.Call("broadcast_to", {op->x}, Attrs{{"shape", full}});
      op->shape = full;
    }
  }
  auto dims = [&](const Labels& ls) {
    std::vector<int64_t> d;
    for (int l : ls) d.push_back(extent[l]);
    return d;
  };
  const int64_t nb = Product(dims(batch)), nr = Product(dims(rows)), nc = Product(dims(cols)), nk = Product(dims(k));
  Labels a_order = batch, b_order = batch;
  a_order.insert(a_order.end(), rows.begin(), rows.end());
  a_order.insert(a_order.end(), k.begin(), k.end());
  b_order.insert(b_order.end(), k.begin(), k.end());
  b_order.insert(b_order.end(), cols.begin(), cols.end());
  Expr prod = ctx.Call("nn.matmul", {Arrange(ctx, a, a_order, {nb, nr, nk}), Arrange(ctx, b, b_order, {nb, nk, nc})});
  Operand out;
  out.labels = batch;
  out.labels.insert(out.labels.end(), rows.begin(), rows.end());
  out.labels.insert(out.labels.end(), cols.begin(), cols.end());
  out.shape = dims(out.labels);
  out.x = Reshape(ctx, prod, out.shape);
  return out;
}

void ConvertEinsum(NodeContext& ctx) {
  std::string eq;
  for (char ch : ctx.AttrString("equation", "")) if (ch != ' ') eq += ch;
  if (eq.empty()) ctx.Fail("required attribute 'equation' is missing or empty");
  const size_t arrow = eq.find("->");
  std::vector<std::string> terms;
  for (size_t start = 0, end;; start = end + 1) {
    end = eq.find(',', start);
    terms.push_back(eq.substr(start, std::min(end, arrow) - start));
    if (end == std::string::npos || end > arrow) break;
  }
  if (static_cast<int>(terms.size()) != ctx.NumInputs())
    ctx.Fail("the equation has " + std::to_string(terms.size()) + " operand terms for " +
             std::to_string(ctx.NumInputs()) + " inputs");
  std::vector<Operand> ops;
  int64_t ellipsis_rank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    Operand op{ctx.Input(static_cast<int>(i)), {}, ctx.InputShape(static_cast<int>(i))};
    op.labels = ParseTerm(ctx, terms[i], static_cast<int64_t>(op.shape.size()), 0);
    for (int l : op.labels) if (l >= 256) ellipsis_rank = std::max<int64_t>(ellipsis_rank, l - 255);
    ops.push_back(op);
  }
  Labels out_labels;
  if (arrow != std::string::npos) {
    out_labels = ParseTerm(ctx, eq.substr(arrow + 2), -1, ellipsis_rank);
  } else {  // implicit: the ellipsis dims, then the letters used once, alphabetically
    std::map<int, int> uses;
    for (const Operand& op : ops) for (int l : op.labels) ++uses[l];
    for (int64_t k = ellipsis_rank; k-- > 0;) out_labels.push_back(256 + static_cast<int>(k));
    for (auto [l, n] : uses) if (l < 256 && n == 1) out_labels.push_back(l);
  }
  for (Operand& op : ops) TakeDiagonals(ctx, op);
  // Left to right: sum what nobody else needs, then contract with the next operand.
  auto needed_after = [&](size_t i) {
    std::multiset<int> keep(out_labels.begin(), out_labels.end());
    for (size_t j = i + 1; j < ops.size(); ++j) keep.insert(ops[j].labels.begin(), ops[j].labels.end());
    return keep;
  };
  Operand acc = ops[0];
  SumUnused(ctx, acc, needed_after(0));
  for (size_t i = 1; i < ops.size(); ++i) {
    const std::multiset<int> later = needed_after(i);
    std::multiset<int> keep_acc = later, keep_op = later;
    keep_acc.insert(ops[i].labels.begin(), ops[i].labels.end());
    keep_op.insert(acc.labels.begin(), acc.labels.end());
    SumUnused(ctx, acc, keep_acc);
    SumUnused(ctx, ops[i], keep_op);
    acc = Contract(ctx, acc, ops[i], later);
  }
  SumUnused(ctx, acc, std::multiset<int>(out_labels.begin(), out_labels.end()));
  for (int l : out_labels)
    if (!std::count(acc.labels.begin(), acc.labels.end(), l)) ctx.Fail("an output label is not in any operand");
  ctx.SetOutput(0, Permute(ctx, acc.x, acc.labels, out_labels));
}

}  // namespace

void RegisterEinsumConverters(ConverterTable& t) { t["Einsum"] = ConvertEinsum; }

}  // namespace tessera::frontend::onnx_import
