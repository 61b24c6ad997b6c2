// Layout blocks from the target (tessera/topi/target_layout.h).
#include "tessera/topi/target_layout.h"

#include <algorithm>

namespace tessera::topi {

int64_t BlockLanes(const target::Target& target, int element_bits) {
  constexpr int64_t kCacheLineBits = 64 * 8;
  return std::max<int64_t>(kCacheLineBits / element_bits, target.VectorLanes(element_bits));
}

}  // namespace tessera::topi
