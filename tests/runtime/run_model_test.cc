// RunModel (run_model.h) on the fixture model, y = relu(x + bias).
#include "tessera/runtime/run_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "tessera/runtime/artifact_info.h"
#include "tessera/runtime/executor.h"
#include "tessera/runtime/npy_io.h"
#include "test_util.h"

namespace tessera::runtime {
namespace {

NDArray Zeros() {
  NDArray a = NDArray::Empty({2, 4}, DataType::Float(32));
  for (int i = 0; i < 8; ++i) a.data<float>()[i] = 0;
  return a;
}

TEST(RunModel, RunsAndReturnsOutputsInGraphOrder) {
  Module m = Module::LoadFromFile(TESSERA_FIXTURE_MODEL);
  RunModelResult r = RunModel(m, {{"x", Zeros()}});
  ASSERT_EQ(r.outputs.size(), 4u);
  EXPECT_EQ(r.outputs[0].name, "y");
  EXPECT_EQ(r.outputs[1].name, "y_flat");
  EXPECT_LT(r.median_ms, 0);
  EXPECT_EQ(r.outputs[0].value.data<float>()[7], 2.5f);
  r = RunModel(m, {{"x", Zeros()}}, {1, 5});
  EXPECT_GE(r.median_ms, 0);
}

TEST(RunModel, InputErrors) {
  Module m = Module::LoadFromFile(TESSERA_FIXTURE_MODEL);
  EXPECT_THROW_WITH(RunModel(m, {}), UserError, "input 'x' (shape [2, 4], float32) was not given");
  EXPECT_THROW_WITH(RunModel(m, {{"x", Zeros()}, {"x", Zeros()}}), UserError, "given twice");
  EXPECT_THROW_WITH(RunModel(m, {{"nope", Zeros()}}), UserError, "nope");
  EXPECT_THROW_WITH(RunModel(m, {{"x", Zeros()}}, {0, -1}), UserError, "timed runs");
}

// A library holding a VM program with symbolic shapes (fixtures/fixture_dynamic_model.c:
// y = relu(x + x), x and y float32 ["n", 4]): loaded from its file, run at several n.
TEST(RunModel, SymbolicInputShapes) {
  Module m = Module::LoadFromFile(TESSERA_FIXTURE_DYNAMIC_MODEL);
  std::unique_ptr<Executor> ex = MakeExecutor(m);
  EXPECT_EQ(ex->InputShape(0), (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(ex->InputDimNames(0), (std::vector<std::string>{"n", ""}));
  EXPECT_EQ(ex->OutputDimNames(0), (std::vector<std::string>{"n", ""}));
  for (int64_t n : {1, 3, 17}) {
    NDArray x = NDArray::Empty({n, 4}, DataType::Float(32));
    for (int64_t i = 0; i < 4 * n; ++i) x.data<float>()[i] = static_cast<float>(i) - 5;
    RunModelResult r = RunModel(m, {{"x", x}});
    ASSERT_EQ(r.outputs[0].value.shape(), (std::vector<int64_t>{n, 4}));
    for (int64_t i = 0; i < 4 * n; ++i)
      ASSERT_EQ(r.outputs[0].value.data<float>()[i], std::max(0.0f, 2 * (static_cast<float>(i) - 5)));
  }
  EXPECT_THROW_WITH(RunModel(m, {}), UserError, "input 'x' (shape [n, 4], float32) was not given");
  EXPECT_THROW_WITH(RunModel(m, {{"x", NDArray::Empty({3, 5}, DataType::Float(32))}}), UserError,
                    "input 'x' expects shape [n, 4], got [3, 5]: dim 1 is 5, not 4");
  EXPECT_THROW_WITH(RunModel(m, {{"x", NDArray::Empty({12}, DataType::Float(32))}}), UserError,
                    "input 'x' expects shape [n, 4], got [12] (rank 1, not 2)");
  // The graph executor's dims are all static: InputDimNames gives "" for each.
  std::unique_ptr<Executor> graph = MakeExecutor(Module::LoadFromFile(TESSERA_FIXTURE_MODEL));
  EXPECT_EQ(graph->InputDimNames(0), (std::vector<std::string>{"", ""}));
  EXPECT_EQ(graph->OutputDimNames(1), (std::vector<std::string>{""}));
}

TEST(ElfArch, NamesTheArchitectureOfAnElfFile) {
  EXPECT_EQ(ElfArch(TESSERA_FIXTURE_MODEL), HostArch());
  testing::TempDir dir;
  EXPECT_EQ(ElfArch(dir.File("missing")), "");
  {
    std::ofstream(dir.File("text")) << "not an ELF file at all";
  }
  EXPECT_EQ(ElfArch(dir.File("text")), "");
  std::string h(20, '\0');
  h.replace(0, 4, "\x7f" "ELF");
  h[5] = 1;  // little-endian
  h[18] = static_cast<char>(183);  // EM_AARCH64
  {
    std::ofstream(dir.File("a64"), std::ios::binary) << h;
  }
  EXPECT_EQ(ElfArch(dir.File("a64")), "aarch64");
  h[18] = 40;  // EM_ARM
  {
    std::ofstream(dir.File("arm"), std::ios::binary) << h;
  }
  EXPECT_EQ(ElfArch(dir.File("arm")), "elf-machine-40");
}

TEST(Npz, ThisBuildHasLibzip) { EXPECT_TRUE(NpzSupported()); }

}  // namespace
}  // namespace tessera::runtime
