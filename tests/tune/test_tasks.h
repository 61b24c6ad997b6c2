// Small tuning tasks shared by the tune tests: one kernel each, scheduled for this machine.
#pragma once

#include <string>
#include <vector>

#include "tessera/driver/resolve_target.h"
#include "tessera/te/tensor.h"
#include "tessera/topi/math.h"
#include "tessera/topi/util.h"
#include "tessera/topi/x86/schedule.h"
#include "tessera/tune/task.h"

namespace tessera::tune {

// A task of one kernel `name` computing `out` from `inputs`, scheduled for this machine.
inline TuneTask MakeTask(const std::string& name, std::vector<te::Tensor> inputs, const te::Tensor& out) {
  TuneTask t;
  t.name = name;
  t.kernels = {t.name};
  t.num_inputs = static_cast<int>(inputs.size());
  inputs.push_back(out);
  t.func = topi::x86::UniquifyBlockNames(te::create_prim_func(inputs, t.name));
  t.anchors = topi::x86::CpuAnchorSchedules();
  t.options = topi::x86::ScheduleOptionsFor(driver::ResolveTarget("native"));
  t.workload_hash = WorkloadHash(t.func);
  t.flops = EstimateFlops(t.func);
  return t;
}

// relu(A[48, 64] x B[64, 80]) as a plain reduction compute: no template schedules it, so its space is
// the default schedule's knobs plus MetaSchedule's MultiLevelTiling rule (topi/x86/multi_level_tiling.h).
inline TuneTask MatmulTask() {
  using te::Tensor;
  Tensor a = te::placeholder(topi::MakeShape({48, 64}), DataType::Float(32), "A");
  Tensor b = te::placeholder(topi::MakeShape({64, 80}), DataType::Float(32), "B");
  const te::IterVar k = te::reduce_axis(ir::Range(0, 64), "k");
  Tensor c = te::compute(
      topi::MakeShape({48, 80}), [&](const std::vector<ir::Var>& i) { return te::sum(a({i[0], k.var}) * b({k.var, i[1]}), {k}); },
      "C");
  Tensor out = topi::relu(c);
  return MakeTask("matmul_relu", {a, b}, out);
}

}  // namespace tessera::tune
