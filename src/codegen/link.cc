// LinkSharedLibrary: object -> shared library through the system C compiler, or a cross
// compiler when the object is for another architecture (LinkerFor).
//
// The compiler runs through RunTool (codegen/run_tool.h: posix_spawnp, no shell, stderr quoted
// when the link fails).
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
#include "tessera/codegen/run_tool.h"
#include "tessera/runtime/artifact_info.h"
#include "tessera/support/error.h"

namespace tessera::codegen {

namespace {

bool LooksLikeObject(const std::string& s) {
  return s.size() >= 4 && s.compare(0, 4, "\x7f" "ELF") == 0;
}

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

void LinkSharedLibrary(const std::string& object_bytes_or_path, const std::string& out_so, const std::string& triple,
                       const std::vector<std::string>& extra_inputs) {
  TempDir tmp("tessera-link");
  std::string obj = object_bytes_or_path;
  if (LooksLikeObject(object_bytes_or_path)) {
    obj = tmp.path() + "/kernels.o";
    std::ofstream f(obj, std::ios::binary);
    f.write(object_bytes_or_path.data(), static_cast<std::streamsize>(object_bytes_or_path.size()));
    if (!f) TESSERA_THROW(UserError, "cannot write the object file ", obj);
  } else if (!std::filesystem::exists(obj)) {
    TESSERA_THROW(UserError, "LinkSharedLibrary: object file '", obj,
                  "' does not exist (pass EmitObject's bytes or a path to a .o file)");
  }
  const std::string cc = LinkerFor(triple);
  std::vector<std::string> argv = {cc, "-shared", "-o", out_so, obj};
  argv.insert(argv.end(), extra_inputs.begin(), extra_inputs.end());
  argv.push_back("-lm");
  RunTool(argv, std::string("linking the shared library") + (triple.empty() ? "" : " for " + triple),
          cc == "cc" ? "install a C compiler (cc) or set $CC"
                     : "install it, or set $CC to a C compiler for " + (triple.empty() ? std::string("this machine") : triple));
}

}  // namespace tessera::codegen
