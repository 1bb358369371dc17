// The response bodies of the OpenAI API: a whole chat completion or text completion, the
// chunks of a streamed one (as SSE events, sse.h), usage, and embeddings (floats, or
// base64 of little-endian float32 as the API's encoding_format asks).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/engine/llm/generation.h"
#include "baton/model/tokenizer/bpe_tokenizer.h"
#include "baton/server/api/openai_request.h"
#include "baton/server/api/tool_output.h"

namespace baton {

// Response bodies keep their keys in the order written, as OpenAI's do: a completion's
// top_logprobs object lists its tokens from the most probable down.
using ResponseJson = nlohmann::ordered_json;

// What every object of one response repeats.
struct ResponseIdentity {
  CompletionCall::Kind kind = CompletionCall::Kind::chat;
  std::string id;  // chatcmpl-... or cmpl-...
  std::int64_t created = 0;
  std::string model;
};

// `unique`: what makes the id unique (the server's start time and a serial number).
ResponseIdentity new_identity(CompletionCall::Kind kind, const std::string& model,
                              std::string_view unique);

// One generated token's log-probabilities, with the text of each token.
struct TokenLogprobs {
  TokenId token = 0;
  float logprob = 0.0f;
  std::vector<TopLogprob> top;
};

ResponseJson usage_json(int prompt_tokens, int completion_tokens, int cached_tokens);

// The whole response of an unstreamed request. `split`: the text read for tool calls (a
// request with tools): the message's content and tool_calls, finish_reason "tool_calls"
// when it made any.
ResponseJson completion_json(const ResponseIdentity& identity, const GenerationResult& result,
                             const std::vector<TokenLogprobs>* logprobs,
                             const BpeTokenizer& tokenizer, const SplitOutput* split = nullptr);

// A streamed chunk: `text` new since the last chunk, the role on the first chat chunk,
// `finish` on the last, `logprobs` of the tokens this chunk covers (when asked).
ResponseJson chunk_json(const ResponseIdentity& identity, const std::string& text, bool first,
                        std::optional<FinishReason> finish,
                        const std::vector<TokenLogprobs>* logprobs, const BpeTokenizer& tokenizer);
// A streamed chat chunk of tool call number `index`: its first (`id` set) carries the id,
// type and name with the arguments begun; the next ones carry arguments fragments.
ResponseJson tool_call_chunk_json(const ResponseIdentity& identity, int index,
                                  const std::string& id, const std::string& name,
                                  const std::string& arguments);
// The chunk that ends a chat stream with tools: an empty delta and the finish reason.
ResponseJson finish_chunk_json(const ResponseIdentity& identity, const std::string& finish_reason);
// The last chunk of a stream with include_usage: no choices, the usage.
ResponseJson usage_chunk_json(const ResponseIdentity& identity, const ResponseJson& usage);

ResponseJson embeddings_json(const std::string& model,
                             const std::vector<std::vector<float>>& embeddings, bool base64,
                             int prompt_tokens);
std::string base64_floats(const std::vector<float>& values);

// JSON text that never fails on invalid UTF-8 (a token may end inside a character).
std::string dump(const nlohmann::json& value);
std::string dump(const ResponseJson& value);

}  // namespace baton
