// driver::ResolveTarget: `native` and the empty triple become the host's, once, in the driver;
// artifacts record where they run and the loader refuses other machines.
#include <gtest/gtest.h>

#include <filesystem>

#include "driver_test_util.h"
#include "tessera/driver/build.h"
#include "tessera/driver/resolve_target.h"
#include "tessera/runtime/module.h"
#include "tessera/support/error.h"

namespace tessera::driver {
namespace {

using namespace tessera::graph;
using testing::Call;
using testing::F32;

TEST(ResolveTarget, NativeBecomesTheHostsCpuAndFeatures) {
  target::Target t = HostTarget();
  EXPECT_FALSE(t.NeedsResolution());
  EXPECT_NE(t.cpu, "native");
  EXPECT_FALSE(t.triple.empty());
  EXPECT_FALSE(t.features.empty());
  EXPECT_GE(t.num_cores, 1);
  EXPECT_GE(t.vector_width_bits, 128);
  EXPECT_GT(t.cache.l1d_bytes, 0);
  for (const char* spec : {"llvm", "llvm -mcpu=native"}) {
    target::Target u = ResolveTarget(spec);
    EXPECT_EQ(u.cpu, t.cpu) << spec;
    EXPECT_EQ(u.features, t.features) << spec;
  }
  EXPECT_TRUE(RunsOnHost(t));
  // The canonical string names the same machine.
  target::Target r = ResolveTarget(t.str());
  EXPECT_EQ(r.cpu, t.cpu);
  EXPECT_EQ(r.triple, t.triple);
  EXPECT_EQ(r.vector_width_bits, t.vector_width_bits);
  EXPECT_EQ(r.num_cores, t.num_cores);
  EXPECT_TRUE(RunsOnHost(r));
}

TEST(ResolveTarget, ExplicitTargetsKeepTheirMachine) {
  target::Target t = ResolveTarget("llvm -mcpu=znver4");
  EXPECT_EQ(t.triple, HostTarget().triple) << "the host's triple, the named CPU";
  EXPECT_TRUE(t.HasFeature("avx512f"));
  EXPECT_EQ(t.num_cores, 0) << "not the host's cores: the runtime decides";
  target::Target arm = ResolveTarget("llvm -mtriple=aarch64-linux-gnu");
  EXPECT_EQ(arm.cpu, "generic") << "native on another architecture";
  EXPECT_FALSE(RunsOnHost(arm));
  try {
    ResolveTarget("llvm -mcpu=notacpu");
    ADD_FAILURE() << "no error for an unknown CPU";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("bad target 'llvm -mcpu=notacpu': unknown CPU 'notacpu' for triple"),
              std::string::npos)
        << e.what();
  }
}

// y = relu(x + 1) for x [1, 64].
IRModule SmallModel() {
  Var x = VarNode::make("x", F32({1, 64}));
  auto one = runtime::NDArray::Empty({1}, DataType::Float(32));
  one.data<float>()[0] = 1.f;
  return IRModule::FromMain(FunctionNode::make({x}, Call("nn.relu", {Call("add", {x, ConstantNode::make(one)})})));
}

TEST(ResolveTarget, AnArtifactForAnotherMachineIsRefusedBeforeItRuns) {
  const std::string tag = HostTarget().HasFeature("avx512f") ? "aarch64" : "avx512";
  BuildOptions options;
  options.target = tag;
  const std::string so = (std::filesystem::temp_directory_path() / ("resolve_target_" + tag + ".so")).string();
  if (tag == "avx512") {
    BuildSharedLibrary(SmallModel(), {"y"}, so, options);
    try {
      runtime::Module::LoadFromFile(so);
      ADD_FAILURE() << "an AVX-512 library loaded on a machine without AVX-512";
    } catch (const UserError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("avx512f"), std::string::npos) << msg;
      EXPECT_NE(msg.find("this machine lacks"), std::string::npos) << msg;
      EXPECT_NE(msg.find("--target native"), std::string::npos) << msg;
    }
    std::filesystem::remove(so);
  }
  // Compiling is fine; JIT-running here is not.
  EXPECT_NO_THROW(Build(SmallModel(), {"y"}, options));
  EXPECT_THROW(BuildJIT(SmallModel(), {"y"}, options), UserError);
}

TEST(ResolveTarget, TheHostsOwnArtifactLoads) {
  const std::string so = (std::filesystem::temp_directory_path() / "resolve_target_native.so").string();
  BuildSharedLibrary(SmallModel(), {"y"}, so, {});
  EXPECT_NO_THROW(runtime::Module::LoadFromFile(so));
  std::filesystem::remove(so);
}

}  // namespace
}  // namespace tessera::driver
