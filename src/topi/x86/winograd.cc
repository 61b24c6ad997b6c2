// ScheduleWinograd (x86/winograd.h).
#include "tessera/topi/x86/winograd.h"

#include <vector>

#include "tessera/ir/op.h"
#include "tessera/topi/nn/winograd.h"
#include "tessera/topi/x86/conv2d_nchwc.h"

#include "block_util.h"

namespace tessera::topi::x86 {

namespace {

void Debug(const char* step, const ScheduleError& err) { DebugRefusedStep("winograd", step, err); }

// The channel block of the NCHWc tensor the input transform reads (its 5-D read), or 0.
int64_t InputChannelBlock(const tir::BlockNode* b) {
  for (const auto& r : b->reads) {
    int64_t c = 0;
    if (r.buffer->shape.size() == 5 && ir::as_const_int(r.buffer->shape[4], &c)) return c;
  }
  return 0;
}

// parallel(p), [group,] co, unroll e, vectorize ci. A grouped transform's batch (g * alpha^2 + e)
// splits into its group and e, so only the alpha^2 elements of a tile are unrolled.
void ScheduleInput(Schedule& sch, const std::string& name, const ScheduleOptions& opt) {
  BlockRV block = sch.get_block(name);
  const tir::BlockNode* b = sch.GetBlock(block);
  const int64_t cb = InputChannelBlock(b), m = IntAnnotation(b, kWinogradTileAttr, 0);
  std::vector<LoopRV> loops = sch.get_loops(block);  // batch, p, c
  if (loops.size() != 3 || cb <= 0 || m <= 0) return;
  try {
    const int64_t a2 = (m + 2) * (m + 2);
    int64_t batch = a2;
    ir::as_const_int(sch.GetFor(loops[0])->extent, &batch);
    std::vector<LoopRV> c = sch.split(loops[2], {-1, cb});
    LoopRV e = loops[0];
    if (batch > a2) {
      std::vector<LoopRV> ge = sch.split(loops[0], {-1, a2});
      e = ge[1];
      sch.reorder({loops[1], ge[0], c[0], e, c[1]});
    } else {
      sch.reorder({loops[1], c[0], e, c[1]});
    }
    sch.unroll(e);
    if (opt.vectorize) sch.vectorize(c[1]);
    if (opt.parallelize) sch.parallel(loops[1]);
  } catch (const ScheduleError& e) {
    Debug("input", e);
  }
}

// Inlines every block that reads the output transform's result (the conv's epilogue, after the
// default inlining: one block) into it.
void InlineEpilogue(Schedule& sch, const std::string& name) {
  for (bool changed = true; changed;) {
    changed = false;
    const tir::BlockNode* out = sch.GetBlock(sch.get_block(name));
    if (out->writes.empty()) return;
    for (const tir::BlockNode* b : NonRootBlocks(sch.func())) {
      if (b == out || !ReadsBuffer(b, out->writes[0].buffer)) continue;
      try {
        sch.reverse_compute_inline(sch.get_block(b->name_hint));
        changed = true;
      } catch (const ScheduleError& e) {
        Debug("epilogue", e);
      }
      break;
    }
  }
}

// parallel(fuse(n, ko, yo)), xo, unroll yi, unroll xi, vectorize ki; yi and xi span one tile
// of every phase (m * d outputs for dilation d), so each unrolled copy selects one case.
void ScheduleOutput(Schedule& sch, const std::string& name, const ScheduleOptions& opt) {
  BlockRV block = sch.get_block(name);
  const tir::BlockNode* b = sch.GetBlock(block);
  const int64_t m = IntAnnotation(b, kWinogradTileAttr, 0), d = IntAnnotation(b, kWinogradDilationAttr, 1);
  if (m <= 0 || d <= 0) return;
  std::vector<LoopRV> loops = sch.get_loops(block);  // n, ko, y, x, ki
  if (loops.size() != 5) return;
  try {
    std::vector<LoopRV> y = sch.split(loops[2], {-1, m * d});
    std::vector<LoopRV> x = sch.split(loops[3], {-1, m * d});
    sch.reorder({loops[0], loops[1], y[0], x[0], y[1], x[1], loops[4]});
    sch.unroll(y[1]);
    sch.unroll(x[1]);
    if (opt.vectorize) sch.vectorize(loops[4]);
    LoopRV tasks = sch.fuse({loops[0], loops[1], y[0]});
    if (opt.parallelize) sch.parallel(tasks);
  } catch (const ScheduleError& e) {
    Debug("output", e);
  }
}

}  // namespace

bool KeepWinogradStage(const std::string& block_name) { return StartsWith(block_name, kWinogradOutputName); }

std::set<std::string> ScheduleWinograd(Schedule& sch, const ScheduleOptions& opt) {
  std::vector<std::string> inputs, outputs;
  for (const tir::BlockNode* b : NonRootBlocks(sch.func())) {
    if (StartsWith(b->name_hint, kWinogradInputName)) inputs.push_back(b->name_hint);
    if (StartsWith(b->name_hint, kWinogradOutputName)) outputs.push_back(b->name_hint);
  }
  std::set<std::string> handled;
  for (const std::string& n : inputs) {
    ScheduleInput(sch, n, opt);
    handled.insert(n);
  }
  for (const std::string& n : outputs) {
    InlineEpilogue(sch, n);
    ScheduleOutput(sch, n, opt);
    handled.insert(n);
  }
  return handled;
}

AnchorSchedule WinogradAnchor() {
  // The input transform reads the NCHWc padding stage, kept as its own stage as for a conv.
  return {"winograd", ScheduleWinograd, [](const std::string& b) { return KeepWinogradStage(b) || KeepAsStage(b); }};
}

}  // namespace tessera::topi::x86
