// Static memory planning for the graph executor (TVM §3 "static memory planning").
//
// Given the tensors a sequence of kernel calls produces and consumes, assigns each
// intermediate tensor a storage so that tensors whose lifetimes do not overlap share one.
// A tensor lives from the node that writes it to the last node that reads it; a node's
// outputs never share storage with its own inputs (kernels are not in-place). Best fit:
// the smallest free storage that is large enough, else the largest free storage grown,
// else a new one. Sizes are rounded up to 64 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera::driver {

struct PlannedTensor {
  size_t bytes = 0;
  int first_node = 0;  ///< index of the node that writes it (-1: live from the start, e.g. an input)
  int last_node = 0;   ///< index of the last node that reads it (INT32_MAX: live to the end, e.g. an output)
};

struct MemoryPlan {
  std::vector<int> storage_of;         ///< per tensor: its storage id
  std::vector<size_t> storage_bytes;   ///< per storage: its size in bytes
  size_t TotalBytes() const;
};

/// Plans storages for `tensors`, which are listed in the order their writers run.
MemoryPlan PlanMemory(const std::vector<PlannedTensor>& tensors);

}  // namespace tessera::driver
