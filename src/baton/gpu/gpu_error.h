// GpuError: the one type of every device error, with the class that decides recovery.
// Thread-safety: immutable after construction; copy freely between threads.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace baton {

// The error classes the GPU reports (see MISSION.md). `hang` and `timeout` recover in
// place; `submissions_ignored` means the process can no longer use the device.
enum class GpuErrorClass { hang, timeout, submissions_ignored, other };

std::string_view to_string(GpuErrorClass error_class);

class GpuError : public std::runtime_error {
 public:
  // `origin` names where it was raised, e.g. "cpu::Stream decode-0".
  GpuError(GpuErrorClass error_class, std::string origin, const std::string& detail);

  GpuErrorClass error_class() const noexcept { return class_; }
  const std::string& origin() const noexcept { return origin_; }
  // True when the process must exit so its supervisor restarts it.
  bool fatal() const noexcept { return class_ == GpuErrorClass::submissions_ignored; }
  // True when the same request may be sent again: the device recovered in place.
  bool retryable() const noexcept {
    return class_ == GpuErrorClass::hang || class_ == GpuErrorClass::timeout;
  }

 private:
  GpuErrorClass class_;
  std::string origin_;
};

}  // namespace baton
