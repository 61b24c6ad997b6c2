#include "tessera/topi/schedule_knobs.h"

#include <algorithm>

namespace tessera::topi {

int64_t KnobContext::Define(const std::string& name, std::vector<int64_t> candidates, int64_t fallback) {
  if (auto it = used_.find(name); it != used_.end()) return it->second;
  candidates.push_back(fallback);
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  std::optional<int64_t> asked;
  if (auto it = config_.find(name); it != config_.end())
    asked = it->second;
  else if (lookup_)
    asked = lookup_(name);
  const int64_t value =
      asked && std::binary_search(candidates.begin(), candidates.end(), *asked) ? *asked : fallback;
  space_.push_back({name, std::move(candidates), fallback});
  used_[name] = value;
  return value;
}

int64_t Knob(KnobContext* ctx, const std::string& name, std::vector<int64_t> candidates, int64_t fallback) {
  return ctx ? ctx->Define(name, std::move(candidates), fallback) : fallback;
}

std::vector<int64_t> DivisorsInRange(int64_t n, int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  for (int64_t d = std::max<int64_t>(1, lo); d <= std::min(n, hi); ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

}  // namespace tessera::topi
