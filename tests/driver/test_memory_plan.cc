#include <gtest/gtest.h>

#include <climits>

#include "tessera/driver/memory_plan.h"

namespace tessera::driver {
namespace {

TEST(MemoryPlan, ChainReusesTwoStorages) {
  // x(input) -> n0 -> a -> n1 -> b -> n2 -> c -> n3 -> d(output)
  std::vector<PlannedTensor> t = {
      {1000, -1, INT32_MAX},  // input, live throughout
      {4096, 0, 1},           // a: written by n0, read by n1
      {4096, 1, 2},           // b
      {4096, 2, 3},           // c
      {4096, 3, INT32_MAX},   // d: output
  };
  MemoryPlan p = PlanMemory(t);
  // a and c can share; b cannot share with a (n1 reads a while writing b).
  EXPECT_NE(p.storage_of[1], p.storage_of[2]);
  EXPECT_NE(p.storage_of[2], p.storage_of[3]);
  EXPECT_EQ(p.storage_of[1], p.storage_of[3]);
  EXPECT_NE(p.storage_of[4], p.storage_of[3]);
  EXPECT_NE(p.storage_of[0], p.storage_of[1]);
  EXPECT_EQ(p.storage_bytes[p.storage_of[0]], 1024u);  // rounded up to 64 bytes
  EXPECT_EQ(p.storage_bytes.size(), 3u);               // input, a/c, b/d
  EXPECT_EQ(p.storage_of[4], p.storage_of[2]);
}

TEST(MemoryPlan, LiveTensorsNeverShare) {
  // Two branches live at once: both read by n3.
  std::vector<PlannedTensor> t = {
      {256, 0, 3}, {256, 1, 3}, {256, 2, 3}, {256, 3, INT32_MAX},
  };
  MemoryPlan p = PlanMemory(t);
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j) EXPECT_NE(p.storage_of[i], p.storage_of[j]) << i << " " << j;
}

TEST(MemoryPlan, GrowsAFreedStorageToFit) {
  std::vector<PlannedTensor> t = {{64, 0, 1}, {128, 1, 2}, {1024, 2, INT32_MAX}};
  MemoryPlan p = PlanMemory(t);
  EXPECT_EQ(p.storage_of[2], p.storage_of[0]);
  EXPECT_EQ(p.storage_bytes[p.storage_of[0]], 1024u);
  EXPECT_EQ(p.TotalBytes(), 1024u + 128u);
}

}  // namespace
}  // namespace tessera::driver
