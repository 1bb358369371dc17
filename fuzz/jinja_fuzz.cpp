// libFuzzer target: arbitrary bytes as a chat template, parsed by baton's Jinja engine and
// rendered with a conversation, tools and special tokens. TemplateError is the expected
// answer to a bad template (and to one that raises or runs past the engine's bounds); a
// crash, a hang, a sanitizer report or any other exception is a bug.
// Thread-safety: libFuzzer calls the entry point from one thread.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <string_view>

#include "baton/model/template/jinja_template.h"

namespace {

const baton::jinja::Value& variables() {
  static const baton::jinja::Value kVariables =
      baton::jinja::Value::from_json(nlohmann::ordered_json::parse(R"({
        "messages": [
          {"role": "system", "content": "Be brief."},
          {"role": "user", "content": "Hi \u00e9 \ud83d\ude00"},
          {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1",
            "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]},
          {"role": "tool", "tool_call_id": "call_1", "content": "{\"y\": 2.5}"}],
        "tools": [{"type": "function", "function": {"name": "f", "description": "d",
          "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}}}}],
        "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>"})"));
  return kVariables;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  try {
    const baton::jinja::JinjaTemplate chat_template(source);
    (void)chat_template.render(*variables().dict);
  } catch (const baton::jinja::TemplateError&) {
  } catch (const std::exception& error) {
    std::fprintf(stderr, "jinja_fuzz: not a TemplateError: %s\n", error.what());
    std::abort();
  }
  return 0;
}
