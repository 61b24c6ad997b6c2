#include "tessera/runtime/module.h"

#include <gtest/gtest.h>

#include <map>

#include "tessera/runtime/param_io.h"
#include "tessera/runtime/thread_pool.h"
#include "test_util.h"

namespace tessera::runtime {
namespace {

using testing::TableSource;
using testing::TempDir;
using testing::WriteFile;

TEST(Module, LoadsFixtureModelAndConnectsThreadPool) {
  Module m = Module::LoadFromFile(TESSERA_FIXTURE_MODEL);
  EXPECT_EQ(m.origin(), TESSERA_FIXTURE_MODEL);
  auto* launch = static_cast<TesseraParallelLaunchFn*>(m.Lookup(kParallelLaunchSymbol));
  ASSERT_NE(launch, nullptr);
  EXPECT_EQ(*launch, &TesseraParallelLaunch);

  TesseraKernelFn add = m.GetKernel("fixture_add");
  alignas(64) float a[8], b[8], out[8];
  for (int i = 0; i < 8; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = 100.0f;
  }
  void* args[] = {a, b, out};
  EXPECT_EQ(add(args), 0);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(out[i], 100.0f + i);

  EXPECT_NE(m.GraphJson().find("tessera-graph"), std::string_view::npos);
  std::string_view blob = m.ParamsBlob();
  auto params = LoadParams(blob.data(), blob.size());
  ASSERT_EQ(params.count("bias"), 1u);
  EXPECT_EQ(params.at("bias").data<float>()[0], -1.0f);
  EXPECT_TRUE(m.HasSymbol("fixture_relu"));
  EXPECT_FALSE(m.HasSymbol("no_such_symbol"));
}

TEST(Module, KernelOutlivesEarlierHandles) {
  TesseraKernelFn relu;
  Module copy = Module::LoadFromFile(TESSERA_FIXTURE_MODEL);
  {
    Module m = Module::LoadFromFile(TESSERA_FIXTURE_MODEL);
    relu = m.GetKernel("fixture_relu");
  }
  float in[8] = {-1, 2, -3, 4, -5, 6, -7, 8}, out[8];
  void* args[] = {in, out};
  EXPECT_EQ(relu(args), 0);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[7], 8.0f);
}

TEST(Module, MissingKernelNamesIt) {
  Module m = Module::LoadFromFile(TESSERA_FIXTURE_MODEL);
  EXPECT_THROW_WITH(m.GetKernel("fused_conv2d_9"), UserError, "fused_conv2d_9", TESSERA_FIXTURE_MODEL);
}

TEST(Module, MissingFileIsUserError) {
  TempDir dir;
  std::string path = dir.File("nope.so");
  EXPECT_THROW_WITH(Module::LoadFromFile(path), UserError, "does not exist", "nope.so");
  EXPECT_THROW_WITH(Module::LoadFromFile(dir.path()), UserError, "not a regular file");
}

TEST(Module, CorruptLibraryIsUserError) {
  TempDir dir;
  std::string garbage = dir.File("garbage.so");
  std::string bytes;
  for (int i = 0; i < 4096; ++i) bytes += static_cast<char>((i * 131 + 7) & 0xff);
  WriteFile(garbage, bytes);
  EXPECT_THROW_WITH(Module::LoadFromFile(garbage), UserError, "cannot load model library", "garbage.so",
                    "compile it again");

  std::string empty = dir.File("empty.so");
  WriteFile(empty, "");
  EXPECT_THROW_WITH(Module::LoadFromFile(empty), UserError, "empty.so");

  // A truncated copy of a real library: a valid ELF header, nothing behind it.
  std::string truncated = dir.File("truncated.so");
  WriteFile(truncated, testing::ReadFileBytes(TESSERA_FIXTURE_MODEL).substr(0, 200));
  EXPECT_THROW_WITH(Module::LoadFromFile(truncated), UserError, "truncated.so", "truncated or corrupt");
}

TEST(Module, LibraryWithoutTesseraSymbolsIsUserError) {
  EXPECT_THROW_WITH(Module::LoadFromFile(TESSERA_FIXTURE_NOT_A_MODEL), UserError, "not a Tessera model",
                    "__tessera_graph_json", TESSERA_FIXTURE_NOT_A_MODEL);
}


int32_t Twice(void* const* args) {
  *static_cast<int*>(args[1]) = 2 * *static_cast<int*>(args[0]);
  return 0;
}

TEST(Module, SymbolSourceWithKeepAlive) {
  auto source = std::make_shared<TableSource>();
  TesseraParallelLaunchFn launch_slot = nullptr;
  source->table["twice"] = reinterpret_cast<void*>(&Twice);
  source->table[kParallelLaunchSymbol] = &launch_slot;
  auto alive = std::make_shared<int>(1);
  std::weak_ptr<int> watch = alive;
  {
    Module m(source, "<jit>", alive);
    alive.reset();
    EXPECT_FALSE(watch.expired());
    EXPECT_EQ(launch_slot, &TesseraParallelLaunch);
    int in = 21, out = 0;
    void* args[] = {&in, &out};
    EXPECT_EQ(m.GetKernel("twice")(args), 0);
    EXPECT_EQ(out, 42);
    EXPECT_EQ(m.ParamsBlob().size(), 0u);  // no params symbols: empty
    EXPECT_THROW_WITH(m.GraphJson(), UserError, "<jit>", "__tessera_graph_json");
    EXPECT_THROW_WITH(m.GetKernel("thrice"), UserError, "thrice", "<jit>");
  }
  EXPECT_TRUE(watch.expired());
  EXPECT_THROW(Module(nullptr), UserError);
}

TEST(Module, ParamsBlobNeedsBothSymbols) {
  auto source = std::make_shared<TableSource>();
  static const char blob[] = "TSRPARAM";
  source->table[kParamsBlobSymbol] = const_cast<char*>(blob);
  Module m(source, "<half>");
  EXPECT_THROW_WITH(m.ParamsBlob(), UserError, "__tessera_params_size");
  int64_t size = -4;
  source->table[kParamsSizeSymbol] = &size;
  EXPECT_THROW_WITH(m.ParamsBlob(), UserError, "negative");
  size = 8;
  EXPECT_EQ(m.ParamsBlob(), "TSRPARAM");
}

}  // namespace
}  // namespace tessera::runtime
