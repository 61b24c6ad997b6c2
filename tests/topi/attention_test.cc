// The fused attention compute (topi/nn/attention.h) and its CPU schedule (topi/x86/attention.h):
// the loop structure (one parallel loop of query blocks with every stage under it, the two
// micro-kernels unrolled and vectorized, the scores' buffer compacted to a block of rows), results
// equal to a float64 reference of softmax(scale q k_t + bias) v on the reference interpreter (blocks
// and flat) and the LLVM JIT, for dividing, prime and single-row shapes, under the hand-chosen and
// random knob configurations, and traces that replay.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>

#include "tessera/tir/printer.h"
#include "tessera/tir/schedule/trace.h"
#include "tessera/tir/structural_equal.h"
#include "tessera/tir/transform/compact_buffer_allocation.h"
#include "tessera/topi/nn/attention.h"
#include "tessera/topi/x86/attention.h"
#include "tessera/topi/x86/schedule.h"
#include "tir_interp.h"
#include "topi_test_util.h"

namespace tessera::topi {
namespace {

using testing::Data;
const DataType f32 = DataType::Float(32);

// softmax(scale q k_t + bias) v over [batch, M, D] x [batch, D, N] x [batch, N, Dv], with a bias
// of shape [M, N] (or none), in float64.
struct Attention {
  int64_t batch, m, n, d, dv;
  double scale;
  bool with_bias;
  Tensor q, kt, v, bias, out;
  Attention(int64_t batch_, int64_t m_, int64_t n_, int64_t d_, int64_t dv_, double scale_, bool bias_)
      : batch(batch_), m(m_), n(n_), d(d_), dv(dv_), scale(scale_), with_bias(bias_) {
    q = te::placeholder(MakeShape({batch, m, d}), f32, "q");
    kt = te::placeholder(MakeShape({batch, d, n}), f32, "k_t");
    v = te::placeholder(MakeShape({batch, n, dv}), f32, "v");
    if (with_bias) bias = te::placeholder(MakeShape({m, n}), f32, "bias");
    out = attention(q, kt, v, with_bias ? std::optional<Tensor>(bias) : std::nullopt, scale);
  }
  std::vector<Tensor> Inputs() const {
    std::vector<Tensor> in = {q, kt, v};
    if (with_bias) in.push_back(bias);
    return in;
  }
  tir::PrimFunc Func() const {
    std::vector<Tensor> args = Inputs();
    args.push_back(out);
    return te::create_prim_func(args, "attn");
  }
  std::vector<Data> Data_(uint32_t seed) const {
    std::vector<Data> in = {testing::Random(batch * m * d, seed, -2, 2), testing::Random(batch * d * n, seed + 1, -2, 2),
                            testing::Random(batch * n * dv, seed + 2)};
    if (with_bias) in.push_back(testing::Random(m * n, seed + 3, -3, 1));
    return in;
  }
  Data Want(const std::vector<Data>& in) const {
    Data want(static_cast<size_t>(batch * m * dv));
    std::vector<double> s(static_cast<size_t>(n));
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < m; ++i) {
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < n; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < d; ++k) acc += in[0][(b * m + i) * d + k] * in[1][(b * d + k) * n + j];
          s[j] = acc * scale + (with_bias ? in[3][i * n + j] : 0.0);
          mx = std::max(mx, s[j]);
        }
        for (int64_t j = 0; j < n; ++j) sum += (s[j] = std::exp(s[j] - mx));
        for (int64_t c = 0; c < dv; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < n; ++j) acc += s[j] * in[2][(b * n + j) * dv + c];
          want[(b * m + i) * dv + c] = acc / sum;
        }
      }
    return want;
  }
};

tir::Schedule Scheduled(const tir::PrimFunc& f, KnobConfig config = {}, std::vector<KnobSpec>* space = nullptr) {
  KnobContext ctx(std::move(config));
  x86::ScheduleOptions opt = x86::ScheduleOptionsFor(testing::TestTarget());
  opt.knobs = &ctx;
  tir::Schedule sch = x86::ScheduleDefault(f, opt, {x86::AttentionAnchor()});
  if (space) *space = ctx.space();
  return sch;
}

// Loops by kind, the blocks under the parallel loop, and the allocations' shapes.
struct Shape : testing::ParallelShape {
  std::map<std::string, std::vector<int64_t>> allocs;
  void VisitStmt_(const tir::BlockNode* op) override {
    for (const tir::Buffer& b : op->alloc_buffers) {
      std::vector<int64_t> s;
      for (const PrimExpr& e : b->shape) {
        int64_t v = -1;
        ir::as_const_int(e, &v);
        s.push_back(v);
      }
      allocs[b->name] = s;
    }
    ParallelShape::VisitStmt_(op);
  }
  using ParallelShape::VisitStmt_;
};

void CheckRuns(const tir::PrimFunc& scheduled, const std::vector<Data>& inputs, size_t out_size, const Data& want,
               const std::string& what) {
  testing::CheckScheduledRuns(scheduled, inputs, out_size, want, 1e-5, what);
}

