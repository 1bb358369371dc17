// The checks of a request's tools: each refusal names the field, as the server's 400
// `param` does.
#include "baton/model/chat/chat_tools.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace baton {
namespace chat_tools_test {  // named: the unity build batches test files
namespace {

using nlohmann::ordered_json;

ordered_json weather() {
  return ordered_json::parse(R"({"type": "function", "function": {"name": "get_weather",
      "description": "Weather", "parameters": {"type": "object",
      "properties": {"city": {"type": "string"}}, "required": ["city"]}}})");
}

// The message of the std::invalid_argument; fails the test when there is none.
std::string refusal(const ordered_json& tools) {
  try {
    validate_tools(tools);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no std::invalid_argument for " << tools.dump();
  return {};
}

TEST(ChatTools, ValidToolsPassAndKeepTheirOrder) {
  ordered_json second = weather();
  second["function"]["name"] = "mcp.server:get-time_2";
  second["function"].erase("parameters");  // a function without arguments
  const ChatTools tools = tools_from_json(ordered_json::array({weather(), second}));
  ASSERT_EQ(tools.size(), 2u);
  EXPECT_EQ(tool_names(tools), (std::vector<std::string>{"get_weather", "mcp.server:get-time_2"}));
  // The client's key order survives, for the template's tojson.
  EXPECT_EQ(tools[0]["function"].begin().key(), "name");
  EXPECT_NO_THROW(validate_tools(ordered_json::array()));
}

TEST(ChatTools, EachProblemNamesItsField) {
  EXPECT_NE(refusal(ordered_json::object()).find("'tools' must be a list"), std::string::npos);
  EXPECT_NE(refusal(ordered_json::array({1})).find("'tools[0]' must be an object"),
            std::string::npos);
  ordered_json t = weather();
  t.erase("type");
  EXPECT_NE(refusal(ordered_json::array({weather(), t})).find("'tools[1].type' is required"),
            std::string::npos);
  t = weather();
  t["type"] = "retrieval";
  EXPECT_NE(refusal(ordered_json::array({t})).find("'tools[0].type' must be \"function\""),
            std::string::npos);
  t = weather();
  t.erase("function");
  EXPECT_NE(refusal(ordered_json::array({t})).find("'tools[0].function' must be an object"),
            std::string::npos);
  t = weather();
  t["function"].erase("name");
  EXPECT_NE(refusal(ordered_json::array({t})).find("'tools[0].function.name' is required"),
            std::string::npos);
  t["function"]["name"] = "";
  EXPECT_NE(refusal(ordered_json::array({t})).find("'tools[0].function.name' must not be empty"),
            std::string::npos);
  t["function"]["name"] = 7;
  EXPECT_NE(refusal(ordered_json::array({t})).find("'tools[0].function.name' must be a string"),
            std::string::npos);
  t["function"]["name"] = "get weather";
  EXPECT_NE(refusal(ordered_json::array({t})).find("'tools[0].function.name' may hold only"),
            std::string::npos);
  t["function"]["name"] = std::string(65, 'a');
  EXPECT_NE(refusal(ordered_json::array({t})).find("at most 64"), std::string::npos);
  t = weather();
  t["function"]["description"] = 3;
  EXPECT_NE(
      refusal(ordered_json::array({t})).find("'tools[0].function.description' must be a string"),
      std::string::npos);
}

TEST(ChatTools, ParametersMustBeAnObjectSchema) {
  ordered_json t = weather();
  t["function"]["parameters"] = "{}";
  EXPECT_NE(refusal(ordered_json::array({t}))
                .find("'tools[0].function.parameters' must be a JSON Schema object"),
            std::string::npos);
  t["function"]["parameters"] = {{"type", "array"}};
  EXPECT_NE(refusal(ordered_json::array({t}))
                .find("'tools[0].function.parameters.type' must be \"object\""),
            std::string::npos);
  t["function"]["parameters"] = ordered_json::object();  // no type: taken as an object
  EXPECT_NO_THROW(validate_tools(ordered_json::array({t})));
}

TEST(ChatTools, DuplicateNamesAndUnknownChoices) {
  EXPECT_NE(refusal(ordered_json::array({weather(), weather()}))
                .find("'tools[1].function.name' repeats the name 'get_weather'"),
            std::string::npos);
  const ChatTools tools = tools_from_json(ordered_json::array({weather()}));
  EXPECT_NO_THROW(check_tool_choice(tools, "get_weather", "tool_choice.function.name"));
  try {
    check_tool_choice(tools, "get_time", "tool_choice.function.name");
    ADD_FAILURE() << "no std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'tool_choice.function.name'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("'get_time'"), std::string::npos);
  }
}

}  // namespace
}  // namespace chat_tools_test
}  // namespace baton
