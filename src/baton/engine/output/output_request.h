// What a request asks of its output besides free text, in the terms every API maps to
// (OpenAI's tools / tool_choice / parallel_tool_calls / response_format, Anthropic's tools /
// tool_choice, the Responses API's function tools and text.format): the tools the model
// may call and whether it must, and a JSON shape its answer must take.
// Thread-safety: plain values.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "baton/model/chat/chat_tools.h"

namespace baton {

struct ToolUse {
  enum class Choice {
    automatic,  // the model decides: text, or calls after its format's marker (lazy grammar)
    none,       // no call (the template still sees the tools)
    required,   // one call at least, from the first token
    named       // a call of `function`, from the first token
  };
  ChatTools tools{};  // validated (chat_tools.h); empty: none offered
  Choice choice = Choice::automatic;
  std::string function{};  // named
  bool parallel = true;    // more than one call allowed
  // The output may hold calls (and so is parsed for them).
  bool calls_possible() const { return !tools.empty() && choice != Choice::none; }
};

struct ResponseFormat {
  enum class Kind { text, json_object, json_schema };
  Kind kind = Kind::text;
  nlohmann::ordered_json schema{};  // json_schema
  std::string name{};               // json_schema's name, for messages
};

}  // namespace baton
