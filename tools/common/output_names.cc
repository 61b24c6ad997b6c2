// NpyFileName / NpzMemberName / UniqueNames (output_names.h).
#include "output_names.h"

#include <set>

namespace tessera::cli {
namespace {

constexpr size_t kMaxNameBytes = 200;  // file names may have 255 bytes; room for "_N.npy"

std::string Cut(std::string s) {
  if (s.size() > kMaxNameBytes) s.resize(kMaxNameBytes);
  return s.empty() ? "output" : s;
}

}  // namespace

std::string NpyFileName(const std::string& output_name) {
  std::string s;
  for (char c : output_name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    s += ok ? c : '_';
  }
  if (!s.empty() && s.front() == '.') s.front() = '_';
  return Cut(std::move(s)) + ".npy";
}

std::string NpzMemberName(const std::string& output_name) {
  std::string s;
  for (char c : output_name) {
    const auto u = static_cast<unsigned char>(c);
    s += (c == '/' || c == '\\' || u < 0x20 || u == 0x7f) ? '_' : c;
  }
  return Cut(std::move(s));
}

std::string Printable(const std::string& name) {
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == '\\') {
      s += "\\x";
      s += kHex[u >> 4];
      s += kHex[u & 15];
    } else {
      s += c;
    }
  }
  return s;
}

std::vector<std::string> UniqueNames(const std::vector<std::string>& names,
                                     const std::function<std::string(const std::string&)>& rule,
                                     const std::string& suffix) {
  std::vector<std::string> out(names.size());
  std::set<std::string> taken;
  // First the names the rule leaves as they are: they never change.
  for (size_t i = 0; i < names.size(); ++i) {
    std::string mapped = rule(names[i]);
    if (mapped == names[i] + suffix && taken.insert(mapped).second) out[i] = std::move(mapped);
  }
  // Then the others, numbered on a collision.
  for (size_t i = 0; i < names.size(); ++i) {
    if (!out[i].empty()) continue;
    const std::string mapped = rule(names[i]);
    const std::string stem = mapped.substr(0, mapped.size() - suffix.size());
    std::string name = mapped;
    for (int n = 2; !taken.insert(name).second; ++n) name = stem + "_" + std::to_string(n) + suffix;
    out[i] = std::move(name);
  }
  return out;
}

}  // namespace tessera::cli
