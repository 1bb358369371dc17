#include "baton/server/routes/router.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>

#include "baton/server/api/anthropic_messages.h"
#include "baton/server/api/json_fields.h"
#include "baton/server/api/logit_bias_field.h"
#include "baton/server/api/openai_response.h"
#include "baton/server/http/api_error.h"
#include "baton/server/observe/dashboard_routes.h"
#include "baton/server/observe/route_label.h"
#include "baton/server/routes/completion_stream.h"
#include "baton/server/routes/embedding_response.h"

namespace baton {
namespace {

// A request that sets no max_tokens gets this many at most (within the context): large
// enough for a chat answer, small enough for a KV budget of a few hundred MB.
constexpr int kDefaultMaxTokens = 512;

std::string hex(std::uint64_t value) {
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(value));
  return out;
}

std::string start_stamp() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return hex(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(now).count()));
}

}  // namespace

std::optional<std::string_view> bearer_token(std::string_view header) {
  constexpr std::string_view scheme = "bearer ";
  if (header.size() < scheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < scheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) != scheme[i]) return std::nullopt;
  }
  return header.substr(scheme.size());
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

Router::Router(RouterContext context) : context_(std::move(context)), id_prefix_(start_stamp()) {}

bool Router::authorized(const HttpRequest& request) const {
  if (context_.api_key.empty()) return true;
  // Anthropic's clients send the key as x-api-key.
  if (const std::string* key = request.header("x-api-key");
      key != nullptr && request.target == "/v1/messages") {
    return constant_time_equal(*key, context_.api_key);
  }
  const std::string* header = request.header("authorization");
  if (header == nullptr) return false;
  const std::optional<std::string_view> token = bearer_token(*header);
  return token && constant_time_equal(*token, context_.api_key);
}

void Router::count(const std::string& model, const std::string& route, int status) const {
  context_.metrics.http_request(model, route_label(route), status);
}

std::string Router::model_of(const HttpRequest& request) const {
  constexpr std::string_view models = "/v1/models/";
  if (request.target.starts_with(models)) {
    const std::string_view rest = std::string_view(request.target).substr(models.size());
    return std::string(rest.substr(0, rest.find('/')));
  }
  return json_fields::requested_model(request.body);
}

RouteResult Router::handle(const HttpRequest& request) {
  const std::string& path = request.target;
  const bool get = request.method == "GET";
  const bool post = request.method == "POST";
  const bool tokenizer_route = path == "/tokenize" || path == "/detokenize";
  if ((path.rfind("/v1/", 0) == 0 || tokenizer_route) && !authorized(request)) {
    count("", path, 401);  // no model: a client without the key learns nothing of them
    if (path == "/v1/messages") {
      return anthropic_error_response(ApiError(
          401, "Incorrect or missing API key: send 'x-api-key: KEY'", "invalid_request_error"));
    }
    return ApiError(401, "Incorrect or missing API key: send 'Authorization: Bearer KEY'",
                    "invalid_request_error", "invalid_api_key")
        .response();
  }
  try {
    if (post && path == "/v1/chat/completions")
      return completion(request, CompletionCall::Kind::chat);
    if (post && path == "/v1/completions") return completion(request, CompletionCall::Kind::text);
    if (post && path == "/v1/embeddings") return embeddings(request);
    if (post && path == "/v1/messages") return messages(request);
    if (post && path == "/v1/responses") return responses(request);
    if (post && path == "/tokenize") return tokenize(request);
    if (post && path == "/detokenize") return detokenize(request);
    HttpResponse response;
    if (std::optional<HttpResponse> lifecycle = model_route(request)) {
      response = std::move(*lifecycle);
    } else if (std::optional<HttpResponse> policy = policy_route(request)) {
      response = std::move(*policy);
    } else if (get && path == "/v1/models") {
      response = models();
    } else if (get && path == "/health") {
      response = health();
    } else if (get && path == "/metrics") {
      response = metrics();
    } else if (get && path == "/v1/engines") {
      response = engines();
    } else if (get && path == "/v1/timeline") {
      response = timeline_response(context_.activity, model_names(context_.models.specs()),
                                   context_.host.faults().events(), request.query);
    } else if (std::optional<HttpResponse> asset = get ? dashboard_asset(path) : std::nullopt) {
      response = std::move(*asset);
    } else {
      const bool known = is_fixed_route(path);
      throw ApiError(known ? 405 : 404,
                     (known ? "Method " + request.method + " is not allowed on "
                            : "Unknown route " + request.method + " ") +
                         path,
                     "invalid_request_error", known ? "method_not_allowed" : "not_found");
    }
    count(model_of(request), path, response.head.status);
    return response;
  } catch (const ApiError& error) {
    count(model_of(request), path, error.status());
    return error.response();
  }
}

RouteResult Router::with_model(const std::string& route, const std::string& name, bool chat,
                               ModelRoute then, AfterLoad::ErrorResponse error_response) {
  // The route's work moves into the AfterLoad (a request's parsed body is not copied) and
  // runs from there, now or once the model is loaded.
  auto waiting =
      std::make_shared<AfterLoad>(std::move(then), std::move(error_response),
                                  [this, route, name](int status) { count(name, route, status); });
  ModelRegistry::Lease model = context_.models.acquire(
      name, chat, [waiting](ModelRegistry::Lease ready, std::exception_ptr error) {
        waiting->arrived(std::move(ready), std::move(error));
      });
  if (model) return waiting->then(std::move(model));
  return waiting;
}

