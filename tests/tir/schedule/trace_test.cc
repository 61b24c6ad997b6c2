// Trace printing, JSON round trip and replay.
#include <gtest/gtest.h>

#include "tir_interp.h"
#include "funcs.h"
#include "schedule_test_util.h"
#include "tessera/tir/printer.h"
#include "tessera/tir/schedule/schedule.h"
#include "tessera/tir/structural_equal.h"

namespace tessera::tir {
namespace {

using namespace testing;  // NOLINT

/// A schedule touching most primitives, on functions built fresh by `make`.
template <typename F>
Schedule Scheduled(F make) {
  Schedule sch(make());
  BlockRV c = sch.get_block("C");
  auto l = sch.get_loops(c);
  auto i = sch.split(l[0], {-1, 4});
  auto j = sch.split(l[1], {2, -1});
  sch.reorder({i[0], j[0], i[1], l[2], j[1]});
  BlockRV d = sch.get_block("D");
  sch.reverse_compute_at(d, j[0]);
  sch.decompose_reduction(c, i[1]);
  sch.parallel(i[0]);
  sch.vectorize(j[1]);
  sch.annotate(i[0], "pragma_unroll", ir::make_const(DataType::Int(32), 4));
  sch.cache_read(c, 1, "local");
  return sch;
}

TEST(ScheduleTrace, Print) {
  Schedule sch(Matmul(8, 8, 8));
  BlockRV c = sch.get_block("C");
  auto l = sch.get_loops(c);
  auto t = sch.split(l[0], {8, -1});
  LoopRV f = sch.fuse({t[1], l[1]});
  sch.parallel(t[0]);
  sch.reorder({l[2], f});
  sch.cache_write(c, 0, "local");
  sch.annotate(c, "tag", ir::StringImmNode::make("x\"y"));
  EXPECT_EQ(sch.trace().str(),
            "b0 = sch.get_block(\"C\")\n"
            "l1, l2, l3 = sch.get_loops(b0)\n"
            "l4, l5 = sch.split(l1, factors=[8, -1])\n"
            "l6 = sch.fuse(l5, l2)\n"
            "sch.parallel(l4)\n"
            "sch.reorder(l3, l6)\n"
            "b7 = sch.cache_write(b0, write_buffer_index=0, storage_scope=\"local\")\n"
            "sch.annotate(b0, ann_key=\"tag\", ann_val=\"x\\\"y\")\n");
}

TEST(ScheduleTrace, JsonRoundTripAndReplay) {
  auto make = [] { return MatmulRelu(10, 12, 6); };
  Schedule sch = Scheduled(make);
  PrimFunc original = make();
  EXPECT_LT(MaxDiff(original, sch.func()), 1e-9) << AsText(sch.func());

  ExpectTraceRoundTrip(sch, make);
}

TEST(ScheduleTrace, ReplayErrors) {
  EXPECT_THROW(Trace::FromJSON("{not json"), UserError);
  EXPECT_THROW(Trace::FromJSON(R"({"instructions": [{"kind": "split", "inputs": ["x1"]}]})"), UserError);
  Trace t = Trace::FromJSON(R"({"instructions": [{"kind": "teleport", "inputs": [], "attrs": [], "outputs": []}]})");
  Schedule sch(Matmul(4, 4, 4));
  EXPECT_THROW(t.ApplyToSchedule(sch), UserError);
  // A trace recorded on a function with a block "C" fails on one without.
  Trace t2 = Trace::FromJSON(R"({"instructions": [{"kind": "get_block", "inputs": [], "attrs": [["name", "Z"]], "outputs": ["b0"]}]})");
  EXPECT_THROW(t2.ApplyToSchedule(sch), ScheduleError);
}

}  // namespace
}  // namespace tessera::tir
