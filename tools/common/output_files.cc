// PrintOutput / SaveNpyDir / SaveNpzOutputs (output_files.h).
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
  os << "output " << Printable(output.name) << ": " << runtime::ShapeToString(a.shape()) << " " << a.dtype().str();
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

namespace {

// Writes a note for every output whose name had to change.
void NoteRenamed(std::ostream& notes, const std::vector<runtime::NamedTensor>& outputs,
                 const std::vector<std::string>& stored, const std::string& suffix, const std::string& where) {
  for (size_t i = 0; i < outputs.size(); ++i)
    if (stored[i] != outputs[i].name + suffix)
      notes << "note: output '" << Printable(outputs[i].name) << "' is written as '" << stored[i] << "' " << where
            << " (output_names.h: its name is not a safe " << (suffix.empty() ? "archive member" : "file")
            << " name)\n";
}

std::vector<std::string> Names(const std::vector<runtime::NamedTensor>& outputs) {
  std::vector<std::string> names;
  for (const auto& o : outputs) names.push_back(o.name);
  return names;
}

}  // namespace

std::vector<std::string> SaveNpyDir(const std::string& dir, const std::vector<runtime::NamedTensor>& outputs,
                                    std::ostream& notes) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  TESSERA_CHECK(std::filesystem::is_directory(dir), "--output-dir '", dir, "': cannot create the folder",
                ec ? ": " + ec.message() : std::string(), "; give a writable path");
  const std::vector<std::string> files = UniqueNames(Names(outputs), NpyFileName, ".npy");
  NoteRenamed(notes, outputs, files, ".npy", "in " + dir);
  std::vector<std::string> paths;
  for (size_t i = 0; i < outputs.size(); ++i) {
    paths.push_back((std::filesystem::path(dir) / files[i]).string());
    runtime::SaveNpy(paths.back(), outputs[i].value);
  }
  return paths;
}

size_t SaveNpzOutputs(const std::string& path, const std::vector<runtime::NamedTensor>& outputs, std::ostream& notes) {
  const std::vector<std::string> members = UniqueNames(Names(outputs), NpzMemberName, "");
  NoteRenamed(notes, outputs, members, "", "in " + path);
  std::map<std::string, runtime::NDArray> by_member;
  for (size_t i = 0; i < outputs.size(); ++i) by_member[members[i]] = outputs[i].value;
  runtime::SaveNpz(path, by_member);
  return by_member.size();
}

}  // namespace tessera::cli
