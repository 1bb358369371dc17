#include "baton/errors/error_kind.h"

#include <gtest/gtest.h>

#include "baton/common/exit_codes.h"
#include "baton/engine/request.h"
#include "baton/gpu/backend_unavailable.h"
#include "baton/gpu/gpu_error.h"
#include "baton/model/model_file_error.h"

namespace baton {
namespace {

TEST(ErrorKind, EveryErrorHasOneKindAndItsExitCodeAndHttpStatus) {
  const struct {
    std::exception_ptr error;
    ErrorKind kind;
    int exit;
    int http;
    std::optional<int> retry_after;
  } cases[] = {
      {std::make_exception_ptr(std::invalid_argument("--duration")), ErrorKind::usage,
       kExitUsage, 400, std::nullopt},
      {std::make_exception_ptr(ModelFileError("config.json", "bad")), ErrorKind::usage,
       kExitUsage, 400, std::nullopt},
      {std::make_exception_ptr(BackendUnavailable("cuda")), ErrorKind::usage, kExitUsage, 400,
       std::nullopt},
      {std::make_exception_ptr(GpuError(GpuErrorClass::hang, "s", "hung")), ErrorKind::retryable,
       kExitFailure, 503, 1},
      {std::make_exception_ptr(GpuError(GpuErrorClass::timeout, "s", "late")),
       ErrorKind::retryable, kExitFailure, 503, 1},
      {std::make_exception_ptr(EngineStopped("e")), ErrorKind::retryable, kExitFailure, 503, 1},
      {std::make_exception_ptr(GpuError(GpuErrorClass::other, "s", "oom")), ErrorKind::failure,
       kExitFailure, 500, std::nullopt},
      {std::make_exception_ptr(GpuError(GpuErrorClass::submissions_ignored, "s", "gone")),
       ErrorKind::fatal, kExitGpuFatal, 503, std::nullopt},
      {std::make_exception_ptr(std::runtime_error("disk full")), ErrorKind::failure,
       kExitFailure, 500, std::nullopt},
  };
  for (const auto& c : cases) {
    try {
      std::rethrow_exception(c.error);
    } catch (const std::exception& e) {
      const ErrorKind kind = classify(e);
      EXPECT_EQ(kind, c.kind) << e.what();
      EXPECT_EQ(exit_code(kind), c.exit) << e.what();
      EXPECT_EQ(http_status(kind), c.http) << e.what();
      EXPECT_EQ(retry_after_s(kind), c.retry_after) << e.what();
    }
  }
}

}  // namespace
}  // namespace baton
