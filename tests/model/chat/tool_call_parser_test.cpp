// Tool calls parsed out of whole answers, in each family's format as its template writes
// calls (the reference renderings of tool_reference.json) and as the families' docs show
// them: content around calls, several calls, malformed calls kept as content.
#include "baton/model/chat/tool_call_parser.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace baton {
namespace tool_call_parser_test {  // named: the unity build batches test files
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// The calls as {name, arguments parsed} pairs, to compare with what was meant.
json calls_of(const ParsedToolOutput& out) {
  json calls = json::array();
  for (const ParsedToolCall& call : out.calls) {
    calls.push_back({{"name", call.name}, {"arguments", json::parse(call.arguments)}});
  }
  return calls;
}

json call(const std::string& name, const json& arguments) {
  return {{"name", name}, {"arguments", arguments}};
}

const json kWeather = call("get_weather", {{"city", "Oslo"}});

TEST(ToolCallParser, Hermes) {
  const std::string one =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>";
  ParsedToolOutput out = parse_tool_calls(ToolCallFormat::hermes, one);
  EXPECT_EQ(out.content, "");
  EXPECT_EQ(calls_of(out), json::array({kWeather}));
  EXPECT_EQ(out.calls[0].arguments, "{\"city\": \"Oslo\"}");  // the model's text, as written
  // Text before stays content; whitespace between and after calls does not.
  out = parse_tool_calls(ToolCallFormat::hermes, "Let me look.\n\n" + one + "\n" + one + "\n\n");
  EXPECT_EQ(out.content, "Let me look.\n\n");
  EXPECT_EQ(calls_of(out), json::array({kWeather, kWeather}));
  // Keys in any order, other keys skipped, no whitespace.
  out = parse_tool_calls(ToolCallFormat::hermes,
                         "<tool_call>{\"arguments\":{\"a\":[1,{\"b\":\"}\"}]},\"id\":3,"
                         "\"name\":\"f\"}</tool_call> Done.");
  EXPECT_EQ(calls_of(out), json::array({call("f", json::parse(R"({"a": [1, {"b": "}"}]})"))}));
  EXPECT_EQ(out.content, " Done.");
}

TEST(ToolCallParser, MalformedCallsStayContent) {
  for (const std::string text : {
           "<tool_call>\n{\"name\": \"f\", \"arguments\": {bad}}\n</tool_call>",
           "<tool_call>\n{\"arguments\": {}}\n</tool_call>",                    // no name
           "<tool_call>\n{\"name\": \"f\", \"arguments\": [1]}\n</tool_call>",  // not an object
           "<tool_call>\n{\"name\": \"f\"}\n</tool_call>",                      // no arguments
           "<tool_call>\n{\"name\": 3, \"arguments\": {}}\n</tool_call>",
           "<tool_call>\n{\"name\": \"f\", \"arguments\": {}} and on",  // never closed
           "<tool_call>{\"name\": \"f\", \"arguments\": {}} junk</tool_call>",
           "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}\n</tool_call>",
           "<tool_call>",
       }) {
    const ParsedToolOutput out = parse_tool_calls(ToolCallFormat::hermes, "Hi " + text);
    EXPECT_EQ(out.content, "Hi " + text);
    EXPECT_TRUE(out.calls.empty()) << text;
  }
  // A whole call that the answer ends in before its closing tag is a call.
  for (const std::string end : {"", "\n", "\n</tool"}) {
    const ParsedToolOutput out = parse_tool_calls(
        ToolCallFormat::hermes, "Hi <tool_call>\n{\"name\": \"f\", \"arguments\": {}}" + end);
    EXPECT_EQ(out.calls.size(), 1u);
    EXPECT_EQ(out.content, end == "\n</tool" ? "Hi </tool" : "Hi ");
  }
  // A malformed call between good ones: the good ones are calls.
  const std::string good = "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
  const ParsedToolOutput out =
      parse_tool_calls(ToolCallFormat::hermes, good + "<tool_call>{oops}</tool_call>" + good);
  EXPECT_EQ(out.content, "<tool_call>{oops}</tool_call>");
  EXPECT_EQ(out.calls.size(), 2u);
}

TEST(ToolCallParser, Llama3Json) {
  ParsedToolOutput out =
      parse_tool_calls(ToolCallFormat::llama3_json,
                       "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}");
  EXPECT_EQ(out.content, "");
  EXPECT_EQ(calls_of(out), json::array({kWeather}));
  out = parse_tool_calls(ToolCallFormat::llama3_json,
                         "\n<|python_tag|>{\"name\": \"get_weather\", \"arguments\": "
                         "{\"city\": \"Oslo\"}}; {\"name\": \"f\", \"parameters\": {}}");
  EXPECT_EQ(calls_of(out), json::array({kWeather, call("f", json::object())}));
  // JSON that does not open the answer is an answer about JSON.
  const std::string prose = "Write {\"name\": \"f\", \"parameters\": {}} to call f.";
  out = parse_tool_calls(ToolCallFormat::llama3_json, prose);
  EXPECT_EQ(out.content, prose);
  EXPECT_TRUE(out.calls.empty());
  out = parse_tool_calls(ToolCallFormat::llama3_json, "{\"answer\": 42}");
  EXPECT_EQ(out.content, "{\"answer\": 42}");
  EXPECT_TRUE(out.calls.empty());
}

