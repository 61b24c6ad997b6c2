// MetaSchedule's MultiLevelTiling rule (topi/x86/multi_level_tiling.h): the perfect tilings its knobs
// index, the loop structure it builds (SSRSRS, init split off, lanes vectorized, consumer on the
// tile, outer tiles parallel), results equal to the unscheduled function under the hand-picked and
// under random configurations (reference interpreter, flat TIR and LLVM JIT), and traces that replay.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

#include "tessera/tir/printer.h"
#include "tessera/tir/schedule/trace.h"
#include "tessera/tir/structural_equal.h"
#include "tessera/tir/transform/lower.h"
#include "tessera/topi/broadcast.h"
#include "tessera/topi/math.h"
#include "tessera/topi/nn/conv2d.h"
#include "tessera/topi/nn/pooling.h"
#include "tessera/topi/reduction.h"
#include "tessera/topi/x86/multi_level_tiling.h"
#include "tessera/topi/x86/schedule.h"
#include "tir_interp.h"
#include "topi_test_util.h"

namespace tessera::topi {
namespace {

using testing::Data;
const DataType f32 = DataType::Float(32);

TEST(PerfectTilings, EveryFactorizationOnceInnermostFirst) {
  EXPECT_EQ(x86::PerfectTilings(12, 2),
            (std::vector<std::vector<int64_t>>{{12, 1}, {6, 2}, {4, 3}, {3, 4}, {2, 6}, {1, 12}}));
  const auto t = x86::PerfectTilings(64, 4);
  // 64 = 2^6 into 4 ordered factors: C(6 + 3, 3) = 84.
  EXPECT_EQ(t.size(), 84u);
  std::set<std::vector<int64_t>> distinct(t.begin(), t.end());
  EXPECT_EQ(distinct.size(), t.size());
  for (const auto& f : t) EXPECT_EQ(f[0] * f[1] * f[2] * f[3], 64);
  EXPECT_EQ(t.front(), (std::vector<int64_t>{64, 1, 1, 1}));
  EXPECT_EQ(x86::PerfectTilings(7, 4).size(), 4u);  // a prime: the 7 at one of four levels
  EXPECT_EQ(x86::PerfectTilings(1, 4), (std::vector<std::vector<int64_t>>{{1, 1, 1, 1}}));
  // Inner factors bounded, long lists thinned (the first kept).
  for (const auto& f : x86::PerfectTilings(4096, 4, 8)) EXPECT_LE(std::max({f[1], f[2], f[3]}), 8);
  const auto thin = x86::PerfectTilings(4096, 4, 64, 100);
  EXPECT_LE(thin.size(), 100u);
  EXPECT_EQ(thin.front(), (std::vector<int64_t>{4096, 1, 1, 1}));
  EXPECT_TRUE(x86::PerfectTilings(0, 2).empty());
}

// relu(A[M, K] x B[K, N]): a reduction block with an elementwise consumer.
struct Matmul {
  Tensor a, b, y;
  int64_t m, n, k;
  Matmul(int64_t m_, int64_t n_, int64_t k_) : m(m_), n(n_), k(k_) {
    a = te::placeholder(MakeShape({m, k}), f32, "A");
    b = te::placeholder(MakeShape({k, n}), f32, "B");
    const te::IterVar kv = te::reduce_axis(ir::Range(0, static_cast<int>(k)), "k");
    Tensor c = te::compute(
        MakeShape({m, n}), [&](const std::vector<Var>& i) { return te::sum(a({i[0], kv.var}) * b({kv.var, i[1]}), {kv}); },
        "C");
    y = relu(c);
  }
  tir::PrimFunc Func() const { return te::create_prim_func({a, b, y}, "mm"); }
  Data Want(const Data& da, const Data& db) const {
    Data want(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t l = 0; l < k; ++l) acc += da[i * k + l] * db[l * n + j];
        want[i * n + j] = std::max(acc, 0.0);
      }
    return want;
  }
};

// Schedules f by the default schedule with every reduction block under MultiLevelTiling (plus
// `config`); returns the schedule and, through `space`, the knobs it defined.
tir::Schedule Tiled(const tir::PrimFunc& f, KnobConfig config, std::vector<KnobSpec>* space = nullptr) {
  KnobContext ctx(config);
  x86::ScheduleOptions opt = x86::ScheduleOptionsFor(testing::TestTarget());
  opt.knobs = &ctx;
  // First run: discover the reduction blocks' rule knobs; then turn each on.
  x86::ScheduleDefault(f, opt, {});
  KnobConfig on = config;
  for (const KnobSpec& k : ctx.space())
    if (k.name.size() > 5 && k.name.substr(k.name.size() - 5) == ".rule") on.emplace(k.name, 1);
  KnobContext ctx2(on);
  opt.knobs = &ctx2;
  tir::Schedule sch = x86::ScheduleDefault(f, opt, {});
  if (space) *space = ctx2.space();
  return sch;
}

using testing::CheckScheduledRuns;
using Shape = testing::ParallelShape;

TEST(MultiLevelTiling, MatmulGetsTheSsrsrsStructureWithItsConsumerOnTheTile) {
  Matmul mm(24, 48, 40);
  tir::PrimFunc f = mm.Func();
  std::vector<KnobSpec> space;
  tir::Schedule sch = Tiled(f, {}, &space);
  std::set<std::string> names;
  for (const KnobSpec& k : space) names.insert(k.name);
  for (const char* n : {"C.rule", "C.tile_s0", "C.tile_s1", "C.tile_r0", "C.unroll", "C.epilogue_at"})
    EXPECT_TRUE(names.count(n)) << n;
  Shape s;
  s.VisitStmt(sch.func()->body);
  EXPECT_EQ(s.parallel, 1) << tir::AsText(sch.func());
  EXPECT_GE(s.vectorized, 3) << "the update's, the init's and the consumer's lanes\n" << tir::AsText(sch.func());
  EXPECT_GE(s.unrolled, 1) << tir::AsText(sch.func());
  // The init, the update and the relu all run under the one parallel loop of tiles.
  for (const char* b : {"C", "C_init", "T_relu"}) EXPECT_TRUE(s.under_parallel.count(b)) << b << "\n" << tir::AsText(sch.func());
  // The hand-picked configuration: a register tile of 4 rows x 16 lanes over reduction chunks of 8,
  // the relu under the (fused, parallel) outer tile loop.
  EXPECT_EQ(sch.trace().str(),
            "b0 = sch.get_block(\"C\")\n"
            "l1, l2, l3 = sch.get_loops(b0)\n"
            "l4, l5, l6, l7 = sch.split(l1, factors=[6, 1, 1, 4])\n"
            "l8, l9, l10, l11 = sch.split(l2, factors=[3, 1, 1, 16])\n"
            "l12, l13 = sch.split(l3, factors=[5, 8])\n"
            "sch.reorder(l4, l8, l5, l9, l12, l6, l10, l13, l7, l11)\n"
            "b14 = sch.decompose_reduction(b0, l12)\n"
            "sch.vectorize(l11)\n"
            "sch.unroll(l7)\n"
            "l15, l16, l17, l18, l19, l20, l21, l22 = sch.get_loops(b14)\n"
            "sch.vectorize(l22)\n"
            "sch.unroll(l21)\n"
            "b23 = sch.get_block(\"T_relu\")\n"
            "sch.reverse_compute_at(b23, l8)\n"
            "l24, l25, l26, l27 = sch.get_loops(b23)\n"
            "sch.vectorize(l27)\n"
            "l28 = sch.fuse(l4, l8)\n"
            "sch.parallel(l28)\n");
  Data da = testing::Random(24 * 40, 1), db = testing::Random(40 * 48, 2);
  CheckScheduledRuns(sch.func(), {da, db}, 24 * 48, mm.Want(da, db), 1e-5, "hand-picked tiles");
}

TEST(MultiLevelTiling, RandomConfigurationsComputeTheSameAndReplayFromTheirTraces) {
  Matmul mm(12, 40, 18);
  tir::PrimFunc f = mm.Func();
  std::vector<KnobSpec> space;
  Tiled(f, {}, &space);
  Data da = testing::Random(12 * 18, 3), db = testing::Random(18 * 40, 4);
  const Data want = mm.Want(da, db);
  std::mt19937_64 rng(11);
  std::set<std::string> distinct;
  for (int i = 0; i < 10; ++i) {
    KnobConfig c;
    for (const KnobSpec& k : space) c[k.name] = k.candidates[std::uniform_int_distribution<size_t>(0, k.candidates.size() - 1)(rng)];
    c["C.rule"] = 1;
    tir::Schedule sch = Tiled(f, c);
    distinct.insert(tir::AsText(sch.func()));
    CheckScheduledRuns(sch.func(), {da, db}, 12 * 40, want, 1e-5, "configuration " + std::to_string(i));
    tir::Schedule replay(f);
    tir::Trace::FromJSON(sch.trace().ToJSON()).ApplyToSchedule(replay);
    EXPECT_TRUE(tir::StructuralEqual(replay.func(), sch.func())) << sch.trace().str();
  }
  EXPECT_GE(distinct.size(), 8u);
}

TEST(MultiLevelTiling, ConvWithPaddingAndMaxPoolMatchTheUnscheduledFunction) {
  // A direct NCHW conv (no template: the strategy's NCHWc templates are not given) over an inlined
  // pad, and a max pool (a max combiner), each under the rule with random configurations.
  Tensor x = te::placeholder(MakeShape({1, 3, 10, 12}), f32, "x");
  Tensor w = te::placeholder(MakeShape({8, 3, 3, 3}), f32, "w");
  Conv2DParams p;
  p.padding = {1, 1, 1, 1};
  Tensor conv = conv2d_nchw(x, w, p);
  Pool2DParams pp;
  pp.pool_size = {2, 2};
  pp.strides = {2, 2};
  Tensor pooled = max_pool2d(x, pp);
  struct Case {
    std::vector<Tensor> ins;
    Tensor out;
  };
  int index = 0;
  for (const Case& c : {Case{{x, w}, conv}, Case{{x}, pooled}}) {
    std::vector<Tensor> args = c.ins;
    args.push_back(c.out);
    tir::PrimFunc f = te::create_prim_func(args, "k");
    std::vector<Data> inputs = {testing::Random(360, 5), testing::Random(216, 6)};
    inputs.resize(c.ins.size());
    std::vector<Data> storage = inputs;
    const size_t out_size = static_cast<size_t>(Product(ConstShape(c.out)));
    storage.emplace_back(out_size, 0.0);
    std::vector<Data*> ptrs;
    for (Data& d : storage) ptrs.push_back(&d);
    testing::RunPrimFunc(f, ptrs);
    const Data want = storage.back();
    std::vector<KnobSpec> space;
    tir::Schedule hand = Tiled(f, {}, &space);
    size_t rules = 0;
    for (const KnobSpec& k : space) rules += k.name.find(".rule") != std::string::npos;
    EXPECT_EQ(rules, 1u) << index;
    CheckScheduledRuns(hand.func(), inputs, out_size, want, 1e-5, "hand-picked " + std::to_string(index));
    std::mt19937_64 rng(21 + index);
    for (int i = 0; i < 4; ++i) {
      KnobConfig cfg;
      for (const KnobSpec& k : space)
        cfg[k.name] = k.candidates[std::uniform_int_distribution<size_t>(0, k.candidates.size() - 1)(rng)];
      for (auto& [name, v] : cfg)
        if (name.find(".rule") != std::string::npos) v = 1;
      CheckScheduledRuns(Tiled(f, cfg).func(), inputs, out_size, want, 1e-5, "random " + std::to_string(index));
    }
    ++index;
  }
}

TEST(MultiLevelTiling, AReductionOverTheOutputIsNotMovedOntoTheTile) {
  // sum over the columns of A x B: each row sum needs every column tile, so it keeps its own nest
  // (no epilogue_at knob) and computes the same.
  Matmul mm(8, 32, 12);
  Tensor rows = sum(mm.y, {1});
  tir::PrimFunc f = te::create_prim_func({mm.a, mm.b, rows}, "k");
  std::vector<KnobSpec> space;
  tir::Schedule sch = Tiled(f, {}, &space);
  for (const KnobSpec& k : space) EXPECT_NE(k.name, "C.epilogue_at");
  Data da = testing::Random(8 * 12, 7), db = testing::Random(12 * 32, 8);
  const Data prod = mm.Want(da, db);
  Data want(8, 0.0);
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 32; ++j) want[i] += prod[i * 32 + j];
  CheckScheduledRuns(sch.func(), {da, db}, 8, want, 1e-5, "matmul + row sum");
}

