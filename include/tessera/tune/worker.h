// RunInWorker: a job in a forked worker process under a time limit, so that whatever the job does
// (crash, hang, throw), the caller goes on. Kernel measurement (measure.h) runs every candidate
// this way, and the end-to-end check of a tuned model (driver/tune_model.h) runs both builds of the
// model this way.
//
// The job runs in the child and returns one line:
//   "ok <build_secs> <secs> <secs> ..."    -> MeasureResult{run_secs = the numbers, in order}
//   "error <build_secs> <message>"         -> MeasureResult{error = message}
// A job that throws gives error "run: <what>" ("build: <what>" kept as it is); a fatal signal gives
// error "crash: SIG<name>"; a job still running after timeout_s is killed (SIGKILL) and gives error
// "timeout after <t> s"; a child that exits without a line gives error "crash: the worker exited
// with status <n> without a result".
//
// The worker is a fork of the calling process: the caller must not be inside a parallel launch,
// and the runtime thread pool restarts in the child (runtime/thread_pool.h). Throws UserError when
// the pipe or the fork cannot be created.
#pragma once

#include <functional>
#include <string>

#include "tessera/tune/measure.h"

namespace tessera::tune {

MeasureResult RunInWorker(const std::function<std::string()>& job, double timeout_s);

}  // namespace tessera::tune
