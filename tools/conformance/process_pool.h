// Running work items each in a forked child process, a few at a time, so that a crash, an
// abort or a hang in one item never takes the runner down (the conformance cases run
// compiler-generated code in-process: a wrong kernel can corrupt memory or segfault).
//
// Per item: fork(); the child calls `work(index)`, writes the CaseResult into a pipe and
// _exit()s. The parent polls every running child's pipes and, per item, reports:
//   - the child's CaseResult when it exited after writing a complete one;
//   - Status::kCrash "killed by signal N (name)" when it died on a signal;
//   - Status::kCrash "timed out after T s" when it outlived options.timeout_s (it is then
//     killed with SIGKILL);
//   - Status::kCrash "exited with code N without a result" otherwise.
// A crash message ends with the last lines the child printed to stdout / stderr (both go
// to a pipe the parent drains, so a chatty child never blocks).
//
// The parent must be single-threaded when it calls RunInChildren (fork copies one thread).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "conformance.h"

namespace tessera::conformance {

struct PoolOptions {
  int jobs = 1;             ///< children running at once (>= 1)
  double timeout_s = 20;    ///< wall-clock limit per item; <= 0: none
  size_t memory_limit_mb = 0;  ///< RLIMIT_AS of each child in MiB; 0: unlimited
};

/// Runs in the child: computes the item's result. Exceptions it lets escape become kCrash.
using ChildWork = std::function<CaseResult(size_t index)>;
/// Runs in the parent as each item finishes (in completion order).
using OnItemDone = std::function<void(size_t index, const CaseResult& result)>;

/// Runs items 0 .. count-1 and returns their results by index. CaseResult::seconds is the
/// child's wall time as the parent measured it.
std::vector<CaseResult> RunInChildren(size_t count, const PoolOptions& options, const ChildWork& work,
                                      const OnItemDone& on_done = {});

}  // namespace tessera::conformance
