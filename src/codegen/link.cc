// LinkSharedLibrary: object -> shared library through the system C compiler.
//
// The compiler runs through posix_spawnp (no shell); its stderr goes to a temporary
// file that the error message quotes when the link fails.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/codegen/codegen_llvm.h"
#include "tessera/support/error.h"

extern char** environ;

namespace tessera::codegen {

namespace {

bool LooksLikeObject(const std::string& s) {
  return s.size() >= 4 && s.compare(0, 4, "\x7f" "ELF") == 0;
}

/// A fresh private temporary directory, removed on destruction.
struct TempDir {
  std::string path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tessera-link-XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) == nullptr) {
      TESSERA_THROW(UserError, "cannot create a temporary directory for linking: ", std::strerror(errno));
    }
    path = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

void LinkSharedLibrary(const std::string& object_bytes_or_path, const std::string& out_so) {
  TempDir tmp;
  std::string obj = object_bytes_or_path;
  if (LooksLikeObject(object_bytes_or_path)) {
    obj = tmp.path + "/kernels.o";
    std::ofstream f(obj, std::ios::binary);
    f.write(object_bytes_or_path.data(), static_cast<std::streamsize>(object_bytes_or_path.size()));
    if (!f) TESSERA_THROW(UserError, "cannot write the object file ", obj);
  } else if (!std::filesystem::exists(obj)) {
    TESSERA_THROW(UserError, "LinkSharedLibrary: object file '", obj,
                  "' does not exist (pass EmitObject's bytes or a path to a .o file)");
  }
  const char* cc_env = std::getenv("CC");
  std::string cc = cc_env && *cc_env ? cc_env : "cc";
  std::vector<std::string> argv_s = {cc, "-shared", "-o", out_so, obj, "-lm"};
  std::string command;
  for (const auto& a : argv_s) command += (command.empty() ? "" : " ") + a;
  std::string err_path = tmp.path + "/stderr.txt";

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, cc.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    TESSERA_THROW(UserError, "cannot run the C compiler for linking (`", command, "`): ", std::strerror(rc),
                  "; install a C compiler (cc) or set $CC");
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) TESSERA_THROW(UserError, "waiting for `", command, "` failed: ", std::strerror(errno));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream ef(err_path);
    std::stringstream ss;
    ss << ef.rdbuf();
    TESSERA_THROW(UserError, "linking the shared library failed: `", command, "` ",
                  WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                    : std::string("was killed by a signal"),
                  "; its stderr:\n", ss.str());
  }
}

}  // namespace tessera::codegen
