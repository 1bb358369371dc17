#include "baton/gpu/gpu_error.h"

namespace baton {

std::string_view to_string(GpuErrorClass error_class) {
  switch (error_class) {
    case GpuErrorClass::hang:
      return "hang";
    case GpuErrorClass::timeout:
      return "timeout";
    case GpuErrorClass::submissions_ignored:
      return "submissions_ignored";
    case GpuErrorClass::other:
      return "other";
  }
  return "other";
}

GpuError::GpuError(GpuErrorClass error_class, std::string origin, const std::string& detail)
    : std::runtime_error("[" + origin + "] " + std::string(to_string(error_class)) + ": " + detail),
      class_(error_class),
      origin_(std::move(origin)) {}

}  // namespace baton