TEST(MultiLevelTiling, AppliesOnlyToReductionsOverConstantPerfectNests) {
  Tensor a = te::placeholder(MakeShape({4, 16}), f32, "a");
  Tensor y = relu(a);
  tir::Schedule elementwise(te::create_prim_func({a, y}, "k"));
  EXPECT_FALSE(x86::MultiLevelTilingApplies(elementwise, "T_relu"));
  EXPECT_TRUE(x86::MultiLevelTiling(elementwise, "T_relu", {}).empty());
  EXPECT_EQ(elementwise.trace().str(), tir::Schedule(te::create_prim_func({a, y}, "k")).trace().str());
  Tensor s = sum(a, {1});
  tir::Schedule reduction(te::create_prim_func({a, s}, "k"));
  EXPECT_TRUE(x86::MultiLevelTilingApplies(reduction, "T_sum"));
  EXPECT_FALSE(x86::MultiLevelTilingApplies(reduction, "no_such_block"));
  // The untuned default never uses the rule: the fallback of "<block>.rule" is 0.
  Matmul mm(8, 16, 8);
  KnobContext ctx;
  x86::ScheduleOptions opt;
  opt.knobs = &ctx;
  tir::PrimFunc with_ctx = x86::ScheduleDefault(mm.Func(), opt, {}).func();
  EXPECT_TRUE(tir::StructuralEqual(with_ctx, x86::ScheduleDefault(mm.Func(), {}, {}).func()));
  EXPECT_EQ(ctx.used().at("C.rule"), 0);
}

}  // namespace
}  // namespace tessera::topi
