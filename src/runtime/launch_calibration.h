// Internal to the runtime: the launch calibration that the graph executor and the VM share
// (graph_executor.h, vm.h). With more than one thread, the first kCalls calls of each kernel call
// site (a graph node, a VM InvokePacked instruction) decide whether its parallel loops run on the
// calling thread from then on: call 0 is cold and not timed; calls 1-4 alternate serial and
// parallel launches (by site and call, so that neighbouring sites keep the workers awake) and each
// mode keeps its best time. A small site (parallel best under kSmallSeconds) whose serial best is
// clearly lower (under 0.9x) runs serially afterwards: tiny kernels, where waking a worker costs
// more than it saves. Serial launches run the same tasks, so results are identical.
// TESSERA_LAUNCH_CALIBRATION=0 turns it off (every launch parallel).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera::runtime {

class LaunchCalibration {
 public:
  static constexpr int kCalls = 5;
  static constexpr double kSmallSeconds = 30e-6;

  /// `sites` call sites, none calibrated yet (all of them at once when calibration is off).
  explicit LaunchCalibration(size_t sites = 0);

  /// How the next call of `site` launches, and whether it is timed (calibration) at all.
  struct Call {
    bool serial = false;
    bool timed = false;
    bool calibrating = false;
  };
  /// `multi_threaded`: the pool has workers now (NumThreads() > 1); without them nothing is
  /// calibrated and every call launches as decided so far.
  Call Next(size_t site, bool multi_threaded) const;
  /// Records a call made as `call` planned, taking `seconds` (ignored unless timed).
  void Done(size_t site, const Call& call, double seconds);
  /// Whether every site is calibrated (the executors' fast path times nothing).
  bool Finished() const { return calibrating_sites_ == 0; }
  /// Whether `site` launches serially (for profiles).
  bool Serial(size_t site) const { return serial_[site] != 0; }
  size_t sites() const { return serial_.size(); }

 private:
  std::vector<int> calls_;
  std::vector<double> best_parallel_, best_serial_;
  std::vector<uint8_t> serial_;
  size_t calibrating_sites_ = 0;
};

}  // namespace tessera::runtime
