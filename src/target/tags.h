// Internal: the named targets Target::Parse accepts (target.h lists them).
#pragma once

#include <string>
#include <vector>

namespace tessera::target::detail {

struct TagInfo {
  std::vector<std::string> names;     ///< e.g. {"x86-64-v3", "avx2"}
  std::string triple;
  std::string cpu;
  std::vector<std::string> features;  ///< explicit, with a sign
};

/// The tag called `name`, or nullptr.
const TagInfo* FindTag(const std::string& name);
/// Every tag, in the order of target.h.
const std::vector<TagInfo>& AllTags();

}  // namespace tessera::target::detail