TEST(Attention, EveryStageRunsUnderOneParallelLoopOfQueryBlocks) {
  // 3 heads of 40 queries (blocks of 20), 70 keys (four 16-lane panels and a guarded one), D 8, Dv 16.
  Attention a(3, 40, 70, 8, 16, 0.35, true);
  const tir::PrimFunc f = a.Func();
  std::vector<KnobSpec> space;
  tir::Schedule sch = Scheduled(f, {}, &space);
  Shape s;
  s.VisitStmt(sch.func()->body);
  EXPECT_EQ(s.parallel, 1) << tir::AsText(sch.func());
  for (const char* b : {"T_attn_score_init", "T_attn_score", "T_attn_max", "T_attn_exp", "T_attn_sum", "T_attn_pv_init",
                        "T_attn_pv", "T_attn"})
    EXPECT_TRUE(s.under_parallel.count(b)) << b << "\n" << tir::AsText(sch.func());
  // The bias and the scale are inlined into the max and the exp (no logit stage).
  EXPECT_FALSE(s.under_parallel.count("T_attn_logit")) << tir::AsText(sch.func());
  // Both micro-kernels unroll their rows; every stage's lanes are vectorized: the micro-kernels'
  // inits and updates, the max's and the sum's 16 partial results (rfactor, inits and updates),
  // the exp and the normalization.
  EXPECT_GE(s.unrolled, 2) << tir::AsText(sch.func());
  EXPECT_EQ(s.vectorized, 10) << tir::AsText(sch.func());
  std::set<std::string> names;
  for (const KnobSpec& k : space) names.insert(k.name);
  for (const char* n : {"T_attn.rows", "T_attn_score.mr", "T_attn_pv.mr"}) EXPECT_TRUE(names.count(n)) << n;
  // The hand-chosen block: the largest divisor of 40 in [12, 24].
  const std::string trace = sch.trace().str();
  EXPECT_NE(trace.find("factors=[-1, 20]"), std::string::npos) << trace;
  // The scores and the exponentials shrink to one block of rows (20 x 70) once compacted.
  Shape compact;
  compact.VisitStmt(tir::transform::CompactBufferAllocation(sch.func())->body);
  ASSERT_TRUE(compact.allocs.count("T_attn_score")) << tir::AsText(sch.func());
  EXPECT_EQ(compact.allocs["T_attn_score"], (std::vector<int64_t>{1, 20, 70}));
  EXPECT_EQ(compact.allocs["T_attn_exp"], (std::vector<int64_t>{1, 20, 70}));
  const std::vector<Data> in = a.Data_(1);
  CheckRuns(sch.func(), in, 3 * 40 * 16, a.Want(in), "hand-chosen");
}

TEST(Attention, ShapesTheBlocksDoNotDivideComputeTheSame) {
  // A prime query count above 64 (blocks of 16, the last one guarded and run serially per head),
  // with and without a batch; one query row; a Dv the lanes do not divide; no bias.
  struct Case {
    int64_t batch, m, n, d, dv;
    bool bias;
  };
  for (const Case& c : {Case{2, 67, 23, 4, 16, true}, Case{1, 67, 19, 8, 8, false}, Case{4, 1, 33, 8, 16, true},
                        Case{2, 13, 5, 3, 12, true}, Case{1, 12, 64, 16, 20, false}}) {
    Attention a(c.batch, c.m, c.n, c.d, c.dv, 1.0 / std::sqrt(static_cast<double>(c.d)), c.bias);
    const tir::PrimFunc f = a.Func();
    tir::Schedule sch = Scheduled(f);
    const std::vector<Data> in = a.Data_(7);
    const std::string what = "batch " + std::to_string(c.batch) + ", M " + std::to_string(c.m) + ", N " +
                              std::to_string(c.n) + ", Dv " + std::to_string(c.dv);
    CheckRuns(sch.func(), in, static_cast<size_t>(c.batch * c.m * c.dv), a.Want(in), what);
  }
}

TEST(Attention, RandomConfigurationsComputeTheSameAndReplayFromTheirTraces) {
  Attention a(2, 24, 29, 8, 16, 0.5, true);
  const tir::PrimFunc f = a.Func();
  std::vector<KnobSpec> space;
  Scheduled(f, {}, &space);
  const std::vector<Data> in = a.Data_(3);
  const Data want = a.Want(in);
  std::mt19937_64 rng(5);
  std::set<std::string> distinct;
  for (int i = 0; i < 6; ++i) {
    KnobConfig c;
    for (const KnobSpec& k : space)
      c[k.name] = k.candidates[std::uniform_int_distribution<size_t>(0, k.candidates.size() - 1)(rng)];
    tir::Schedule sch = Scheduled(f, c);
    distinct.insert(tir::AsText(sch.func()));
    CheckRuns(sch.func(), in, 2 * 24 * 16, want, "configuration " + std::to_string(i));
    tir::Schedule replay(f);
    tir::Trace::FromJSON(sch.trace().ToJSON()).ApplyToSchedule(replay);
    EXPECT_TRUE(tir::StructuralEqual(replay.func(), sch.func())) << sch.trace().str();
  }
  EXPECT_GE(distinct.size(), 4u);
}

TEST(Attention, MismatchedOperandsAreUserErrors) {
  Tensor q = te::placeholder(MakeShape({2, 4, 8}), f32, "q");
  Tensor kt = te::placeholder(MakeShape({2, 8, 5}), f32, "k_t");
  Tensor v = te::placeholder(MakeShape({2, 5, 3}), f32, "v");
  EXPECT_THROW(attention(q, te::placeholder(MakeShape({2, 7, 5}), f32, "k"), v, std::nullopt, 1.0), UserError);
  EXPECT_THROW(attention(q, kt, te::placeholder(MakeShape({2, 6, 3}), f32, "v"), std::nullopt, 1.0), UserError);
  EXPECT_THROW(attention(q, te::placeholder(MakeShape({3, 8, 5}), f32, "k"), v, std::nullopt, 1.0), UserError);
  EXPECT_THROW(attention(q, kt, v, te::placeholder(MakeShape({3, 5}), f32, "b"), 1.0), UserError);
  EXPECT_THROW(attention(te::placeholder(MakeShape({2, 4, 8}), DataType::Int(32), "q"), kt, v, std::nullopt, 1.0),
               UserError);
}

}  // namespace
}  // namespace tessera::topi
