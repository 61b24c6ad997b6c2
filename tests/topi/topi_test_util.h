// Shared helpers of the topi tests: random data, running a TE graph through create_prim_func
// (optionally with the default x86 schedule) on the reference interpreter, and comparisons.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "tessera/target/target.h"
#include "tessera/te/tensor.h"
#include "tessera/tir/function.h"
#include "tessera/tir/functor.h"
#include "tessera/topi/nn/dense_pack.h"
#include "tessera/topi/schedule_knobs.h"
#include "tessera/topi/x86/schedule.h"
#include "tir_interp.h"

namespace tessera::topi::testing {

/// The target the topi and graph_lower tests choose tiles and schedules for: the `avx2` tag
/// (the machine DESIGN.md measures on), whatever the host; Mode::kJIT compiles for the host.
const target::Target& TestTarget();

/// The x86 schedule options for TestTarget(), with `knobs` (null: an untuned build).
x86::ScheduleOptions TestOptions(KnobContext* knobs);

using tir::testing::RunPrimFunc;  // the reference interpreter (tests/tir/tir_interp.h)

using Data = std::vector<double>;

/// The packing of a [N, K] weight into [NB, K, bn] (topi::pack_dense_weight, what
/// graph_lower::PackGemmWeights produces), in C++: zero columns past N.
Data PackRef(const Data& w, int64_t n, int64_t k, const GemmPackTile& t);

/// n values uniform in [lo, hi), rounded to float32; deterministic per seed.
Data Random(size_t n, uint32_t seed, double lo = -1.0, double hi = 1.0);

enum class Mode {
  kUnscheduled,    ///< create_prim_func, block form, interpreted
  kScheduled,      ///< + the default x86 schedule, block form, interpreted
  kScheduledFlat,  ///< + tir::transform::LowerToFlat, flat form, interpreted
  kJIT,            ///< + LLVM codegen::BuildJIT on the host, run natively
};

/// Whether this build has the LLVM codegen (Mode::kJIT).
bool HaveJIT();

/// Lowers inputs + outputs with te::create_prim_func (scheduling it when asked), runs it on
/// in_data and returns one array per output.
std::vector<Data> Run(const std::vector<te::Tensor>& inputs, const std::vector<te::Tensor>& outputs,
                      const std::vector<Data>& in_data, Mode mode);

/// Runs a flat PrimFunc (LowerToFlat's output) natively through codegen::BuildJIT; storage
/// holds one array per parameter, outputs are overwritten. Requires HaveJIT().
void RunJIT(const tir::PrimFunc& flat, std::vector<Data>& storage);

/// Runs every mode (kJIT when HaveJIT()) and checks each against `want` (relative + absolute tol).
void CheckAllModes(const std::vector<te::Tensor>& inputs, const te::Tensor& output, const std::vector<Data>& in_data,
                   const Data& want, double tol = 1e-4);

/// The block names and the loop kinds of a scheduled function (visit its body).
struct LoopKinds : tir::StmtExprVisitor {
  std::set<std::string> blocks;
  int parallel = 0, vectorized = 0, unrolled = 0;
  void VisitStmt_(const tir::BlockNode* op) override {
    blocks.insert(op->name_hint);
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const tir::ForNode* op) override {
    parallel += op->for_kind == tir::ForKind::kParallel;
    vectorized += op->for_kind == tir::ForKind::kVectorized;
    unrolled += op->for_kind == tir::ForKind::kUnrolled;
    StmtExprVisitor::VisitStmt_(op);
  }
};

void ExpectNear(const Data& got, const Data& want, double tol, const char* what);

/// Runs a scheduled PrimFunc whose last parameter is the output (out_size elements, prefilled with
/// -777) on the reference interpreter in block form, then flat (tir::transform::LowerToFlat), then
/// natively when HaveJIT(); checks the output against `want` each time ("<what> (blocks)", "(flat)",
/// "(JIT)").
void CheckScheduledRuns(const tir::PrimFunc& scheduled, const std::vector<Data>& inputs, size_t out_size,
                        const Data& want, double tol, const std::string& what);

/// The loops of a scheduled body by kind, and which blocks sit under a parallel loop.
struct ParallelShape : tir::StmtExprVisitor {
  int parallel = 0, vectorized = 0, unrolled = 0, depth = 0;
  std::set<std::string> under_parallel;
  void VisitStmt_(const tir::ForNode* op) override {
    const bool par = op->for_kind == tir::ForKind::kParallel;
    parallel += par;
    vectorized += op->for_kind == tir::ForKind::kVectorized;
    unrolled += op->for_kind == tir::ForKind::kUnrolled;
    depth += par;
    StmtExprVisitor::VisitStmt_(op);
    depth -= par;
  }
  void VisitStmt_(const tir::BlockNode* op) override {
    if (depth > 0) under_parallel.insert(op->name_hint);
    StmtExprVisitor::VisitStmt_(op);
  }
};

}  // namespace tessera::topi::testing
