#include "baton/server/http/api_error.h"

#include <nlohmann/json.hpp>

namespace baton {

ApiError::ApiError(int status, const std::string& message, std::string type,
                   std::optional<std::string> code, std::optional<std::string> param)
    : std::runtime_error(message),
      status_(status),
      type_(std::move(type)),
      code_(std::move(code)),
      param_(std::move(param)) {}

std::string ApiError::body() const {
  const nlohmann::json error = {
      {"message", what()},
      {"type", type_},
      {"param", param_ ? nlohmann::json(*param_) : nlohmann::json(nullptr)},
      {"code", code_ ? nlohmann::json(*code_) : nlohmann::json(nullptr)}};
  // A message may quote the client's bytes: never fail on bad UTF-8.
  return nlohmann::json{{"error", error}}.dump(-1, ' ', false,
                                               nlohmann::json::error_handler_t::replace);
}

HttpResponse ApiError::response() const {
  HttpResponse response{
      .head = {.status = status_, .content_type = "application/json", .headers = {}},
      .body = body()};
  if (retry_after_s_)
    response.head.headers.emplace_back("Retry-After", std::to_string(*retry_after_s_));
  return response;
}

ApiError bad_parameter(const std::string& param, const std::string& message,
                       std::optional<std::string> code) {
  return ApiError(400, message, "invalid_request_error", std::move(code), param);
}

}  // namespace baton
