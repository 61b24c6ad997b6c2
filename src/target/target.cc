// Target: derived properties and queries (tessera/target/target.h).
#include "tessera/target/target.h"

#include <algorithm>

#include "cpu_caches.h"
#include "tags.h"

namespace tessera::target {

Target Target::Make(std::string triple, std::string cpu, std::vector<std::string> features, int num_cores,
                    std::string kind) {
  Target t;
  t.kind = std::move(kind);
  t.triple = std::move(triple);
  t.cpu = std::move(cpu);
  t.features = std::move(features);
  t.num_cores = num_cores;
  if (t.IsX86()) {
    const bool avx512 = t.HasFeature("avx512f");
    t.vector_width_bits = avx512 ? 512 : t.HasFeature("avx") ? 256 : 128;
    t.vector_registers = avx512 && t.Arch() == "x86_64" ? 32 : t.Arch() == "x86_64" ? 16 : 8;
    t.keys = {"cpu", "x86"};
  } else if (t.IsAArch64() || t.Arch().rfind("arm", 0) == 0) {
    t.vector_width_bits = 128;
    t.vector_registers = t.IsAArch64() ? 32 : 16;
    t.keys = {"cpu", "arm"};
  } else {
    t.keys = {"cpu"};
  }
  t.cache = detail::DefaultCaches(t.Arch(), t.cpu);
  return t;
}

std::vector<std::string> Target::TagNames() {
  std::vector<std::string> out;
  for (const detail::TagInfo& t : detail::AllTags()) out.insert(out.end(), t.names.begin(), t.names.end());
  return out;
}

std::string Target::Arch() const { return triple.substr(0, triple.find('-')); }

bool Target::IsX86() const {
  const std::string a = Arch();
  return a == "x86_64" || a == "amd64" || a == "i386" || a == "i486" || a == "i586" || a == "i686";
}

bool Target::IsAArch64() const {
  const std::string a = Arch();
  return a == "aarch64" || a == "arm64";
}

bool Target::HasFeature(const std::string& feature) const {
  for (auto it = features.rbegin(); it != features.rend(); ++it)
    if (it->size() == feature.size() + 1 && it->compare(1, std::string::npos, feature) == 0) return (*it)[0] == '+';
  return false;
}

bool Target::HasKey(const std::string& key) const { return std::find(keys.begin(), keys.end(), key) != keys.end(); }

std::string Target::FeatureString() const {
  std::string s;
  for (const std::string& f : features) s += (s.empty() ? "" : ",") + f;
  return s;
}

std::string Target::str() const {
  std::string s = kind;
  if (!triple.empty()) s += " -mtriple=" + triple;
  s += " -mcpu=" + cpu;
  if (!features.empty()) s += " -mattr=" + FeatureString();
  if (num_cores > 0) s += " -num-cores=" + std::to_string(num_cores);
  return s;
}

}  // namespace tessera::target
