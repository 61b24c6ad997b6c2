#include "tessera/target/target.h"

#include <gtest/gtest.h>

#include <string>

#include "tessera/support/error.h"

namespace tessera::target {
namespace {

std::string ErrorOf(const std::string& spec) {
  try {
    Target::Parse(spec);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(Target, ParsesTheLLVMForm) {
  Target t = Target::Parse("llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=znver4 -mattr=+avx512f,-avx512vnni -num-cores=2");
  EXPECT_EQ(t.kind, "llvm");
  EXPECT_EQ(t.triple, "x86_64-unknown-linux-gnu");
  EXPECT_EQ(t.cpu, "znver4");
  EXPECT_EQ(t.features, (std::vector<std::string>{"+avx512f", "-avx512vnni"}));
  EXPECT_EQ(t.num_cores, 2);
  EXPECT_TRUE(t.HasFeature("avx512f"));
  EXPECT_FALSE(t.HasFeature("avx512vnni"));
  EXPECT_FALSE(t.HasFeature("avx512"));  // a prefix is not the feature
  EXPECT_EQ(t.vector_width_bits, 512);
  EXPECT_EQ(t.vector_registers, 32);
  EXPECT_EQ(t.VectorLanes(32), 16);
  EXPECT_EQ(t.VectorLanes(8), 64);
  EXPECT_EQ(t.keys, (std::vector<std::string>{"cpu", "x86"}));
  EXPECT_EQ(t.cache.l2_bytes, 1 << 20);  // znver4's table entry
  EXPECT_FALSE(t.NeedsResolution());
  EXPECT_EQ(t.str(), "llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=znver4 -mattr=+avx512f,-avx512vnni -num-cores=2");
  EXPECT_EQ(Target::Parse(t.str()), t);
}

TEST(Target, LaterFeaturesOverrideEarlier) {
  Target t = Target::Parse("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=haswell -mattr=+avx,+avx512f,-avx512f");
  EXPECT_FALSE(t.HasFeature("avx512f"));
  EXPECT_EQ(t.vector_width_bits, 256);
  EXPECT_EQ(t.vector_registers, 16);
  EXPECT_EQ(t.VectorLanes(32), 8);
}

TEST(Target, NativeIsLeftForTheDriver) {
  for (const char* spec : {"llvm", "native", "llvm -mcpu=native", "llvm -num-cores=4"}) {
    Target t = Target::Parse(spec);
    EXPECT_TRUE(t.NeedsResolution()) << spec;
    EXPECT_EQ(t.cpu, "native") << spec;
    EXPECT_EQ(t.triple, "") << spec;
  }
  EXPECT_EQ(Target::Parse("llvm -num-cores=4").num_cores, 4);
  EXPECT_EQ(Target::Parse("native -mattr=-avx512f").features, std::vector<std::string>{"-avx512f"});
  // An explicit CPU without a triple still needs the host's triple.
  EXPECT_TRUE(Target::Parse("llvm -mcpu=znver4").NeedsResolution());
  EXPECT_EQ(Target::Parse("llvm").str(), "llvm -mcpu=native");
}

TEST(Target, TagsExpandToExplicitFeatures) {
  EXPECT_EQ(Target::TagNames(), (std::vector<std::string>{"x86-64-v3", "avx2", "x86-64-v4", "avx512", "aarch64"}));
  for (const char* name : {"avx2", "x86-64-v3"}) {
    Target t = Target::Parse(name);
    EXPECT_EQ(t.triple, "x86_64-pc-linux-gnu");
    EXPECT_EQ(t.cpu, "x86-64-v3");
    EXPECT_TRUE(t.HasFeature("avx2") && t.HasFeature("fma") && t.HasFeature("avx"));
    EXPECT_FALSE(t.HasFeature("avx512f"));
    EXPECT_EQ(t.vector_width_bits, 256);
    EXPECT_EQ(t.VectorLanes(32), 8);
    EXPECT_EQ(t.vector_registers, 16);
    EXPECT_FALSE(t.NeedsResolution());
  }
  for (const char* name : {"avx512", "x86-64-v4"}) {
    Target t = Target::Parse(name);
    EXPECT_EQ(t.cpu, "x86-64-v4");
    for (const char* f : {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd", "avx2", "fma"})
      EXPECT_TRUE(t.HasFeature(f)) << f;
    EXPECT_EQ(t.vector_width_bits, 512);
    EXPECT_EQ(t.VectorLanes(32), 16);
    EXPECT_EQ(t.vector_registers, 32);
    EXPECT_EQ(t.keys, (std::vector<std::string>{"cpu", "x86"}));
  }
  Target a = Target::Parse("aarch64");
  EXPECT_EQ(a.triple, "aarch64-linux-gnu");
  EXPECT_EQ(a.Arch(), "aarch64");
  EXPECT_TRUE(a.IsAArch64());
  EXPECT_FALSE(a.IsX86());
  EXPECT_TRUE(a.HasFeature("neon"));
  EXPECT_EQ(a.vector_width_bits, 128);
  EXPECT_EQ(a.VectorLanes(32), 4);
  EXPECT_EQ(a.VectorLanes(16), 8);
  EXPECT_EQ(a.vector_registers, 32);
  EXPECT_EQ(a.keys, (std::vector<std::string>{"cpu", "arm"}));
  EXPECT_TRUE(a.HasKey("arm"));
  EXPECT_FALSE(a.HasKey("x86"));
  EXPECT_EQ(a.cache.l1d_bytes, 64 * 1024);
}

TEST(Target, TagsTakeFeaturesAndCores) {
  Target t = Target::Parse("avx512 -mattr=-avx512f -num-cores=2");
  EXPECT_FALSE(t.HasFeature("avx512f"));
  EXPECT_EQ(t.vector_width_bits, 256);
  EXPECT_EQ(t.num_cores, 2);
  EXPECT_EQ(Target::Parse(t.str()), t);
}

TEST(Target, BadStringsNameTheTokenAndTheAcceptedForms) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "empty target"},
      {"cuda", "unknown target 'cuda'"},
      {"llvm -mcpu", "unknown option '-mcpu'"},
      {"llvm -mcpu=", "option '-mcpu=' has no value"},
      {"llvm -foo=bar", "unknown option '-foo=bar'"},
      {"llvm -mattr=avx512f", "feature 'avx512f' in -mattr must be +name or -name"},
      {"llvm -mattr=+avx,,+fma", "feature '' in -mattr"},
      {"llvm -num-cores=0", "'-num-cores=0' needs a positive integer"},
      {"llvm -num-cores=x", "'-num-cores=x' needs a positive integer"},
      {"llvm -mcpu=znver4 -mcpu=znver3", "'-mcpu=' given twice"},
      {"avx512 -mcpu=znver4", "unknown option '-mcpu=znver4' after 'avx512' (it fixes the triple and CPU)"},
      {"native -mtriple=aarch64-linux-gnu", "unknown option '-mtriple=aarch64-linux-gnu' after 'native'"},
  };
  for (const auto& [spec, what] : cases) {
    const std::string e = ErrorOf(spec);
    EXPECT_NE(e.find(what), std::string::npos) << "'" << spec << "': " << e;
    EXPECT_NE(e.find("accepted: 'llvm [-mtriple=<triple>]"), std::string::npos) << e;
    EXPECT_NE(e.find("x86-64-v3, avx2, x86-64-v4, avx512, aarch64"), std::string::npos) << e;
  }
}

TEST(Target, UnknownArchitecturesGetGenericProperties) {
  Target t = Target::Parse("llvm -mtriple=riscv64-unknown-linux-gnu -mcpu=generic-rv64 -mattr=+v");
  EXPECT_EQ(t.keys, std::vector<std::string>{"cpu"});
  EXPECT_EQ(t.vector_width_bits, 128);
  EXPECT_EQ(t.cache.l1d_bytes, 32 * 1024);
}

}  // namespace
}  // namespace tessera::target
