// The artifact record: format and parsing (runtime/artifact_info.h).
#include "tessera/runtime/artifact_info.h"

#include <cstdio>
#include <sstream>

#include "tessera/support/content_hash.h"
#include "tessera/support/error.h"

namespace tessera::runtime {

const std::vector<std::string>& CheckedFeatures() {
  static const std::vector<std::string> features = {
      "popcnt",    "sse4.2",    "bmi",       "bmi2",       "avx",         "avx2",       "fma",
      "avx512f",   "avx512cd",  "avx512bw",  "avx512dq",   "avx512vl",    "avx512vnni", "avx512bf16",
      "avx512ifma", "avx512vbmi", "neon"};
  return features;
}

std::string FormatArtifactInfo(const ArtifactInfo& info) {
  std::string features;
  for (const std::string& f : info.features) features += (features.empty() ? "+" : ",+") + f;
  return "tessera " + info.version + "\ntriple " + info.triple + "\nfeatures " + features + "\n";
}

ArtifactInfo ParseArtifactInfo(std::string_view text, const std::string& origin) {
  ArtifactInfo info;
  std::istringstream is{std::string(text)};
  std::string line;
  const char* keys[] = {"tessera ", "triple ", "features "};
  for (int i = 0; i < 3; ++i) {
    const bool ok = static_cast<bool>(std::getline(is, line)) && line.rfind(keys[i], 0) == 0;
    TESSERA_CHECK(ok, "model library '", origin, "' has a malformed target record (line ", i + 1,
                  " should start with '", keys[i], "'): the library is corrupt; rebuild it");
    const std::string value = line.substr(std::string(keys[i]).size());
    if (i == 0) info.version = value;
    if (i == 1) info.triple = value;
    if (i == 2) {
      std::istringstream fs(value);
      for (std::string f; std::getline(fs, f, ',');) {
        TESSERA_CHECK(f.size() > 1 && f[0] == '+', "model library '", origin, "' has a malformed feature '", f,
                      "' in its target record: the library is corrupt; rebuild it");
        info.features.push_back(f.substr(1));
      }
    }
  }
  return info;
}

uint64_t ArtifactContentHash(std::string_view graph_json, std::string_view params_blob) {
  return ContentHash64(params_blob, ContentHash64(graph_json));
}

void CheckContentHash(uint64_t recorded, std::string_view graph_json, std::string_view params_blob,
                      const std::string& origin) {
  const uint64_t computed = ArtifactContentHash(graph_json, params_blob);
  if (computed == recorded) return;
  char hex[2][17];
  std::snprintf(hex[0], sizeof hex[0], "%016llx", static_cast<unsigned long long>(recorded));
  std::snprintf(hex[1], sizeof hex[1], "%016llx", static_cast<unsigned long long>(computed));
  TESSERA_THROW(UserError, "model library '", origin, "' is corrupt: its graph or parameters changed after it was "
                "compiled (content hash ", hex[0], " recorded, ", hex[1], " computed); copy or compile it again "
                "(tessera compile)");
}

}  // namespace tessera::runtime
