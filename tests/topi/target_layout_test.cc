// The target, not the host, decides the layout blocks, the schedule widths and the GEMM tile.
#include <gtest/gtest.h>

#include <tuple>

#include "tessera/target/target.h"
#include "tessera/topi/target_layout.h"
#include "tessera/topi/x86/conv2d_nchwc.h"
#include "tessera/topi/x86/dense.h"
#include "tessera/topi/x86/schedule.h"

namespace tessera::topi {
namespace {

using target::Target;

TEST(TopiTargetLayout, BlockIsACacheLineOfTheDtype) {
  for (const char* tag : {"avx2", "avx512", "aarch64"}) {
    EXPECT_EQ(BlockLanes(Target::Parse(tag)), 16) << tag;
    EXPECT_EQ(BlockLanes(Target::Parse(tag), 8), 64) << tag;
  }
  // A register wider than a line (2048 bits) is one block.
  Target wide = Target::Parse("avx512");
  wide.vector_width_bits = 2048;
  EXPECT_EQ(BlockLanes(wide), 64);
}

TEST(TopiTargetLayout, ScheduleOptionsFollowTheTarget) {
  const x86::ScheduleOptions avx2 = x86::ScheduleOptionsFor(Target::Parse("avx2"));
  EXPECT_EQ(avx2.vector_lanes, 16);
  EXPECT_EQ(avx2.register_lanes, 8);
  const x86::ScheduleOptions avx512 = x86::ScheduleOptionsFor(Target::Parse("avx512"));
  EXPECT_EQ(avx512.vector_lanes, 16);
  EXPECT_EQ(avx512.register_lanes, 16);
  EXPECT_EQ(x86::ScheduleOptionsFor(Target::Parse("aarch64")).register_lanes, 4);
  // The conv register tile: 2 ymm per 16-channel block on AVX2, 1 zmm on AVX-512.
  EXPECT_EQ(x86::ChooseConvTile(56, 56, 16, avx2.register_lanes, false).oc_vectors, 2);
  EXPECT_EQ(x86::ChooseConvTile(56, 56, 16, avx512.register_lanes, false).oc_vectors, 1);
}

TEST(TopiTargetLayout, GemmTileFitsTheTargetsRegisters) {
  const Target avx2 = Target::Parse("avx2"), avx512 = Target::Parse("avx512");
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{128, 256, 256}, {64, 1024, 512}, {49, 512, 4608}}) {
    const GemmPackTile t2 = x86::ChooseGemmTile(m, n, k, avx2), t5 = x86::ChooseGemmTile(m, n, k, avx512);
    EXPECT_EQ(t2.bn, 16);
    EXPECT_EQ(t5.bn, 16);
    // Accumulators + the B vectors + a broadcast fit the register file: 16 ymm (a 16-lane
    // vector takes two), 32 zmm.
    EXPECT_LE(2 * t2.mr * t2.nv + (t2.mr > 1 ? 2 * t2.nv : 0) + 1, 16) << m << "x" << n << "x" << k;
    EXPECT_LE(t5.mr * t5.nv + (t5.mr > 1 ? t5.nv : 0) + 1, 32) << m << "x" << n << "x" << k;
    EXPECT_GT(t5.mr * t5.nv, t2.mr * t2.nv) << "AVX-512 holds more accumulators";
  }
}

// A matrix-vector product (one row: an RNN step, a classifier's last layer at batch 1) streams B
// once, so its tile is one row and enough column vectors to hide the FMA latency: at least 8
// accumulator registers on AVX2 (two FMAs per cycle, four cycles each), where one vector (nv 1)
// left the kernel latency-bound at a quarter of its speed.
TEST(TopiTargetLayout, MatrixVectorTileHidesTheFmaLatency) {
  const Target avx2 = Target::Parse("avx2");
  for (auto [n, k] : {std::pair<int64_t, int64_t>{1024, 256}, {1000, 2048}, {3072, 768}}) {
    const GemmPackTile t = x86::ChooseGemmTile(1, n, k, avx2);
    EXPECT_EQ(t.mr, 1) << n << "x" << k;
    EXPECT_GE(2 * t.nv, 8) << n << "x" << k;
    EXPECT_LE(2 * t.nv + 1, 16) << n << "x" << k;
  }
}

}  // namespace
}  // namespace tessera::topi
