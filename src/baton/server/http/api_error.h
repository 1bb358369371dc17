// ApiError: an error a client gets back, in the OpenAI error shape
// {"error": {"message", "type", "param", "code"}}, with its HTTP status and, where a
// retry helps, Retry-After. to_api_error() maps every error baton raises onto one, through
// the one classification of errors/error_kind.h.
// Thread-safety: values and pure functions.
#pragma once

#include <exception>
#include <optional>
#include <stdexcept>
#include <string>

#include "baton/server/http/http_types.h"

namespace baton {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, const std::string& message, std::string type,
           std::optional<std::string> code = std::nullopt,
           std::optional<std::string> param = std::nullopt);

  ApiError& with_retry_after(int seconds) {
    retry_after_s_ = seconds;
    return *this;
  }
  int status() const { return status_; }
  const std::string& type() const { return type_; }
  const std::optional<std::string>& code() const { return code_; }
  const std::optional<std::string>& param() const { return param_; }
  std::optional<int> retry_after_s() const { return retry_after_s_; }

  // The JSON object {"error": {...}} as text.
  std::string body() const;
  HttpResponse response() const;

 private:
  int status_;
  std::string type_;
  std::optional<std::string> code_;
  std::optional<std::string> param_;
  std::optional<int> retry_after_s_;
};

// A bad request parameter: 400, naming it.
ApiError bad_parameter(const std::string& param, const std::string& message,
                       std::optional<std::string> code = std::nullopt);

// What the client of `model` is told about `error` (an engine's, a tokenizer's, ...).
// `prompt_param` names the field a context-length error blames ("messages" or "prompt").
ApiError to_api_error(const std::exception& error, const std::string& prompt_param = "messages");
ApiError to_api_error(const std::exception_ptr& error,
                      const std::string& prompt_param = "messages");

}  // namespace baton
