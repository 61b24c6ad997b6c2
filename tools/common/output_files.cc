// PrintOutput / NpyFileName / SaveNpyDir (output_files.h).
#include "output_files.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "tessera/runtime/npy_io.h"
#include "tessera/support/error.h"

namespace tessera::cli {

void PrintOutput(std::ostream& os, const runtime::NamedTensor& output) {
  const runtime::NDArray& a = output.value;
  os << "output " << output.name << ": " << runtime::ShapeToString(a.shape()) << " " << a.dtype().str();
  if (a.dtype() == DataType::Float(32)) {
    const float* p = a.data<float>();
    int64_t n = std::min<int64_t>(a.NumElements(), 8);
    os << " [";
    char buf[32];
    for (int64_t i = 0; i < n; ++i) {
      std::snprintf(buf, sizeof buf, "%s%.6g", i ? ", " : "", p[i]);
      os << buf;
    }
    os << (a.NumElements() > n ? ", ...]" : "]");
  }
  os << "\n";
}

std::string NpyFileName(const std::string& output_name) {
  std::string s;
  for (char c : output_name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    s += ok ? c : '_';
  }
  if (!s.empty() && s.front() == '.') s.front() = '_';
  return (s.empty() ? "output" : s) + ".npy";
}

std::vector<std::string> SaveNpyDir(const std::string& dir, const std::vector<runtime::NamedTensor>& outputs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  TESSERA_CHECK(std::filesystem::is_directory(dir), "--output-dir '", dir, "': cannot create the folder",
                ec ? ": " + ec.message() : std::string(), "; give a writable path");
  std::map<std::string, std::string> owner;  // file name -> output name
  for (const auto& o : outputs) {
    auto [it, fresh] = owner.emplace(NpyFileName(o.name), o.name);
    TESSERA_CHECK(fresh, "--output-dir: outputs '", it->second, "' and '", o.name, "' would both be written to ",
                  it->first, "; write them to an .npz file with --output instead");
  }
  std::vector<std::string> paths;
  for (const auto& o : outputs) {
    paths.push_back((std::filesystem::path(dir) / NpyFileName(o.name)).string());
    runtime::SaveNpy(paths.back(), o.value);
  }
  return paths;
}

}  // namespace tessera::cli
