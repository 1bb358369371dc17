// The routes of the other APIs clients of LLM servers expect (Router's members, apart from
// the request paths): Anthropic's POST /v1/messages and OpenAI's POST /v1/responses on the
// chat engines, through the same CompletionStream as /v1/chat/completions in their own
// wire formats, and vLLM's POST /tokenize and /detokenize.
#include <nlohmann/json.hpp>

#include "baton/server/api/anthropic_messages.h"
#include "baton/server/api/json_fields.h"
#include "baton/server/api/openai_response.h"
#include "baton/server/api/peer_fields.h"
#include "baton/server/api/peer_requests.h"
#include "baton/server/api/responses_api.h"
#include "baton/server/routes/completion_stream.h"
#include "baton/server/routes/router.h"

namespace baton {
namespace {

using nlohmann::json;

int max_model_len(const ServedModel& model) {
  return model.llm != nullptr ? model.llm->context_length()
                              : static_cast<int>(model.model->config().max_position_embeddings);
}

}  // namespace

RouteResult Router::messages(const HttpRequest& request) {
  const std::string route = request.target;
  try {
    const CompletionCall call = parse_anthropic_call(request.body);
    auto then = [this, call, route](std::shared_ptr<const ServedModel> model) {
      const std::string name = model->spec.name;
      GenerationRequest generation;
      try {
        generation = generation_request(call, *model);
      } catch (const ApiError& error) {
        // A tool's or the answer's schema, named as Anthropic's request names it.
        const std::string param = anthropic_param(error.param().value_or(""));
        if (!error.param() || param == *error.param()) throw;
        throw renamed_error(error, param);
      }
      auto format = std::make_unique<AnthropicFormat>("msg_" + next_unique(), name,
                                                      static_cast<int>(generation.prompt.size()),
                                                      tool_call_format(call, *model));
      CompletionSinks sinks{
          .metrics = context_.metrics,
          .busy = context_.busy,
          .counted = [this, name, route](int status) { count(name, route, status); }};
      CompletionShape shape;
      shape.stream = call.stream;
      return RouteResult(std::make_shared<CompletionStream>(std::move(model), std::move(sinks),
                                                            std::move(format), shape,
                                                            std::move(generation), "messages"));
    };
    return with_model(route, call.model, true, std::move(then), anthropic_error_response);
  } catch (const ApiError& error) {
    // Every error of this route in Anthropic's shape, the status and Retry-After kept.
    count(model_of(request), route, error.status());
    return anthropic_error_response(error);
  }
}

RouteResult Router::responses(const HttpRequest& request) {
  const std::string route = request.target;
  const ResponsesCall call = parse_responses_call(request.body);
  return with_model(
      route, call.call.model, true, [this, call, route](std::shared_ptr<const ServedModel> model) {
        const std::string name = model->spec.name;
        GenerationRequest generation;
        try {
          generation = generation_request(call.call, *model);
        } catch (const ApiError& error) {
          // The conversation is this API's 'input'; a tool's schema tools[i].parameters, the
          // answer's text.format.schema.
          const std::string param = responses_param(error.param().value_or(""));
          if (!error.param() || param == *error.param()) throw;
          if (*error.param() == "messages")
            throw bad_parameter("input", error.what(), error.code());
          throw renamed_error(error, param);
        }
        auto format = std::make_unique<ResponsesFormat>(
            response_echo(call, name, next_unique(), generation.params.sampling),
            tool_call_format(call.call, *model));
        CompletionSinks sinks{
            .metrics = context_.metrics,
            .busy = context_.busy,
            .counted = [this, name, route](int status) { count(name, route, status); }};
        CompletionShape shape;
        shape.stream = call.call.stream;
        return RouteResult(std::make_shared<CompletionStream>(std::move(model), std::move(sinks),
                                                              std::move(format), shape,
                                                              std::move(generation), "input"));
      });
}

RouteResult Router::tokenize(const HttpRequest& request) {
  const std::string route = request.target;
  const TokenizeCall call = parse_tokenize_call(request.body);
  auto then = [this, call, route](std::shared_ptr<const ServedModel> model) {
    std::vector<TokenId> tokens;
    if (call.prompt) {
      // What the completion and embedding routes feed the model for this text.
      tokens = model->tokenizer->encode_with_special(*call.prompt);
    } else {
      tokens = model->chat_prompt(call.messages, call.chat_end, call.tools);
    }
    count(model->spec.name, route, 200);
    return RouteResult(json_response(
        200,
        {{"tokens", tokens}, {"count", tokens.size()}, {"max_model_len", max_model_len(*model)}}));
  };
  // A conversation needs a chat model's template; a prompt goes to a model of either kind.
  if (!call.messages.empty()) return with_model(route, call.model, true, std::move(then));
  return with_any_model(route, call.model, then);
}

RouteResult Router::detokenize(const HttpRequest& request) {
  const std::string route = request.target;
  const DetokenizeCall call = parse_detokenize_call(request.body);
  auto then = [this, call, route](std::shared_ptr<const ServedModel> model) {
    const BpeTokenizer& tokenizer = *model->tokenizer;
    json_fields::check_vocabulary(call.tokens, tokenizer.vocab_size(), "tokens", model->spec.name);
    count(model->spec.name, route, 200);
    return RouteResult(json_response(200, {{"prompt", tokenizer.decode(call.tokens)}}));
  };
  return with_any_model(route, call.model, then);
}

RouteResult Router::with_any_model(const std::string& route, const std::string& name,
                                   const ModelRoute& then) {
  try {
    return with_model(route, name, true, then);
  } catch (const ApiError& error) {
    if (error.status() != 404) throw;  // a chat model that failed or is not loaded
    try {
      return with_model(route, name, false, then);
    } catch (const ApiError& other) {
      if (other.status() != 404) throw;
      throw error;  // neither: the first 404, which lists the chat models
    }
  }
}

}  // namespace baton
