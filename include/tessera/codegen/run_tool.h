// RunTool: runs a compiler or linker of the system (posix_spawnp, no shell), its stdout and
// stderr going to a temporary file that the error quotes when it fails.
#pragma once

#include <string>
#include <vector>

namespace tessera::codegen {

/// Runs argv[0] (looked up on PATH) with argv. Throws UserError "<what> failed: `<command>`
/// exited with status N; its stderr: ..." when it cannot start or exits non-zero; `hint` is
/// appended when it cannot be started (e.g. "install a C compiler (cc) or set $CC").
void RunTool(const std::vector<std::string>& argv, const std::string& what, const std::string& hint = "");

/// A fresh private temporary directory (prefix e.g. "tessera-link"), removed with its contents
/// on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tessera::codegen
