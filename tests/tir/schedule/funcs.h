// Small PrimFuncs in the form te::create_prim_func builds (a root block over one loop nest
// per compute, each ending in a block with spatial / reduction iter vars), built directly
// so the schedule tests do not depend on te.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "../../../src/tir/schedule/utils.h"
#include "tessera/ir/op.h"
#include "tessera/tir/function.h"

namespace tessera::tir::testing {

using ir::make_const;

struct Axis {
  std::string name;
  int64_t extent;
};

/// One compute: out[s...] = value(s, r) (spatial), or with `init` a sum reduction
/// out[s...] = out[s...] + value(s, r) over the reduction axes. `out_index`, when given,
/// maps the spatial iter vars to the store's indices (a transformed layout, an offset).
inline Stmt MakeCompute(const std::string& name, const Buffer& out, const std::vector<Axis>& spatial,
                        const std::vector<Axis>& reduce,
                        const std::function<PrimExpr(const std::vector<Var>&, const std::vector<Var>&)>& value,
                        PrimExpr init = PrimExpr(),
                        const std::function<std::vector<PrimExpr>(const std::vector<Var>&)>& out_index = nullptr) {
  DataType i32 = DataType::Int(32);
  std::vector<Var> loops, sv, rv;
  std::vector<IterVar> ivs;
  for (const auto& a : spatial) {
    loops.emplace_back(a.name, i32);
    sv.emplace_back("v" + a.name, i32);
    ivs.push_back(IterVar{sv.back(), Range(make_const(i32, 0), make_const(i32, a.extent)), IterVarType::kDataPar});
  }
  for (const auto& a : reduce) {
    loops.emplace_back(a.name, i32);
    rv.emplace_back("v" + a.name, i32);
    ivs.push_back(IterVar{rv.back(), Range(make_const(i32, 0), make_const(i32, a.extent)), IterVarType::kCommReduce});
  }
  std::vector<PrimExpr> idx(sv.begin(), sv.end());
  if (out_index) idx = out_index(sv);
  PrimExpr v = value(sv, rv);
  Stmt body, init_stmt;
  if (init.defined()) {
    body = BufferStoreNode::make(out, BufferLoadNode::make(out, idx) + v, idx);
    init_stmt = BufferStoreNode::make(out, init, idx);
  } else {
    body = BufferStoreNode::make(out, v, idx);
  }
  std::vector<Range> point;
  for (const auto& x : idx) point.emplace_back(x, make_const(i32, 1));
  Stmt tmp = BlockNode::make(name, ivs, {}, {BufferRegion{out, point}}, body, init_stmt);
  Stmt block = sched::WithRegions(tmp.as<BlockNode>(), body, init_stmt, {BufferRegion{out, point}});
  std::vector<PrimExpr> bind(loops.begin(), loops.end());
  Stmt s = BlockRealizeNode::make(bind, PrimExpr(), block);
  std::vector<Axis> all = spatial;
  all.insert(all.end(), reduce.begin(), reduce.end());
  for (int i = static_cast<int>(loops.size()) - 1; i >= 0; --i) {
    s = ForNode::make(loops[i], make_const(i32, 0), make_const(i32, all[i].extent), ForKind::kSerial, s);
  }
  return s;
}

inline PrimFunc MakeFunc(const std::string& name, std::vector<Buffer> params, std::vector<Stmt> nests,
                         std::vector<Buffer> allocs = {}) {
  Stmt root = BlockNode::make("root", {}, {}, {}, SeqStmtNode::make(std::move(nests)), Stmt(), std::move(allocs));
  return PrimFunc::make(name, std::move(params), BlockRealizeNode::make({}, PrimExpr(), root));
}

inline Buffer F32(const std::string& name, std::vector<int64_t> shape) {
  std::vector<PrimExpr> s;
  for (auto x : shape) s.push_back(make_const(DataType::Int(32), x));
  return Buffer::make(name, DataType::Float(32), s);
}

/// C[i, j] = sum_k A[i, k] * B[k, j]
inline PrimFunc Matmul(int64_t M, int64_t N, int64_t K) {
  Buffer A = F32("A", {M, K}), B = F32("B", {K, N}), C = F32("C", {M, N});
  Stmt c = MakeCompute("C", C, {{"i", M}, {"j", N}}, {{"k", K}},
                       [&](auto& s, auto& r) { return BufferLoadNode::make(A, {s[0], r[0]}) * BufferLoadNode::make(B, {r[0], s[1]}); },
                       make_const(DataType::Float(32), 0.0));
  return MakeFunc("matmul", {A, B, C}, {c});
}

/// B[i] = sum_k A[i, k]  (a row sum: the reduction runs along A's contiguous axis)
inline PrimFunc RowSum(int64_t M, int64_t K) {
  Buffer A = F32("A", {M, K}), B = F32("B", {M});
  Stmt b = MakeCompute("B", B, {{"i", M}}, {{"k", K}}, [&](auto& s, auto& r) { return BufferLoadNode::make(A, {s[0], r[0]}); },
                       make_const(DataType::Float(32), 0.0));
  return MakeFunc("rowsum", {A, B}, {b});
}

/// B = A + 1; C = B * 2; D = C + A   (2-D, intermediates B and C)
inline PrimFunc ElementwiseChain(int64_t M, int64_t N) {
  Buffer A = F32("A", {M, N}), B = F32("B", {M, N}), C = F32("C", {M, N}), D = F32("D", {M, N});
  auto f1 = make_const(DataType::Float(32), 1.0), f2 = make_const(DataType::Float(32), 2.0);
  Stmt b = MakeCompute("B", B, {{"i", M}, {"j", N}}, {}, [&](auto& s, auto&) { return BufferLoadNode::make(A, {s[0], s[1]}) + f1; });
  Stmt c = MakeCompute("C", C, {{"i", M}, {"j", N}}, {}, [&](auto& s, auto&) { return BufferLoadNode::make(B, {s[0], s[1]}) * f2; });
  Stmt d = MakeCompute("D", D, {{"i", M}, {"j", N}}, {},
                       [&](auto& s, auto&) { return BufferLoadNode::make(C, {s[0], s[1]}) + BufferLoadNode::make(A, {s[0], s[1]}); });
  return MakeFunc("chain", {A, D}, {b, c, d}, {B, C});
}

/// P[i] = (1 <= i < N + 1) ? A[i - 1] : 0  (pad by 1);  C[i] = sum_{r < 3} P[i + r] * W[r]
inline PrimFunc PadConv1D(int64_t N) {
  Buffer A = F32("A", {N}), W = F32("W", {3}), P = F32("P", {N + 2}), C = F32("C", {N});
  Stmt p = MakeCompute("P", P, {{"i", N + 2}}, {}, [&](auto& s, auto&) {
    PrimExpr in = s[0] >= 1 && s[0] < make_const(DataType::Int(32), N + 1);
    return ir::select(in, BufferLoadNode::make(A, {ir::max(ir::min(s[0] - 1, make_const(DataType::Int(32), N - 1)), 0)}),
                      make_const(DataType::Float(32), 0.0));
  });
  Stmt c = MakeCompute("C", C, {{"i", N}}, {{"r", 3}},
                       [&](auto& s, auto& r) { return BufferLoadNode::make(P, {s[0] + r[0]}) * BufferLoadNode::make(W, {r[0]}); },
                       make_const(DataType::Float(32), 0.0));
  return MakeFunc("padconv", {A, W, C}, {p, c}, {P});
}

/// C = matmul(A, B); D[i, j] = max(C[i, j], 0)
inline PrimFunc MatmulRelu(int64_t M, int64_t N, int64_t K) {
  Buffer A = F32("A", {M, K}), B = F32("B", {K, N}), C = F32("C", {M, N}), D = F32("D", {M, N});
  Stmt c = MakeCompute("C", C, {{"i", M}, {"j", N}}, {{"k", K}},
                       [&](auto& s, auto& r) { return BufferLoadNode::make(A, {s[0], r[0]}) * BufferLoadNode::make(B, {r[0], s[1]}); },
                       make_const(DataType::Float(32), 0.0));
  Stmt d = MakeCompute("D", D, {{"i", M}, {"j", N}}, {},
                       [&](auto& s, auto&) { return ir::max(BufferLoadNode::make(C, {s[0], s[1]}), make_const(DataType::Float(32), 0.0)); });
  return MakeFunc("matmul_relu", {A, B, D}, {c, d}, {C});
}

}  // namespace tessera::tir::testing
