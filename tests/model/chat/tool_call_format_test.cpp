// Tool-call formats found from published chat templates' texts, and the syntax each
// gives a grammar.
#include "baton/model/chat/tool_call_format.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "baton/model/chat/chat_template.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"

namespace baton {
namespace tool_call_format_test {  // named: the unity build batches test files
namespace {

const std::filesystem::path kTemplateDir =
    std::filesystem::path(BATON_TEST_DATA) / "chat_templates";

std::string template_text(const std::string& name) {
  std::ifstream in(kTemplateDir / (name + ".jinja"));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ToolCallFormat, DetectedFromPublishedTemplates) {
  const std::pair<const char*, ToolCallFormat> expected[] = {
      {"qwen3", ToolCallFormat::hermes},
      {"hermes3-tool-use", ToolCallFormat::hermes},
      {"llama3.2", ToolCallFormat::llama3_json},
      {"mistral-nemo", ToolCallFormat::mistral_v3},
      {"mistral-7b-v0.3", ToolCallFormat::mistral_v3},
      {"functionary-v3.1", ToolCallFormat::functionary},
      {"deepseek-v3.1", ToolCallFormat::deepseek},
      {"granite3.3", ToolCallFormat::granite},
      {"gemma2", ToolCallFormat::generic},
      {"phi3.5", ToolCallFormat::generic},
  };
  for (const auto& [name, format] : expected) {
    const std::string text = template_text(name);
    ASSERT_FALSE(text.empty()) << name;
    EXPECT_EQ(detect_tool_call_format(text), format) << name;
  }
  // Magistral / Devstral / Mistral Small 3.2 write a call as [TOOL_CALLS]name[ARGS]{...}.
  EXPECT_EQ(detect_tool_call_format("{{- '[TOOL_CALLS]' + tool.function.name + '[ARGS]' + "
                                    "tool.function.arguments|tojson }}"),
            ToolCallFormat::mistral_v11);
}

TEST(ToolCallFormat, BuiltInFamiliesAndLoadedTemplates) {
  EXPECT_EQ(tool_call_format_of(ChatFamily::chatml), ToolCallFormat::hermes);
  EXPECT_EQ(tool_call_format_of(ChatFamily::llama3), ToolCallFormat::llama3_json);
  EXPECT_EQ(tool_call_format_of(ChatFamily::mistral), ToolCallFormat::mistral_v3);
  testing::TempDir dir;
  testing::write_file(dir.path() / "chat_template.jinja", template_text("deepseek-v3.1"));
  EXPECT_EQ(load_chat_template(dir.path(), std::nullopt).tool_call_format,
            ToolCallFormat::deepseek);
  EXPECT_EQ(load_chat_template(dir.path(), ChatFamily::llama3).tool_call_format,
            ToolCallFormat::llama3_json);
}

TEST(ToolCallFormat, SyntaxOfEachFormat) {
  for (ToolCallFormat format :
       {ToolCallFormat::hermes, ToolCallFormat::llama3_json, ToolCallFormat::mistral_v3,
        ToolCallFormat::mistral_v11, ToolCallFormat::functionary, ToolCallFormat::deepseek,
        ToolCallFormat::granite, ToolCallFormat::generic}) {
    const ToolCallSyntax& syntax = tool_call_syntax(format);
    EXPECT_EQ(syntax.format, format) << to_string(format);
    EXPECT_FALSE(syntax.trigger.empty()) << to_string(format);
    EXPECT_FALSE(syntax.description.empty()) << to_string(format);
    // A call written canonically opens with the trigger.
    const std::string opening = syntax.block_begin + syntax.call_begin;
    if (format != ToolCallFormat::llama3_json) {
      EXPECT_TRUE(opening.starts_with(syntax.trigger)) << to_string(format);
    }
  }
  EXPECT_EQ(tool_call_syntax(ToolCallFormat::hermes).trigger, "<tool_call>");
  EXPECT_EQ(tool_call_syntax(ToolCallFormat::llama3_json).arguments_key, "parameters");
  EXPECT_EQ(tool_call_syntax(ToolCallFormat::deepseek).name_end, "<｜tool▁sep｜>");
  EXPECT_TRUE(tool_call_syntax(ToolCallFormat::granite).list);
}

}  // namespace
}  // namespace tool_call_format_test
}  // namespace baton
