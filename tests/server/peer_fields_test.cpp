// The chat call's field names as Anthropic's Messages and the Responses API name them (a
// tool's schema error found when the grammar compiles), and an error renamed so.
#include "baton/server/api/peer_fields.h"

#include <gtest/gtest.h>

namespace baton::peer_fields_test {
namespace {

TEST(PeerFields, ChatFieldsAsAnthropicNamesThem) {
  EXPECT_EQ(anthropic_param("tools[3].function.parameters"), "tools[3].input_schema");
  EXPECT_EQ(anthropic_param("tools[12].function.parameters.properties"),
            "tools[12].input_schema.properties");
  EXPECT_EQ(anthropic_param("tools[0].function.name"), "tools[0].name");
  EXPECT_EQ(anthropic_param("response_format.json_schema.schema"), "output_config.format.schema");
  EXPECT_EQ(anthropic_param("tools"), "tools");
  EXPECT_EQ(anthropic_param("messages"), "messages");
}

TEST(PeerFields, ChatFieldsAsTheResponsesApiNamesThem) {
  EXPECT_EQ(responses_param("tools[3].function.parameters"), "tools[3].parameters");
  EXPECT_EQ(responses_param("tools[3].function.parameters.type"), "tools[3].parameters.type");
  EXPECT_EQ(responses_param("tools[1].function.name"), "tools[1].name");
  EXPECT_EQ(responses_param("response_format.json_schema.schema"), "text.format.schema");
  EXPECT_EQ(responses_param("messages"), "input");
  EXPECT_EQ(responses_param("tools"), "tools");
}

TEST(PeerFields, ARenamedErrorKeepsItsStatusCodeAndRetryAndQuotesTheNewName) {
  ApiError error(400, "'tools[0].function.name' is required; tools[0].function.name is bare",
                 "invalid_request_error", "invalid_schema", "tools[0].function.name");
  error.with_retry_after(3);
  const ApiError renamed = renamed_error(error, "tools[0].name");
  EXPECT_EQ(renamed.param(), "tools[0].name");
  EXPECT_EQ(std::string(renamed.what()),
            "'tools[0].name' is required; tools[0].function.name is bare");
  EXPECT_EQ(renamed.status(), 400);
  EXPECT_EQ(renamed.code(), "invalid_schema");
  EXPECT_EQ(renamed.type(), "invalid_request_error");
  EXPECT_EQ(renamed.retry_after_s(), 3);
}

}  // namespace
}  // namespace baton::peer_fields_test