std::optional<ToolCallFormat> tool_call_format(const CompletionCall& call,
                                               const ServedModel& model) {
  if (!call.tool_use.calls_possible() || !model.grammars) return std::nullopt;
  return model.grammars->tool_call_format();
}

HttpResponse json_response(int status, const nlohmann::json& body) {
  return {.head = {.status = status, .content_type = "application/json", .headers = {}},
          .body = dump(body)};
}

std::string Router::next_unique() { return id_prefix_ + hex(serial_.fetch_add(1)); }

GenerationRequest Router::generation_request(const CompletionCall& call, const ServedModel& model) {
  const InputProcessor& input = *model.input;
  GenerationRequest request;
  request.id = serial_.load();
  try {
    if (call.kind == CompletionCall::Kind::chat) {
      request.prompt = model.chat_prompt(call.messages, call.chat_end, call.tool_use.tools);
    } else if (call.prompt_tokens) {
      // Its ids are checked once, by the engine (TokenOutsideVocabulary), as logit_bias's.
      request.prompt = *call.prompt_tokens;
    } else {
      request.prompt = input.text_prompt(*call.prompt);
    }
    GenerationParams& params = request.params;
    params.sampling = input.sampling(call.sampling, model.spec.sampling);
    params.sampling.top_logprobs = call.logprobs ? call.top_logprobs : 0;
    params.max_tokens_explicit = call.max_tokens.has_value();
    params.max_tokens = call.max_tokens.value_or(model.spec.max_tokens.value_or(kDefaultMaxTokens));
    params.stop = call.stop;
    params.ignore_eos = call.ignore_eos;
    // Calls are parsed out of the text: it keeps the markers ([TOOL_CALLS], <|python_tag|>).
    params.skip_special_tokens = !call.tool_use.calls_possible();
    if (model.grammars) {
      params.grammar = model.grammars->for_request(call.tool_use, call.response_format);
    }
  } catch (const OutputSchemaError& error) {
    throw bad_parameter(error.field(), error.what(), "invalid_schema");
  } catch (const std::invalid_argument& error) {
    throw bad_parameter(call.kind == CompletionCall::Kind::chat ? "messages" : "prompt",
                        error.what());
  }
  return request;
}

RouteResult Router::completion(const HttpRequest& request, CompletionCall::Kind kind) {
  const std::string route = request.target;
  CompletionCall parsed = parse_completion_call(request.body, kind);
  const std::string requested = parsed.model;
  return with_model(
      route, requested, true,
      [this, call = std::move(parsed), route](std::shared_ptr<const ServedModel> model) {
        const std::string prompt_param =
            call.kind == CompletionCall::Kind::chat ? "messages" : "prompt";
        GenerationRequest generation = generation_request(call, *model);
        CompletionSinks sinks{.metrics = context_.metrics,
                              .busy = context_.busy,
                              .counted = [this, name = model->spec.name, route](int status) {
                                count(name, route, status);
                              }};
        CompletionShape shape{
            .stream = call.stream, .include_usage = call.include_usage, .logprobs = call.logprobs};
        auto format = std::make_unique<OpenAiFormat>(
            new_identity(call.kind, model->spec.name, next_unique()), call.include_usage,
            call.logprobs, *model->tokenizer, tool_call_format(call, *model));
        return RouteResult(std::make_shared<CompletionStream>(std::move(model), std::move(sinks),
                                                              std::move(format), shape,
                                                              std::move(generation), prompt_param));
      });
}

RouteResult Router::embeddings(const HttpRequest& request) {
  const std::string route = request.target;
  EmbeddingCall parsed = parse_embedding_call(request.body);
  const std::string requested = parsed.model;
  return with_model(
      route, requested, false,
      [this, call = std::move(parsed), route](std::shared_ptr<const ServedModel> model) {
        EmbeddingRequest embedding;
        embedding.id = serial_.fetch_add(1);
        embedding.inputs = call.token_inputs;  // their ids are checked once, by the engine
        for (const std::string& text : call.texts) {
          embedding.inputs.push_back(model->tokenizer->encode_with_special(text));
        }
        const auto context =
            static_cast<std::size_t>(model->model->config().max_position_embeddings);
        for (std::size_t i = 0; i < embedding.inputs.size(); ++i) {
          if (embedding.inputs[i].size() > context) {
            throw bad_parameter("input",
                                "This model's maximum context length is " +
                                    std::to_string(context) + " tokens. However, input " +
                                    std::to_string(i) + " has " +
                                    std::to_string(embedding.inputs[i].size()) +
                                    " tokens. Please reduce the length of the input.",
                                "context_length_exceeded");
          }
        }
        const std::string name = model->spec.name;
        return RouteResult(std::make_shared<EmbeddingResponse>(
            std::move(model), std::move(embedding), call.base64,
            [this, name, route](int status) { count(name, route, status); }));
      });
}

}  // namespace baton
