// Static memory planning: see include/tessera/driver/memory_plan.h.
#include "tessera/driver/memory_plan.h"

#include <algorithm>
#include <map>

namespace tessera::driver {

size_t MemoryPlan::TotalBytes() const {
  size_t total = 0;
  for (size_t b : storage_bytes) total += b;
  return total;
}

MemoryPlan PlanMemory(const std::vector<PlannedTensor>& tensors) {
  MemoryPlan plan;
  plan.storage_of.assign(tensors.size(), -1);
  std::vector<int> free_list;  // storage ids free for reuse
  // Tensors to release after each node, keyed by node index.
  std::map<int, std::vector<int>> release_after;

  // Process by writer order; a tensor written at node n may reuse storages released at
  // nodes < n only (never its own node's inputs, which are released after n).
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return tensors[a].first_node < tensors[b].first_node; });

  int current_node = -2;
  auto release_until = [&](int node) {  // release every tensor whose last use is < node
    for (auto it = release_after.begin(); it != release_after.end() && it->first < node;) {
      for (int sid : it->second) free_list.push_back(sid);
      it = release_after.erase(it);
    }
  };
  for (size_t idx : order) {
    const PlannedTensor& t = tensors[idx];
    if (t.first_node != current_node) {
      current_node = t.first_node;
      release_until(current_node);
    }
    const size_t bytes = (std::max<size_t>(t.bytes, 1) + 63) / 64 * 64;
    int best = -1;
    for (int sid : free_list) {  // best fit among large-enough storages
      if (plan.storage_bytes[sid] >= bytes && (best < 0 || plan.storage_bytes[sid] < plan.storage_bytes[best])) best = sid;
    }
    if (best < 0) {
      for (int sid : free_list) {  // else grow the largest free one
        if (best < 0 || plan.storage_bytes[sid] > plan.storage_bytes[best]) best = sid;
      }
    }
    if (best >= 0) {
      free_list.erase(std::find(free_list.begin(), free_list.end(), best));
      plan.storage_bytes[best] = std::max(plan.storage_bytes[best], bytes);
    } else {
      best = static_cast<int>(plan.storage_bytes.size());
      plan.storage_bytes.push_back(bytes);
    }
    plan.storage_of[idx] = best;
    if (t.last_node != INT32_MAX) release_after[std::max(t.last_node, t.first_node)].push_back(best);
  }
  return plan;
}

}  // namespace tessera::driver
