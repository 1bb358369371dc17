// ErrorKind: the one classification of every error a user can meet, shared by the CLI's
// exit codes and the server's HTTP statuses, so that the same failure means the same
// thing everywhere:
// - usage:     the input is wrong (arguments, a model file, a backend this build lacks);
//              fix it and try again. Exit 2, HTTP 400.
// - retryable: the request met a fault the device recovered from in place (a hang, a
//              timeout), an engine that was stopping or a full queue; send it again.
//              Exit 1, HTTP 503 with Retry-After.
// - failure:   this run failed for another reason. Exit 1, HTTP 500.
// - fatal:     the device can no longer be used; the process must be restarted. Exit 70,
//              HTTP 503 (no Retry-After: this process will not recover).
// Thread-safety: pure functions.
#pragma once

#include <exception>
#include <optional>
#include <string_view>

namespace baton {

enum class ErrorKind { usage, retryable, failure, fatal };

std::string_view to_string(ErrorKind kind);
ErrorKind classify(const std::exception& error);
int exit_code(ErrorKind kind);
int http_status(ErrorKind kind);
// Seconds a client should wait before sending the request again; none when a retry of
// the same request cannot help.
std::optional<int> retry_after_s(ErrorKind kind);

}  // namespace baton
