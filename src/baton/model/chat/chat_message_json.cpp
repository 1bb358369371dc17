#include "baton/model/chat/chat_message_json.h"

#include "baton/model/chat/json_span.h"

namespace baton {

using nlohmann::ordered_json;

std::optional<ordered_json> arguments_object(const std::string& arguments) {
  if (json_nesting_depth(arguments) > 64) return std::nullopt;
  ordered_json value = ordered_json::parse(arguments, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || !value.is_object()) return std::nullopt;
  return value;
}

ordered_json message_json(const ChatMessage& message, bool arguments_as_text) {
  ordered_json out = {{"role", message.role}, {"content", message.content}};
  if (!message.tool_calls.empty()) {
    ordered_json calls = ordered_json::array();
    for (const ToolCall& call : message.tool_calls) {
      std::optional<ordered_json> object;
      if (!arguments_as_text) object = arguments_object(call.arguments);
      calls.push_back({{"id", call.id},
                       {"type", "function"},
                       {"function",
                        {{"name", call.name},
                         {"arguments", object ? *object : ordered_json(call.arguments)}}}});
    }
    out["tool_calls"] = std::move(calls);
  }
  if (!message.tool_call_id.empty()) out["tool_call_id"] = message.tool_call_id;
  if (!message.name.empty()) out["name"] = message.name;
  return out;
}

}  // namespace baton
