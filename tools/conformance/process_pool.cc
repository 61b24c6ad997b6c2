#include "process_pool.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <sstream>
#include <string>

#include "tessera/support/error.h"

namespace tessera::conformance {
namespace {

using Clock = std::chrono::steady_clock;

// How much of a child's stdout / stderr a crash message keeps (its tail).
constexpr size_t kOutputTailBytes = 1500;

struct Child {
  pid_t pid = -1;
  size_t index = 0;
  int result_fd = -1;  // the CaseResult, written once at the end
  int output_fd = -1;  // the child's stdout and stderr
  std::string result;
  std::string output;
  Clock::time_point start;
  bool exited = false;
  int wait_status = 0;
};

void WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// Reads what is available on `fd` into `buf`; closes it and sets it to -1 at EOF.
void Drain(int* fd, std::string* buf, size_t keep_tail) {
  char chunk[8192];
  ssize_t n = read(*fd, chunk, sizeof(chunk));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    close(*fd);
    *fd = -1;
    return;
  }
  buf->append(chunk, static_cast<size_t>(n));
  if (keep_tail && buf->size() > 2 * keep_tail) buf->erase(0, buf->size() - keep_tail);
}

[[noreturn]] void ChildMain(size_t index, int result_fd, int output_fd, const PoolOptions& options,
                            const ChildWork& work) {
  dup2(output_fd, STDOUT_FILENO);
  dup2(output_fd, STDERR_FILENO);
  close(output_fd);
#ifndef __SANITIZE_ADDRESS__  // ASan reserves terabytes of address space for its shadow
  if (options.memory_limit_mb > 0) {
    rlimit lim;
    lim.rlim_cur = lim.rlim_max = static_cast<rlim_t>(options.memory_limit_mb) << 20;
    setrlimit(RLIMIT_AS, &lim);
  }
#endif
  CaseResult r;
  try {
    r = work(index);
  } catch (const std::exception& e) {
    r.status = Status::kCrash;
    r.message = std::string("uncaught exception: ") + e.what();
  } catch (...) {
    r.status = Status::kCrash;
    r.message = "uncaught exception of unknown type";
  }
  WriteAll(result_fd, std::string(StatusName(r.status)) + "\n" + r.message);
  close(result_fd);
  _exit(0);  // no static destructors: they are not part of the case
}

std::string OutputTail(const std::string& output) {
  if (output.empty()) return "";
  std::string tail = output.size() > kOutputTailBytes ? output.substr(output.size() - kOutputTailBytes) : output;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  return tail.empty() ? "" : "; child output: ..." + tail;
}

CaseResult Finish(const Child& c, bool timed_out, double timeout_s) {
  CaseResult r;
  r.seconds = std::chrono::duration<double>(Clock::now() - c.start).count();
  if (timed_out) {
    std::ostringstream os;
    os << "timed out after " << timeout_s << " s (killed)";
    r.status = Status::kCrash;
    r.message = os.str() + OutputTail(c.output);
    return r;
  }
  if (WIFSIGNALED(c.wait_status)) {
    int sig = WTERMSIG(c.wait_status);
    const char* name = strsignal(sig);
    r.status = Status::kCrash;
    r.message = "killed by signal " + std::to_string(sig) + " (" + (name ? name : "?") + ")" + OutputTail(c.output);
    return r;
  }
  size_t nl = c.result.find('\n');
  if (nl != std::string::npos && ParseStatus(c.result.substr(0, nl), &r.status)) {
    r.message = c.result.substr(nl + 1);
    return r;
  }
  r.status = Status::kCrash;
  r.message = "exited with code " + std::to_string(WIFEXITED(c.wait_status) ? WEXITSTATUS(c.wait_status) : -1) +
              " without a result" + OutputTail(c.output);
  return r;
}

}  // namespace

std::vector<CaseResult> RunInChildren(size_t count, const PoolOptions& options, const ChildWork& work,
                                      const OnItemDone& on_done) {
  const size_t jobs = static_cast<size_t>(std::max(1, options.jobs));
  std::vector<CaseResult> results(count);
  std::vector<Child> running;
  size_t next = 0;

  auto start_child = [&](size_t index) {
    int rp[2], op[2];
    TESSERA_CHECK(pipe2(rp, O_CLOEXEC) == 0 && pipe2(op, O_CLOEXEC) == 0, "conformance runner: pipe() failed: ",
                  std::strerror(errno));
    pid_t pid = fork();
    TESSERA_CHECK(pid >= 0, "conformance runner: fork() failed: ", std::strerror(errno));
    if (pid == 0) {
      close(rp[0]);
      close(op[0]);
      for (const Child& other : running) {  // siblings' pipes are not this child's business
        if (other.result_fd >= 0) close(other.result_fd);
        if (other.output_fd >= 0) close(other.output_fd);
      }
      ChildMain(index, rp[1], op[1], options, work);
    }
    close(rp[1]);
    close(op[1]);
    Child c;
    c.pid = pid;
    c.index = index;
    c.result_fd = rp[0];
    c.output_fd = op[0];
    c.start = Clock::now();
    running.push_back(std::move(c));
  };

  auto finish = [&](size_t slot, bool timed_out) {
    Child& c = running[slot];
    if (c.result_fd >= 0) close(c.result_fd);
    if (c.output_fd >= 0) close(c.output_fd);
    results[c.index] = Finish(c, timed_out, options.timeout_s);
    if (on_done) on_done(c.index, results[c.index]);
    running.erase(running.begin() + static_cast<long>(slot));
  };

  while (next < count || !running.empty()) {
    while (running.size() < jobs && next < count) start_child(next++);

    // Wait for output from any child, or the nearest deadline.
    std::vector<pollfd> fds;
    int timeout_ms = 1000;
    auto now = Clock::now();
    for (const Child& c : running) {
      if (c.result_fd >= 0) fds.push_back({c.result_fd, POLLIN, 0});
      if (c.output_fd >= 0) fds.push_back({c.output_fd, POLLIN, 0});
      if (c.result_fd < 0 && c.output_fd < 0) timeout_ms = std::min(timeout_ms, 5);  // waiting for its exit
      if (options.timeout_s > 0) {
        auto deadline = c.start + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(options.timeout_s));
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
        timeout_ms = static_cast<int>(std::clamp<long long>(left, 0, timeout_ms));
      }
    }
    if (poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) {
      TESSERA_THROW(UserError, "conformance runner: poll() failed: ", std::strerror(errno));
    }
    for (Child& c : running) {
      for (const pollfd& p : fds) {
        if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
        if (p.fd == c.result_fd) Drain(&c.result_fd, &c.result, 0);
        else if (p.fd == c.output_fd) Drain(&c.output_fd, &c.output, kOutputTailBytes);
      }
    }

    now = Clock::now();
    for (size_t slot = running.size(); slot-- > 0;) {
      Child& c = running[slot];
      if (c.result_fd < 0 && c.output_fd < 0) {
        pid_t w = waitpid(c.pid, &c.wait_status, WNOHANG);
        if (w == c.pid) {
          finish(slot, false);
          continue;
        }
      }
      if (options.timeout_s > 0 &&
          std::chrono::duration<double>(now - c.start).count() >= options.timeout_s) {
        kill(c.pid, SIGKILL);
        waitpid(c.pid, &c.wait_status, 0);
        finish(slot, true);
      }
    }
  }
  return results;
}

}  // namespace tessera::conformance
