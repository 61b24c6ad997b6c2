// RunInWorker (tune/worker.h): the job's line on a pipe, the parent enforcing the time limit and
// reading the worker's fate from waitpid.
#include "tessera/tune/worker.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "tessera/support/error.h"

namespace tessera::tune {

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string OneLine(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

}  // namespace

MeasureResult RunInWorker(const std::function<std::string()>& job, double timeout_s) {
  int fds[2];
  TESSERA_CHECK(pipe(fds) == 0, "tuning: cannot create a pipe for the measurement worker: ", std::strerror(errno));
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  TESSERA_CHECK(pid >= 0, "tuning: cannot fork a measurement worker: ", std::strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    // A fault kills the worker by its signal (the parent reports "crash: SIG..."), whatever handler
    // the tuning process installed (a sanitizer's, a host application's).
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) {
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      sigaction(sig, &dfl, nullptr);
    }
    std::string line;
    try {
      line = job();
    } catch (const std::exception& e) {
      line = std::string("error 0 ") + (std::strncmp(e.what(), "build: ", 7) == 0 ? "" : "run: ") + e.what();
    } catch (...) {
      line = "error 0 run: unknown exception";
    }
    line = OneLine(line) + "\n";
    for (size_t done = 0; done < line.size();) {
      const ssize_t w = write(fds[1], line.data() + done, line.size() - done);
      if (w <= 0) break;
      done += static_cast<size_t>(w);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  const Clock::time_point start = Clock::now();
  bool timed_out = false;
  for (;;) {
    const double left = timeout_s - SecondsSince(start);
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int r = poll(&p, 1, static_cast<int>(std::min(left * 1e3 + 1, 1e9)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char buf[4096];
    const ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  MeasureResult res;
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "timeout after %.3g s", timeout_s);
    res.error = buf;
    return res;
  }
  if (WIFSIGNALED(status)) {
    const char* abbrev = sigabbrev_np(WTERMSIG(status));
    res.error = std::string("crash: SIG") + (abbrev ? abbrev : std::to_string(WTERMSIG(status)).c_str());
    return res;
  }
  std::istringstream in(text);
  std::string kind;
  in >> kind >> res.build_secs;
  if (kind == "ok") {
    for (double t; in >> t;) res.run_secs.push_back(t);
    if (res.run_secs.empty()) res.error = "run: the worker reported no timing";
  } else if (kind == "error") {
    std::getline(in >> std::ws, res.error);
  } else {
    res.error = "crash: the worker exited with status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                " without a result";
  }
  return res;
}

}  // namespace tessera::tune
