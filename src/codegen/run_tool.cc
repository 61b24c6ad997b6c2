// RunTool and TempDir (codegen/run_tool.h).
#include "tessera/codegen/run_tool.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessera/support/error.h"

extern char** environ;

namespace tessera::codegen {

TempDir::TempDir(const std::string& prefix) {
  std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    TESSERA_THROW(UserError, "cannot create a temporary directory (", tmpl, "): ", std::strerror(errno));
  }
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void RunTool(const std::vector<std::string>& argv_in, const std::string& what, const std::string& hint) {
  TempDir tmp("tessera-tool");
  std::vector<std::string> argv_s = argv_in;
  std::string command;
  for (const auto& a : argv_s) command += (command.empty() ? "" : " ") + a;
  const std::string err_path = tmp.path() + "/stderr.txt";

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv_s[0].c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    TESSERA_THROW(UserError, "cannot run `", command, "` (", what, "): ", std::strerror(rc), hint.empty() ? "" : "; ",
                  hint);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) TESSERA_THROW(UserError, "waiting for `", command, "` failed: ", std::strerror(errno));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream ef(err_path);
    std::stringstream ss;
    ss << ef.rdbuf();
    TESSERA_THROW(UserError, what, " failed: `", command, "` ",
                  WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                    : std::string("was killed by a signal"),
                  "; its stderr:\n", ss.str());
  }
}

}  // namespace tessera::codegen
