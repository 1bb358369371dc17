// to_api_error(): baton's errors as the client sees them. Kept apart from api_error.cpp
// because it is the one place that knows the engines' error types.
#include "baton/engine/output/output_grammars.h"
#include "baton/engine/request.h"
#include "baton/errors/error_kind.h"
#include "baton/server/http/api_error.h"

namespace baton {

ApiError to_api_error(const std::exception& error, const std::string& prompt_param) {
  if (const auto* api = dynamic_cast<const ApiError*>(&error)) return *api;
  if (const auto* full = dynamic_cast<const QueueFull*>(&error)) {
    return ApiError(429, full->what(), "rate_limit_error", "queue_full")
        .with_retry_after(full->retry_after_s());
  }
  if (const auto* outside = dynamic_cast<const TokenOutsideVocabulary*>(&error)) {
    const bool bias = outside->field() == TokenOutsideVocabulary::Field::logit_bias;
    return bad_parameter(bias ? "logit_bias" : prompt_param, outside->message_for(prompt_param));
  }
  if (const auto* long_input = dynamic_cast<const ContextLengthExceeded*>(&error)) {
    return bad_parameter(prompt_param, long_input->message_for(prompt_param),
                         "context_length_exceeded");
  }
  // A grammar whose compile failed beside the prefill (a size bound, a $ref cycle).
  if (const auto* schema = dynamic_cast<const OutputSchemaError*>(&error)) {
    return bad_parameter(schema->field(), schema->what(), "invalid_schema");
  }
  const ErrorKind kind = classify(error);
  switch (kind) {
    case ErrorKind::usage:
      return ApiError(400, error.what(), "invalid_request_error");
    case ErrorKind::retryable:
      return ApiError(503, error.what(), "server_error", "engine_unavailable")
          .with_retry_after(retry_after_s(kind).value_or(1));
    case ErrorKind::fatal:
      return ApiError(503, error.what(), "server_error", "device_fatal");
    case ErrorKind::failure:
      break;
  }
  return ApiError(500, error.what(), "server_error");
}

ApiError to_api_error(const std::exception_ptr& error, const std::string& prompt_param) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return to_api_error(e, prompt_param);
  } catch (...) {
    return ApiError(500, "unknown error", "server_error");
  }
}

}  // namespace baton
