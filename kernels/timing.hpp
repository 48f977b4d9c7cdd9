// Device timing for measurements only (halo3d bench, the probe and the measure_* calibrations),
// kept out of the Kernels API so that no solver can time, and so synchronize, the device.
// Every backend implements it beside Kernels.
#pragma once
#include <functional>

#include "error.hpp"
#include "kernels.hpp"

namespace halo3d {

class DeviceTimer {
 public:
  virtual ~DeviceTimer() = default;
  // Milliseconds taken on the device by the work `enqueue` puts on the lanes (CUDA events
  // on CUDA, a steady clock on the host); synchronizes before and after.
  virtual double elapsed_ms(const std::function<void()>& enqueue) = 0;
};

// The timer of backend `k` (every backend is one).
inline DeviceTimer& device_timer(Kernels& k) {
  auto* t = dynamic_cast<DeviceTimer*>(&k);
  if (!t) throw Error(kExitFailure, "backend " + k.name() + " has no device timer");
  return *t;
}

}  // namespace halo3d
