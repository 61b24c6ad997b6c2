// Device: where a tensor's data lives.
//
// Tessera's runtime runs on the CPU only for now; the device type codes are
// DLPack's (dlpack.h DLDeviceType) so a Device converts to a DLDevice unchanged.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::runtime {

/// DLPack device type codes (kDLCPU == 1). Only kCPU is supported so far.
enum class DeviceType : int32_t { kCPU = 1 };

struct Device {
  DeviceType type = DeviceType::kCPU;
  /// Index of the device among those of its type (always 0 for the CPU).
  int32_t id = 0;

  static constexpr Device CPU(int32_t id = 0) { return {DeviceType::kCPU, id}; }

  constexpr bool operator==(const Device& o) const { return type == o.type && id == o.id; }
  constexpr bool operator!=(const Device& o) const { return !(*this == o); }

  /// "cpu:0".
  std::string str() const {
    return std::string(type == DeviceType::kCPU ? "cpu" : "unknown") + ":" + std::to_string(id);
  }
};

}  // namespace tessera::runtime
