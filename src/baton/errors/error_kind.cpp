#include "baton/errors/error_kind.h"

#include <stdexcept>

#include "baton/common/exit_codes.h"
#include "baton/engine/request.h"
#include "baton/gpu/backend_unavailable.h"
#include "baton/gpu/gpu_error.h"
#include "baton/model/files/model_file_error.h"

namespace baton {

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::usage:
      return "usage";
    case ErrorKind::retryable:
      return "retryable";
    case ErrorKind::failure:
      return "failure";
    case ErrorKind::fatal:
      return "fatal";
  }
  return "failure";
}

ErrorKind classify(const std::exception& error) {
  if (const auto* gpu = dynamic_cast<const GpuError*>(&error)) {
    if (gpu->fatal()) return ErrorKind::fatal;
    return gpu->retryable() ? ErrorKind::retryable : ErrorKind::failure;
  }
  if (dynamic_cast<const EngineStopped*>(&error) != nullptr ||
      dynamic_cast<const QueueFull*>(&error) != nullptr) {
    return ErrorKind::retryable;
  }
  // A bad model file is fixed like a bad argument: by the user, before trying again.
  if (dynamic_cast<const std::invalid_argument*>(&error) != nullptr ||
      dynamic_cast<const ModelFileError*>(&error) != nullptr ||
      dynamic_cast<const BackendUnavailable*>(&error) != nullptr) {
    return ErrorKind::usage;
  }
  return ErrorKind::failure;
}

int exit_code(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::usage:
      return kExitUsage;
    case ErrorKind::retryable:
    case ErrorKind::failure:
      return kExitFailure;
    case ErrorKind::fatal:
      return kExitGpuFatal;
  }
  return kExitFailure;
}

int http_status(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::usage:
      return 400;
    case ErrorKind::retryable:
    case ErrorKind::fatal:
      return 503;
    case ErrorKind::failure:
      return 500;
  }
  return 500;
}

std::optional<int> retry_after_s(ErrorKind kind) {
  if (kind == ErrorKind::retryable) return 1;
  return std::nullopt;
}

}  // namespace baton
