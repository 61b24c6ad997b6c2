// A kernel with symbolic extents (PrimFunc shape_vars, dynamic shapes) is not a tuning task:
// Tune lists it as "dynamic shape: not tuned", measures nothing for it and records nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tessera/driver/resolve_target.h"
#include "tessera/te/tensor.h"
#include "tessera/topi/util.h"
#include "tessera/topi/x86/schedule.h"
#include "tessera/tune/tuner.h"

namespace tessera::tune {
namespace {

TEST(DynamicShape, TaskIsNotTuned) {
  const DataType f32 = DataType::Float(32);
  ir::Var n("seq", DataType::Int(32));
  te::Tensor x = te::placeholder({n, topi::Index(16)}, f32, "x");
  te::Tensor y = te::compute({n, topi::Index(16)}, [&](const std::vector<ir::Var>& i) { return x({i[0], i[1]}) * 2.0f; },
                             "y");
  TuneTask t;
  t.name = "fused_scale_dyn";
  t.kernels = {t.name};
  t.num_inputs = 1;
  t.func = topi::x86::UniquifyBlockNames(te::create_prim_func({x, y}, t.name));
  t.anchors = topi::x86::CpuAnchorSchedules();
  t.options = topi::x86::ScheduleOptionsFor(driver::ResolveTarget("native"));
  t.workload_hash = WorkloadHash(t.func);
  t.flops = EstimateFlops(t.func);
  ASSERT_EQ(t.func->shape_vars.size(), 1u);

  namespace fs = std::filesystem;
  std::string dir = (fs::temp_directory_path() / "tessera_dyn_XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  {
    Database db(dir + "/db.jsonl");
    TuneOptions opt;
    opt.max_trials = 4;
    opt.work_dir = dir;
    TuneReport r = Tune({t}, driver::ResolveTarget("native"), db, opt);
    ASSERT_EQ(r.tasks.size(), 1u);
    EXPECT_EQ(r.tasks[0].name, "fused_scale_dyn");
    EXPECT_EQ(r.tasks[0].not_tuned, kDynamicShapeNotTuned);
    EXPECT_EQ(r.tasks[0].trials, 0);
    EXPECT_TRUE(r.tasks[0].stopped);
    EXPECT_EQ(r.trials, 0);
    EXPECT_EQ(db.size(), 0u);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessera::tune
