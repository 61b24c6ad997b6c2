// te -> create_prim_func -> LowerToFlat, run by the reference interpreter and
// compared with hand-written C++ loops.
#include <gtest/gtest.h>

#include <cmath>

#include "tir_interp.h"
#include "tessera/te/tensor.h"
#include "tessera/tir/functor.h"
#include "tessera/tir/printer.h"
#include "tessera/tir/transform/lower.h"
#include "tessera/tir/transform/lower_blocks.h"

namespace tessera::te {
namespace {

using namespace tessera::ir;
const DataType f32 = DataType::Float(32);

std::vector<float> Iota(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * scale) + 0.25f;
  return v;
}

TEST(LowerNumeric, Matmul) {
  const int M = 7, N = 5, K = 9;
  auto A = placeholder({M, K}, f32, "A");
  auto B = placeholder({K, N}, f32, "B");
  auto k = reduce_axis(Range(0, K), "k");
  auto C = compute({M, N}, [&](const std::vector<Var>& i) { return sum(A({i[0], k.var}) * B({k.var, i[1]}), {k}); }, "C");
  tir::PrimFunc flat = tir::transform::LowerToFlat(create_prim_func({A, B, C}, "matmul"));
  std::vector<float> a = Iota(M * K, 0.3f), b = Iota(K * N, 0.7f), c(M * N, -1.0f), ref(M * N, 0.0f);
  tir::testing::RunFlat(flat, {&a, &b, &c});
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      for (int kk = 0; kk < K; ++kk) ref[i * N + j] += a[i * K + kk] * b[kk * N + j];
    }
  }
  for (int i = 0; i < M * N; ++i) EXPECT_FLOAT_EQ(c[i], ref[i]) << i << "\n" << tir::AsText(flat);
}

TEST(LowerNumeric, PadThenConvLikeTwoStage) {
  // P = zero-pad X (length 10) by 1 on each side; Y[o] = sum_r P[o + r] * W[r], r < 3.
  const int L = 10, R = 3;
  auto X = placeholder({L}, f32, "X");
  auto W = placeholder({R}, f32, "W");
  auto P = compute({L + 2}, [&](const std::vector<Var>& i) {
    PrimExpr inside = (i[0] >= 1) && (i[0] < L + 1);
    return select(inside, X({max(min(i[0] - 1, L - 1), 0)}), PrimExpr(0.0f));
  }, "P", "injective");
  auto r = reduce_axis(Range(0, R), "r");
  auto Y = compute({L}, [&](const std::vector<Var>& o) { return sum(P({o[0] + r.var}) * W({r.var}), {r}); }, "Y");
  tir::PrimFunc prim = create_prim_func({X, W, Y}, "pad_conv");
  tir::PrimFunc flat = tir::transform::LowerToFlat(prim);
  std::string text = tir::AsText(flat);
  EXPECT_NE(text.find("P = allocate((12,), \"float32\", \"global\")"), std::string::npos) << text;
  std::vector<float> x = Iota(L, 0.9f), w = {0.5f, -1.0f, 2.0f}, y(L, 0.0f);
  tir::testing::RunFlat(flat, {&x, &w, &y});
  for (int o = 0; o < L; ++o) {
    float acc = 0.0f;
    for (int rr = 0; rr < R; ++rr) {
      int p = o + rr - 1;
      acc += (p >= 0 && p < L ? x[p] : 0.0f) * w[rr];
    }
    EXPECT_FLOAT_EQ(y[o], acc) << o << "\n" << text;
  }
}

// Marks every loop named `name` with `kind` (a stand-in for the schedule's vectorize / unroll).
class MarkLoop : public tir::StmtExprMutator {
 public:
  MarkLoop(std::string name, tir::ForKind kind) : name_(std::move(name)), kind_(kind) {}

 protected:
  tir::Stmt VisitStmt_(const tir::ForNode* op, const tir::Stmt& s) override {
    tir::Stmt body = VisitStmt(op->body);
    return tir::ForNode::make(op->loop_var, op->min, op->extent, op->loop_var->name_hint == name_ ? kind_ : op->for_kind,
                              body, op->annotations);
  }

 private:
  std::string name_;
  tir::ForKind kind_;
};

TEST(LowerNumeric, ElementwiseVectorizedAndUnrolled) {
  auto A = placeholder({4, 8}, f32, "A");
  auto B = compute({4, 8}, [&](const std::vector<Var>& i) { return exp(A({i[0], i[1]})) * 0.5f + 1.0f; }, "B", "elemwise");
  tir::PrimFunc prim = create_prim_func({A, B}, "ew");
  prim = tir::transform::LowerBlocks(prim);
  prim = prim.WithBody(MarkLoop("j", tir::ForKind::kVectorized).VisitStmt(prim->body));
  prim = prim.WithBody(MarkLoop("i", tir::ForKind::kUnrolled).VisitStmt(prim->body));
  tir::PrimFunc flat = tir::transform::LowerToFlat(prim);
  std::string text = tir::AsText(flat);
  EXPECT_EQ(text.find("for "), std::string::npos) << text;  // fully unrolled and vectorized
  EXPECT_NE(text.find("B[ramp(8, 1, 8)] = exp(A[ramp(8, 1, 8)]) * broadcast(0.5f, 8) + broadcast(1.0f, 8)"),
            std::string::npos)
      << text;
  std::vector<float> a = Iota(32, 0.2f), b(32, 0.0f);
  tir::testing::RunFlat(flat, {&a, &b});
  for (int i = 0; i < 32; ++i) EXPECT_FLOAT_EQ(b[i], static_cast<float>(std::exp(a[i])) * 0.5f + 1.0f) << i;
}

TEST(LowerNumeric, RowMaxWithMinusInfinityInit) {
  auto A = placeholder({3, 6}, f32, "A");
  auto r = reduce_axis(Range(0, 6), "r");
  auto M = compute({3}, [&](const std::vector<Var>& i) { return max(A({i[0], r.var}), {r}); }, "M");
  tir::PrimFunc flat = tir::transform::LowerToFlat(create_prim_func({A, M}, "rowmax"));
  std::vector<float> a = Iota(18, 1.3f), m(3, 0.0f);
  for (auto& v : a) v -= 5.0f;  // all negative: a zero init would be wrong
  tir::testing::RunFlat(flat, {&a, &m});
  for (int i = 0; i < 3; ++i) {
    float ref = -INFINITY;
    for (int j = 0; j < 6; ++j) ref = std::max(ref, a[i * 6 + j]);
    EXPECT_FLOAT_EQ(m[i], ref);
  }
}

}  // namespace
}  // namespace tessera::te
