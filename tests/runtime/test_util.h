// Helpers shared by the runtime tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "tessera/runtime/module.h"

namespace tessera::runtime::testing {

/// Expects `stmt` to throw `Exc` whose message contains every string in `parts`.
#define EXPECT_THROW_WITH(stmt, Exc, ...)                                           \
  do {                                                                              \
    try {                                                                           \
      stmt;                                                                         \
      ADD_FAILURE() << "expected " #Exc " from: " #stmt;                            \
    } catch (const Exc& e) {                                                        \
      std::string msg_ = e.what();                                                  \
      for (const char* part_ : {__VA_ARGS__})                                       \
        EXPECT_NE(msg_.find(part_), std::string::npos)                              \
            << "message \"" << msg_ << "\" lacks \"" << part_ << "\"";              \
    }                                                                               \
  } while (0)

/// A fresh temporary folder, removed with its contents at destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tessera_rt_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// A SymbolSource over a table (kernels, the program JSON, the params blob), as the JIT provides one.
class TableSource : public SymbolSource {
 public:
  std::map<std::string, void*> table;
  void* Lookup(const std::string& name) override {
    auto it = table.find(name);
    return it == table.end() ? nullptr : it->second;
  }
};

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace tessera::runtime::testing
