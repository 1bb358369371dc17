// The streaming tool-call parser: decoded text fed in pieces of every size gives what the
// whole-text parser gives, names come first and argument fragments concatenate to the
// whole, and only what may start a call marker is held back.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "baton/model/chat/tool_call_parser.h"

namespace baton {
namespace tool_stream_parser_test {  // named: the unity build batches test files
namespace {

// Pieces put together as a whole answer; checks that a call's first piece (only) names it
// and that calls come in order.
struct Assembled {
  std::string content;
  std::vector<ParsedToolCall> calls;

  void add(const std::vector<ToolStreamPiece>& pieces) {
    for (const ToolStreamPiece& piece : pieces) {
      if (piece.call_index < 0) {
        EXPECT_FALSE(piece.content.empty());
        content += piece.content;
        continue;
      }
      const auto index = static_cast<std::size_t>(piece.call_index);
      if (index == calls.size()) {
        EXPECT_FALSE(piece.name.empty());
        calls.push_back({.name = piece.name, .arguments = piece.arguments});
      } else {
        ASSERT_LT(index, calls.size());
        EXPECT_TRUE(piece.name.empty());
        calls[index].arguments += piece.arguments;
      }
    }
  }
};

Assembled stream(ToolCallFormat format, const std::string& text,
                 const std::vector<std::size_t>& cuts) {
  ToolCallStreamParser parser(format);
  Assembled out;
  std::size_t at = 0;
  for (std::size_t cut : cuts) {
    cut = std::min(cut, text.size());
    out.add(parser.feed(std::string_view(text).substr(at, cut - at)));
    at = cut;
  }
  out.add(parser.feed(std::string_view(text).substr(at)));
  out.add(parser.finish());
  EXPECT_EQ(parser.calls(), static_cast<int>(out.calls.size()));
  return out;
}

// Cuts every `step` bytes (1 splits the markers and UTF-8 characters too).
std::vector<std::size_t> every(std::size_t step, std::size_t size) {
  std::vector<std::size_t> cuts;
  for (std::size_t at = step; at < size; at += step) cuts.push_back(at);
  return cuts;
}

void expect_streams_as_whole(ToolCallFormat format, const std::string& text) {
  const ParsedToolOutput whole = parse_tool_calls(format, text);
  std::mt19937 random(7);
  std::vector<std::vector<std::size_t>> cuttings;
  for (std::size_t step : {1, 2, 3, 5, 8, 13, 1000}) cuttings.push_back(every(step, text.size()));
  for (int i = 0; i < 20; ++i) {
    std::vector<std::size_t> cuts;
    for (std::size_t at = 0; at < text.size();) {
      at += 1 + random() % 12;
      cuts.push_back(at);
    }
    cuttings.push_back(cuts);
  }
  for (const auto& cuts : cuttings) {
    const Assembled streamed = stream(format, text, cuts);
    EXPECT_EQ(streamed.content, whole.content) << to_string(format) << ": " << text;
    ASSERT_EQ(streamed.calls.size(), whole.calls.size()) << to_string(format) << ": " << text;
    for (std::size_t i = 0; i < whole.calls.size(); ++i) {
      EXPECT_EQ(streamed.calls[i].name, whole.calls[i].name);
      EXPECT_EQ(streamed.calls[i].arguments, whole.calls[i].arguments);
    }
  }
}

TEST(ToolStreamParser, StreamsAsTheWholeTextParses) {
  const std::string hermes =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Ø \\\"slo\\\"\"}}"
      "\n</tool_call>";
  for (const std::string& text : {
           hermes,
           "Let me look. <tool_call> is how I call.\n" + hermes + "\n" + hermes + "\n\nDone.",
           std::string("<tool_call>{\"arguments\": {\"a\": [1, \"]}\"]}, \"name\": \"f\"}"
                       "</tool_call>"),
           std::string("Hi <tool_call>\n{\"arguments\": {}}\n</tool_call> <tool_"),
           std::string("<tool_call>\n{\"name\": \"f\", \"arguments\": [1]}\n</tool_call>"),
           std::string("no calls at all, < and <tool but no call"),
           std::string("<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool"),
       }) {
    expect_streams_as_whole(ToolCallFormat::hermes, text);
  }
  expect_streams_as_whole(ToolCallFormat::llama3_json,
                          "\n<|python_tag|>{\"name\": \"get_weather\", \"parameters\": "
                          "{\"city\": \"Oslo\"}}; {\"name\": \"f\", \"parameters\": {}}");
  expect_streams_as_whole(ToolCallFormat::llama3_json, "  Plain {\"name\": 1} text");
  expect_streams_as_whole(ToolCallFormat::mistral_v3,
                          "[TOOL_CALLS] [{\"name\": \"a\", \"arguments\": {\"x\": 1.5e3}}, "
                          "{\"name\": \"b\", \"arguments\": {}}]");
  expect_streams_as_whole(ToolCallFormat::mistral_v11,
                          "So [TOOL_CALLS]a[ARGS]{\"x\": true}[TOOL_CALLS]b[ARGS]{}");
  expect_streams_as_whole(ToolCallFormat::functionary,
                          "<function=a>{\"x\": null}</function>\n<function=b>{}</function>");
  expect_streams_as_whole(ToolCallFormat::deepseek,
                          "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>a<｜tool▁sep｜>{\"x\": 1}"
                          "<｜tool▁call▁end｜><｜tool▁calls▁end｜> after");
  expect_streams_as_whole(ToolCallFormat::granite,
                          "<|tool_call|>[{\"name\": \"a\", \"arguments\": {\"x\": \"<|\"}}]");
}

TEST(ToolStreamParser, NameFirstThenArgumentsAsTheyCome) {
  ToolCallStreamParser parser(ToolCallFormat::hermes);
  Assembled out;
  out.add(parser.feed("Hello <tool"));
  EXPECT_EQ(out.content, "Hello ");  // "<tool" may open a call: held back
  out.add(parser.feed("_call>\n{\"name\": \"get_weather\", \"arguments\": {\"ci"));
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(out.calls[0].name, "get_weather");
  EXPECT_EQ(out.calls[0].arguments, "{\"ci");  // sent before the call is over
  out.add(parser.feed("ty\": \"Oslo\"}}\n</tool_call>"));
  out.add(parser.finish());
  EXPECT_EQ(out.calls[0].arguments, "{\"city\": \"Oslo\"}");
  EXPECT_EQ(out.content, "Hello ");
}

TEST(ToolStreamParser, HoldsBackOnlyWhatMayOpenACall) {
  ToolCallStreamParser parser(ToolCallFormat::hermes);
  Assembled out;
  out.add(parser.feed("a <to"));
  EXPECT_EQ(out.content, "a ");
  out.add(parser.feed("y> b"));
  EXPECT_EQ(out.content, "a <toy> b");
  // llama3_json: whitespace that opens the answer waits for what follows it.
  ToolCallStreamParser llama(ToolCallFormat::llama3_json);
  Assembled answer;
  answer.add(llama.feed("\n "));
  EXPECT_EQ(answer.content, "");
  answer.add(llama.feed("Hi {"));
  EXPECT_EQ(answer.content, "\n Hi {");
}

TEST(ToolStreamParser, CallCutByTheEndStaysTheCallSent) {
  ToolCallStreamParser parser(ToolCallFormat::hermes);
  Assembled out;
  out.add(parser.feed("<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1"));
  out.add(parser.finish());
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(out.calls[0].arguments, "{\"a\": 1");
  EXPECT_EQ(out.content, "");
  // Cut before its arguments began: nothing was sent, so it is content.
  ToolCallStreamParser early(ToolCallFormat::hermes);
  Assembled text;
  text.add(early.feed("<tool_call>{\"name\": \"f\""));
  text.add(early.finish());
  EXPECT_TRUE(text.calls.empty());
  EXPECT_EQ(text.content, "<tool_call>{\"name\": \"f\"");
}

// A long argument (a file's text) streamed a few bytes at a time: each piece is scanned
// once (a scan of the whole open call per piece would take minutes here).
TEST(ToolStreamParser, LongArgumentsStreamPieceByPiece) {
  std::string content;  // JSON string text: escaped quotes, brackets, \n
  for (int i = 0; i < 16384; ++i) content += R"(line \")" + std::to_string(i) + R"(\" {[\n)";
  const std::string arguments = R"({"path": "a.txt", "text": ")" + content + R"("})";
  const std::string text =
      "<tool_call>\n{\"name\": \"write\", \"arguments\": " + arguments + "}\n</tool_call>";
  const Assembled streamed = stream(ToolCallFormat::hermes, text, every(3, text.size()));
  ASSERT_EQ(streamed.calls.size(), 1u);
  EXPECT_EQ(streamed.calls[0].arguments, arguments);
  EXPECT_EQ(streamed.content, "");
}

// Random texts of every format's pieces, well-formed or not: no exception, each whole-text
// call's arguments are a JSON object, and the stream gives what the whole parse gives
// unless it sent a call that then broke.
TEST(ToolStreamParser, RandomPiecesNeverThrow) {
  const std::vector<std::string> fragments = {
      "<tool_call>", "</tool_call>", "[TOOL_CALLS]", "[ARGS]", "<|tool_call|>",
      "<function=", "</function>", "<|python_tag|>", "<｜tool▁calls▁begin｜>",
      "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>",
      "{\"name\": \"f\"", "\"arguments\": ", "\"parameters\": ", "{", "}", "[", "]", ",", ":", "\"",
      "\\", " ", "\n", "f", ">", ";", "text", "1", "{\"a\": 1}", "<", "<tool", "[TOOL",
      // whole calls of each format, so that calls are found among the pieces
      R"(<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>)",
      R"({"name": "f", "parameters": {}})", "[TOOL_CALLS]f[ARGS]{}",
      R"([TOOL_CALLS] [{"name": "f", "arguments": {}}])", "<function=f>{}</function>",
      "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜><"
      "｜tool▁calls▁end｜>",
      R"(<|tool_call|>[{"name": "f", "arguments": {}}])"};
  std::mt19937 random(3);
  for (ToolCallFormat format :
       {ToolCallFormat::hermes, ToolCallFormat::llama3_json, ToolCallFormat::mistral_v3,
        ToolCallFormat::mistral_v11, ToolCallFormat::functionary, ToolCallFormat::deepseek,
        ToolCallFormat::granite}) {
    int calls = 0;
    for (int trial = 0; trial < 400; ++trial) {
      std::string text;
      const int pieces = static_cast<int>(random() % 30);
      for (int i = 0; i < pieces; ++i) text += fragments[random() % fragments.size()];
      ParsedToolOutput whole;
      ASSERT_NO_THROW(whole = parse_tool_calls(format, text)) << text;
      calls += static_cast<int>(whole.calls.size());
      for (const ParsedToolCall& call : whole.calls) {
        const auto arguments = nlohmann::json::parse(call.arguments, nullptr, false);
        EXPECT_TRUE(arguments.is_object()) << text;
        EXPECT_FALSE(call.name.empty()) << text;
      }
      std::vector<std::size_t> cuts;
      for (std::size_t at = 0; at < text.size();) cuts.push_back(at += 1 + random() % 6);
      Assembled streamed;
      ASSERT_NO_THROW(streamed = stream(format, text, cuts)) << text;
      // The two part only over a call the stream sent before it broke (kept as a call);
      // with as many calls, they agree on everything.
      EXPECT_GE(streamed.calls.size(), whole.calls.size()) << text;
      if (streamed.calls.size() == whole.calls.size()) {
        EXPECT_EQ(streamed.content, whole.content) << text;
        for (std::size_t i = 0; i < whole.calls.size(); ++i) {
          EXPECT_EQ(streamed.calls[i].name, whole.calls[i].name) << text;
          EXPECT_EQ(streamed.calls[i].arguments, whole.calls[i].arguments) << text;
        }
      }
    }
    EXPECT_GT(calls, 10) << to_string(format);  // the texts do hold calls
  }
}

}  // namespace
}  // namespace tool_stream_parser_test
}  // namespace baton
