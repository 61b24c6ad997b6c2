// LinkSharedLibrary: object -> shared library through the system C compiler, or a cross
// compiler when the object is for another architecture (LinkerFor).
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
#include "tessera/runtime/artifact_info.h"
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

/// True when `name` is an executable file in a folder of $PATH.
bool OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string file = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (access(file.c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

std::string LinkerFor(const std::string& triple) {
  const char* cc_env = std::getenv("CC");
  if (cc_env && *cc_env) return cc_env;
  const std::string arch = triple.substr(0, triple.find('-'));
  // The architecture this compiler was built for is the one its `cc` links for (a build-time
  // fact, runtime::HostArch: not a query of the machine).
  if (triple.empty() || arch == runtime::HostArch()) return "cc";
  // Debian's cross compilers are named <arch>-linux-gnu-gcc, whatever vendor field the triple has.
  std::vector<std::string> candidates = {triple + "-gcc"};
  if (triple != arch + "-linux-gnu") candidates.push_back(arch + "-linux-gnu-gcc");
  for (const std::string& c : candidates) {
    if (OnPath(c)) return c;
  }
  std::string debian_arch = arch;
  for (char& ch : debian_arch) ch = ch == '_' ? '-' : ch;
  std::string looked;
  for (const std::string& c : candidates) looked += (looked.empty() ? "" : ", ") + c;
  TESSERA_THROW(UserError, "cannot link the model library for ", triple, ": it needs a cross linker for ", arch,
                " and none is on PATH (looked for ", looked, "). Install Debian's gcc-", debian_arch,
                "-linux-gnu (scripts/setup.sh installs g++-aarch64-linux-gnu), or set $CC to a C compiler that "
                "links for ", triple);
}

void LinkSharedLibrary(const std::string& object_bytes_or_path, const std::string& out_so, const std::string& triple) {
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
  const std::string cc = LinkerFor(triple);
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
                  cc == "cc" ? "; install a C compiler (cc) or set $CC" : "; install it, or set $CC to a C compiler for " +
                  (triple.empty() ? std::string("this machine") : triple));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) TESSERA_THROW(UserError, "waiting for `", command, "` failed: ", std::strerror(errno));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream ef(err_path);
    std::stringstream ss;
    ss << ef.rdbuf();
    TESSERA_THROW(UserError, "linking the shared library", triple.empty() ? "" : " for " + triple,
                  " failed: `", command, "` ",
                  WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                    : std::string("was killed by a signal"),
                  "; its stderr:\n", ss.str());
  }
}

}  // namespace tessera::codegen
