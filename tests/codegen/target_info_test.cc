// codegen::CompleteTarget: a parsed target checked against, and filled in from, LLVM's tables.
#include <gtest/gtest.h>

#include "tessera/codegen/target_info.h"
#include "tessera/support/error.h"

namespace tessera::codegen {
namespace {

using target::Target;

Target Complete(const std::string& spec) { return CompleteTarget(Target::Parse(spec)); }

std::string ErrorOf(const std::string& spec) {
  try {
    Complete(spec);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(CompleteTarget, ExplicitCpuGetsItsDefaultFeatures) {
  Target t = Complete("llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=znver4 -num-cores=2");
  EXPECT_EQ(t.cpu, "znver4");
  EXPECT_TRUE(t.HasFeature("avx512f"));
  EXPECT_TRUE(t.HasFeature("avx512vnni"));
  EXPECT_TRUE(t.HasFeature("fma"));
  EXPECT_EQ(t.vector_width_bits, 512);
  EXPECT_EQ(t.VectorLanes(32), 16);
  EXPECT_EQ(t.vector_registers, 32);
  EXPECT_EQ(t.num_cores, 2);
  // The explicit list says the same as the CPU: completing again changes nothing.
  EXPECT_EQ(CompleteTarget(t), t);
}

TEST(CompleteTarget, MattrOverridesCpuDefaultsWithImpliedFeatures) {
  EXPECT_EQ(Complete("llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=haswell").vector_width_bits, 256);
  Target up = Complete("llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=haswell -mattr=+avx512f");
  EXPECT_EQ(up.vector_width_bits, 512);
  Target down = Complete("llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=znver4 -mattr=-avx512f");
  EXPECT_EQ(down.vector_width_bits, 256);
  EXPECT_FALSE(down.HasFeature("avx512vnni")) << "needs avx512f, which is off";
  EXPECT_TRUE(down.HasFeature("avx2"));
  // A CPU default turned off is written as "-name", so LLVM does not take it from the CPU.
  EXPECT_NE(down.FeatureString().find("-avx512f"), std::string::npos) << down.FeatureString();
}

TEST(CompleteTarget, TagsNormalizeAndKeepTheirFeatures) {
  Target v3 = Complete("avx2");
  EXPECT_EQ(v3.triple, "x86_64-pc-linux-gnu");
  EXPECT_TRUE(v3.HasFeature("avx2") && v3.HasFeature("fma"));
  EXPECT_FALSE(v3.HasFeature("avx512f"));
  EXPECT_EQ(v3.vector_width_bits, 256);
  Target v4 = Complete("avx512");
  EXPECT_TRUE(v4.HasFeature("avx512f") && v4.HasFeature("avx512bw") && v4.HasFeature("avx512vl"));
  EXPECT_EQ(v4.vector_width_bits, 512);
  Target arm = Complete("aarch64");
  EXPECT_EQ(arm.triple, "aarch64-unknown-linux-gnu");
  EXPECT_TRUE(arm.HasFeature("neon"));
  EXPECT_EQ(arm.VectorLanes(32), 4);
  EXPECT_EQ(arm.keys, (std::vector<std::string>{"cpu", "arm"}));
  Target n1 = Complete("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1");
  EXPECT_TRUE(n1.HasFeature("neon"));
  EXPECT_EQ(n1.cache.l1d_bytes, 64 * 1024);
}

TEST(CompleteTarget, UnknownNamesAreUserErrors) {
  EXPECT_NE(ErrorOf("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=notacpu").find("unknown CPU 'notacpu' for triple"),
            std::string::npos);
  EXPECT_NE(ErrorOf("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver4 -mattr=+notafeature").find(
                "unknown feature 'notafeature' in -mattr"),
            std::string::npos);
  EXPECT_NE(ErrorOf("llvm -mtriple=bogus-arch -mcpu=generic").find("unknown target triple 'bogus-arch"),
            std::string::npos);
  EXPECT_NE(ErrorOf("aarch64 -mattr=+avx2").find("unknown feature 'avx2'"), std::string::npos);
}

}  // namespace
}  // namespace tessera::codegen
