#include <gtest/gtest.h>

#include "tessera/codegen/target.h"
#include "tessera/support/error.h"

namespace tessera::codegen {
namespace {

TEST(Target, ParsesExplicitCpu) {
  Target t = Target::Parse("llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=znver4 -num-cores=2");
  EXPECT_EQ(t.cpu, "znver4");
  EXPECT_EQ(t.vector_width_bits, 512);
  EXPECT_EQ(t.num_cores, 2);
  EXPECT_TRUE(t.HasFeature("avx512f"));
  EXPECT_TRUE(t.HasFeature("avx512vnni"));
  EXPECT_EQ(t.VectorLanes(32), 16);
}

TEST(Target, MattrOverridesCpuDefaults) {
  Target t = Target::Parse("llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=haswell");
  EXPECT_EQ(t.vector_width_bits, 256);
  Target u = Target::Parse("llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=haswell -mattr=+avx512f");
  EXPECT_EQ(u.vector_width_bits, 512);
  Target v = Target::Parse("llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=znver4 -mattr=-avx512f");
  EXPECT_EQ(v.vector_width_bits, 256);
}

TEST(Target, NativeDetectsHost) {
  Target t = Target::Parse("llvm");
  EXPECT_FALSE(t.cpu.empty());
  EXPECT_NE(t.cpu, "native");
  EXPECT_FALSE(t.triple.empty());
  EXPECT_GE(t.num_cores, 1);
  EXPECT_GE(t.vector_width_bits, 128);
  Target n = Target::Parse("llvm -mcpu=native");
  EXPECT_EQ(n.cpu, t.cpu);
  EXPECT_EQ(n.features, t.features);
  Target r = Target::Parse(t.str());
  EXPECT_EQ(r.cpu, t.cpu);
  EXPECT_EQ(r.triple, t.triple);
  EXPECT_EQ(r.vector_width_bits, t.vector_width_bits);
  EXPECT_EQ(r.num_cores, t.num_cores);
}

TEST(Target, BadStringsAreUserErrors) {
  for (const char* bad : {"", "cuda", "llvm -mcpu", "llvm -mcpu=", "llvm -foo=bar", "llvm -mcpu=notacpu",
                          "llvm -mattr=avx512f", "llvm -mattr=+notafeature", "llvm -num-cores=0",
                          "llvm -num-cores=x", "llvm -mcpu=znver4 -mcpu=znver3", "llvm -mtriple=bogus-arch"}) {
    try {
      Target::Parse(bad);
      ADD_FAILURE() << "no error for '" << bad << "'";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("expected 'llvm"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tessera::codegen
