#include "baton/errors/error_kind.h"

#include <gtest/gtest.h>

#include "baton/common/exit_codes.h"
#include "baton/engine/request.h"
#include "baton/gpu/backend_unavailable.h"
#include "baton/gpu/gpu_error.h"
#include "baton/model/files/model_file_error.h"
#include "baton/server/http/api_error.h"

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
      {std::make_exception_ptr(std::invalid_argument("--duration")), ErrorKind::usage, kExitUsage,
       400, std::nullopt},
      {std::make_exception_ptr(ModelFileError("config.json", "bad")), ErrorKind::usage, kExitUsage,
       400, std::nullopt},
      {std::make_exception_ptr(BackendUnavailable("cuda")), ErrorKind::usage, kExitUsage, 400,
       std::nullopt},
      {std::make_exception_ptr(GpuError(GpuErrorClass::hang, "s", "hung")), ErrorKind::retryable,
       kExitFailure, 503, 1},
      {std::make_exception_ptr(GpuError(GpuErrorClass::timeout, "s", "late")), ErrorKind::retryable,
       kExitFailure, 503, 1},
      {std::make_exception_ptr(EngineStopped("e")), ErrorKind::retryable, kExitFailure, 503, 1},
      {std::make_exception_ptr(QueueFull("e", 4)), ErrorKind::retryable, kExitFailure, 503, 1},
      {std::make_exception_ptr(ContextLengthExceeded(256, 200, 100)), ErrorKind::usage, kExitUsage,
       400, std::nullopt},
      {std::make_exception_ptr(GpuError(GpuErrorClass::other, "s", "oom")), ErrorKind::failure,
       kExitFailure, 500, std::nullopt},
      {std::make_exception_ptr(GpuError(GpuErrorClass::submissions_ignored, "s", "gone")),
       ErrorKind::fatal, kExitGpuFatal, 503, std::nullopt},
      {std::make_exception_ptr(std::runtime_error("disk full")), ErrorKind::failure, kExitFailure,
       500, std::nullopt},
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

TEST(ErrorKind, QueueFullSaysWhenToRetryAndContextLengthExceededSpeaksLikeOpenAi) {
  EXPECT_EQ(QueueFull("e", 4).retry_after_s(), 1);
  const ContextLengthExceeded e(4096, 4000, 200);
  EXPECT_STREQ(e.what(),
               "This model's maximum context length is 4096 tokens. However, you requested 4200 "
               "tokens (4000 in the prompt, 200 in the completion). Please reduce the length of "
               "the prompt or completion.");
  EXPECT_EQ(e.message_for("messages"),
            "This model's maximum context length is 4096 tokens. However, you requested 4200 "
            "tokens (4000 in the messages, 200 in the completion). Please reduce the length of "
            "the messages or completion.");
  // The server names the input as its API does: a completion's prompt is no conversation.
  const ApiError text = to_api_error(e, "prompt");
  EXPECT_EQ(text.param(), "prompt");
  EXPECT_NE(std::string(text.what()).find("(4000 in the prompt, 200 in the completion)"),
            std::string::npos)
      << text.what();
  EXPECT_NE(std::string(to_api_error(e, "messages").what()).find("4000 in the messages"),
            std::string::npos);
  EXPECT_EQ(e.context(), 4096);
  EXPECT_EQ(e.prompt_tokens(), 4000);
  EXPECT_EQ(e.max_tokens(), 200);
}

// The engine's one check of a request's ids becomes a 400 naming the field: the prompt as
// the API calls it, or logit_bias.
TEST(ErrorMapping, ATokenOutsideTheVocabularyNamesItsField) {
  const TokenOutsideVocabulary prompt =
      TokenOutsideVocabulary(TokenOutsideVocabulary::Field::prompt, 1, 10'000'000, 1024)
          .naming("chat-a");
  const ApiError as_prompt = to_api_error(prompt, "prompt");
  EXPECT_EQ(as_prompt.status(), 400);
  EXPECT_EQ(as_prompt.param(), "prompt");
  EXPECT_EQ(std::string(as_prompt.what()),
            "token id 10000000 (prompt[1]) is outside the vocabulary of 'chat-a': its ids are 0 "
            "to 1023");
  const TokenOutsideVocabulary bias(TokenOutsideVocabulary::Field::logit_bias, 0, 1024, 1024,
                                    "chat-a");
  const ApiError as_bias = to_api_error(bias, "messages");
  EXPECT_EQ(as_bias.param(), "logit_bias");
  EXPECT_EQ(std::string(as_bias.what()),
            "'logit_bias' key \"1024\" is a token id outside the vocabulary of 'chat-a': its "
            "ids are 0 to 1023");
  EXPECT_EQ(classify(bias), ErrorKind::usage);
}

}  // namespace
}  // namespace baton