TEST(ToolCallParser, MistralBothForms) {
  ParsedToolOutput out = parse_tool_calls(
      ToolCallFormat::mistral_v3,
      "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}, "
      "{\"name\": \"f\", \"arguments\": {\"x\": 1}, \"id\": \"abcdefghi\"}]");
  EXPECT_EQ(out.content, "");
  EXPECT_EQ(calls_of(out), json::array({kWeather, call("f", {{"x", 1}})}));
  out = parse_tool_calls(ToolCallFormat::mistral_v11,
                         "Sure. [TOOL_CALLS]get_weather[ARGS]{\"city\": \"Oslo\"}"
                         "[TOOL_CALLS]f[ARGS]{\"x\": 1}");
  EXPECT_EQ(out.content, "Sure. ");
  EXPECT_EQ(calls_of(out), json::array({kWeather, call("f", {{"x", 1}})}));
  out = parse_tool_calls(ToolCallFormat::mistral_v11, "[TOOL_CALLS]bad name[ARGS]{}");
  EXPECT_EQ(out.content, "[TOOL_CALLS]bad name[ARGS]{}");
  // A list whose second entry is malformed: the first is a call, the rest content.
  out = parse_tool_calls(ToolCallFormat::mistral_v3,
                         "[TOOL_CALLS] [{\"name\": \"f\", \"arguments\": {}}, {\"x\": 1}]");
  EXPECT_EQ(calls_of(out), json::array({call("f", json::object())}));
  EXPECT_EQ(out.content, "{\"x\": 1}]");
}

TEST(ToolCallParser, FunctionaryDeepSeekGranite) {
  ParsedToolOutput out = parse_tool_calls(
      ToolCallFormat::functionary,
      "<function=get_weather>{\"city\": \"Oslo\"}</function><function=f>{}</function>");
  EXPECT_EQ(calls_of(out), json::array({kWeather, call("f", json::object())}));
  out =
      parse_tool_calls(ToolCallFormat::deepseek,
                       "Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather"
                       "<｜tool▁sep｜>{\"city\": \"Oslo\"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>"
                       "f<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>");
  EXPECT_EQ(out.content, "Checking.");
  EXPECT_EQ(calls_of(out), json::array({kWeather, call("f", json::object())}));
  out = parse_tool_calls(ToolCallFormat::granite,
                         "<|tool_call|>[{\"arguments\": {\"city\": \"Oslo\"}, "
                         "\"name\": \"get_weather\"}]");
  EXPECT_EQ(calls_of(out), json::array({kWeather}));
  out = parse_tool_calls(ToolCallFormat::generic, "plain answer");
  EXPECT_EQ(out.content, "plain answer");
}

// What each template writes for the assistant's two calls ("two calls in one turn") is what
// the model was taught to write: parsed back, it gives the calls the conversation held.
TEST(ToolCallParser, ReadsBackWhatTheTemplatesWrite) {
  std::ifstream in(std::filesystem::path(BATON_TEST_DATA) / "chat_templates" /
                   "tool_reference.json");
  const ordered_json reference = ordered_json::parse(in);
  struct Slice {
    const char* name;
    ToolCallFormat format;
    const char* from;  // the assistant's turn: from its first occurrence (kept) ...
    const char* to;    // ... to here (dropped)
    bool skip_from;    // the turn's header, dropped
  };
  const Slice slices[] = {
      {"qwen3", ToolCallFormat::hermes, "<|im_start|>assistant\n", "<|im_end|>", true},
      {"hermes3-tool-use", ToolCallFormat::hermes, "<|im_start|>assistant\n", "<|im_end|>", true},
      {"mistral-7b-v0.3", ToolCallFormat::mistral_v3, "[TOOL_CALLS]", "</s>", false},
      {"mistral-nemo", ToolCallFormat::mistral_v3, "[TOOL_CALLS]", "</s>", false},
      {"functionary-v3.1", ToolCallFormat::functionary,
       "<|start_header_id|>assistant<|end_header_id|>\n\n", "<|eom_id|>", true},
      {"deepseek-v3.1", ToolCallFormat::deepseek, "<｜tool▁calls▁begin｜>", "<｜end▁of▁sentence｜>",
       false},
  };
  int checked = 0;
  for (const ordered_json& entry : reference) {
    if (entry["case"] != "two calls in one turn" || !entry.contains("output")) continue;
    for (const Slice& s : slices) {
      if (entry["template"] != s.name) continue;
      const std::string text = entry["output"];
      std::size_t begin = text.find(s.from);
      ASSERT_NE(begin, std::string::npos) << s.name;
      if (s.skip_from) begin += std::string(s.from).size();
      const std::size_t end = text.find(s.to, begin);
      const ParsedToolOutput out =
          parse_tool_calls(s.format, std::string_view(text).substr(begin, end - begin));
      json expected = json::array();
      for (const ordered_json& c : entry["messages"][1]["tool_calls"]) {
        expected.push_back(
            call(c["function"]["name"], json::parse(std::string(c["function"]["arguments"]))));
      }
      EXPECT_EQ(calls_of(out), expected) << s.name;
      EXPECT_EQ(out.content, "") << s.name;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 6);
}

}  // namespace
}  // namespace tool_call_parser_test
}  // namespace baton
