// LaunchCalibration: see launch_calibration.h.
#include "launch_calibration.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace tessera::runtime {
namespace {

bool Disabled() {
  const char* env = std::getenv("TESSERA_LAUNCH_CALIBRATION");
  return env && std::string(env) == "0";
}

}  // namespace

LaunchCalibration::LaunchCalibration(size_t sites)
    : calls_(sites, Disabled() ? kCalls : 0),
      best_parallel_(sites, 1e30),
      best_serial_(sites, 1e30),
      serial_(sites, 0),
      calibrating_sites_(Disabled() ? 0 : sites) {}

LaunchCalibration::Call LaunchCalibration::Next(size_t site, bool multi_threaded) const {
  const int k = calls_[site];
  if (!multi_threaded || k >= kCalls) return Call{serial_[site] != 0, false, false};
  const bool timed = k > 0;
  return Call{timed && (site + static_cast<size_t>(k)) % 2 == 0, timed, true};
}

void LaunchCalibration::Done(size_t site, const Call& call, double seconds) {
  if (!call.calibrating) return;
  if (call.timed) {
    double& best = call.serial ? best_serial_[site] : best_parallel_[site];
    best = std::min(best, seconds);
  }
  if (++calls_[site] == kCalls) {
    serial_[site] = best_parallel_[site] < kSmallSeconds && best_serial_[site] < 0.9 * best_parallel_[site];
    --calibrating_sites_;
  }
}

}  // namespace tessera::runtime
