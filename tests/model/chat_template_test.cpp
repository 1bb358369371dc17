// Chat templates: the exact prompt of each family, detection from template texts, and
// loading from model directories as transformers 4 and 5 write them.
#include "baton/model/chat/chat_template.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "baton/model/files/model_file_error.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"

namespace baton {
namespace {

using nlohmann::json;
using testing::TempDir;
using testing::write_file;

// Short templates written for these tests, shaped like the published ones of each family
// (the real ones also handle tools, which is beside the point here).
constexpr const char* kChatmlText =
    "{%- if messages[0]['role'] != 'system' %}{{- '<|im_start|>system\\nYou are a helpful "
    "assistant.<|im_end|>\\n' }}{%- endif %}\n"
    "{%- for message in messages %}\n"
    "    {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}\n"
    "{%- endfor %}\n"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}\n";

constexpr const char* kLlama3Text =
    "{% for message in messages %}{% set content = '<|start_header_id|>' + message['role'] + "
    "'<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' %}"
    "{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}"
    "{{ content }}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}";

constexpr const char* kMistralText =
    "{%- if messages[0]['role'] == 'system' %}{%- set system_message = messages[0]['content'] "
    "%}{%- set loop_messages = messages[1:] %}{%- else %}{%- set loop_messages = messages %}"
    "{%- endif %}\n{{- bos_token }}\n{%- for message in loop_messages %}\n"
    "    {%- if message['role'] == 'user' %}{{- '[INST] ' + message['content'] + '[/INST]' }}\n"
    "    {%- else %}{{- ' ' + message['content'] | trim + eos_token }}{%- endif %}\n"
    "{%- endfor %}\n";

// Gemma's turn markers: a family with no built-in renderer (its Jinja runs).
constexpr const char* kGemmaText =
    "{{ bos_token }}{% for message in messages %}{{ '<start_of_turn>' + message['role'] + "
    "'\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}";

ChatTemplate family(ChatFamily f, std::string bos) {
  ChatTemplate t;
  t.family = f;
  t.bos_token = std::move(bos);
  t.source = "test";
  return t;
}
ChatTemplate chatml() { return family(ChatFamily::chatml, ""); }
ChatTemplate llama3() { return family(ChatFamily::llama3, "<|begin_of_text|>"); }
ChatTemplate mistral() { return family(ChatFamily::mistral, "<s>"); }

std::string prompt(const ChatTemplate& t, const std::vector<ChatMessage>& messages) {
  return render(t, messages);
}

// The message of the std::invalid_argument that rendering throws; fails the test if none.
std::string render_error(const ChatTemplate& t, const std::vector<ChatMessage>& messages,
                         ChatEnd end = ChatEnd::open_reply) {
  try {
    render(t, messages, end);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no std::invalid_argument";
  return {};
}

// The message of the ModelFileError that loading `dir` throws; fails the test if none.
std::string load_error(const std::filesystem::path& dir) {
  try {
    load_chat_template(dir, std::nullopt);
  } catch (const ModelFileError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ModelFileError";
  return {};
}

void write_config(const TempDir& dir, const json& config) {
  write_file(dir.path() / "tokenizer_config.json", config.dump(2));
}

const std::vector<ChatMessage> kMultiTurn = {{.role = "system", .content = "Be brief."},
                                             {.role = "user", .content = "Hello"},
                                             {.role = "assistant", .content = "Hi there"},
                                             {.role = "user", .content = "How are you?"}};

TEST(ChatTemplateRender, ChatmlAddsNoDefaultSystemMessage) {
  EXPECT_EQ(prompt(chatml(), {{"user", "Hello"}}),
            "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(prompt(chatml(), {{"system", "Be brief."}, {"user", "Hello"}}),
            "<|im_start|>system\nBe brief.<|im_end|>\n"
            "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplateRender, ChatmlMultiTurnKeepsContentAsIs) {
  std::vector<ChatMessage> messages = kMultiTurn;
  messages[1].content = " Hello\n";  // ChatML templates do not trim
  EXPECT_EQ(prompt(chatml(), messages),
            "<|im_start|>system\nBe brief.<|im_end|>\n"
            "<|im_start|>user\n Hello\n<|im_end|>\n"
            "<|im_start|>assistant\nHi there<|im_end|>\n"
            "<|im_start|>user\nHow are you?<|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(ChatTemplateRender, Llama3) {
  EXPECT_EQ(prompt(llama3(), {{"user", "Hello"}}),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(prompt(llama3(), {{"system", "Be brief."}, {"user", "Hello"}}),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(prompt(llama3(), kMultiTurn),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHow are you?<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplateRender, Llama3TrimsAsPythonStrip) {
  // Jinja's trim is str.strip(): Unicode spaces go too, inner spaces and other multi-byte
  // characters stay, even one whose last byte is that of a space (U+00E0 ends like U+00A0).
  const std::string nbsp = "\xC2\xA0", ideographic_space = "\xE3\x80\x80";
  const std::string line_separator = "\xE2\x80\xA8", a_grave = "\xC3\xA0";
  const std::string content = " \t\n" + nbsp + ideographic_space + "voil" + a_grave + "  l" +
                              a_grave + line_separator + "\r\n";
  EXPECT_EQ(prompt(llama3(), {{"user", content}}),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nvoil" + a_grave + "  l" +
                a_grave + "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(prompt(llama3(), {{"user", " \n "}}),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplateRender, MistralV3) {
  EXPECT_EQ(prompt(mistral(), {{"user", "Hello"}}), "<s>[INST] Hello[/INST]");
  EXPECT_EQ(prompt(mistral(), {{"system", "Be brief."}, {"user", "Hello"}}),
            "<s>[INST] Be brief.\n\nHello[/INST]");
  // The system message goes to the last user message; assistant content is trimmed.
  std::vector<ChatMessage> messages = kMultiTurn;
  messages[2].content = "  Hi there \n";
  EXPECT_EQ(prompt(mistral(), messages),
            "<s>[INST] Hello[/INST] Hi there</s>[INST] Be brief.\n\nHow are you?[/INST]");
}

TEST(ChatTemplateRender, MistralDropsTheSystemMessageWhenTheAssistantSpeaksLast) {
  // As v3's template: the system text is emitted only with a user message that is last.
  EXPECT_EQ(prompt(mistral(), {{"system", "Be brief."}, {"user", "Hello"}, {"assistant", "Hi"}}),
            "<s>[INST] Hello[/INST] Hi</s>");
}

TEST(ChatTemplateRender, MistralRolesMustAlternate) {
  const std::string alternate =
      "conversation roles must alternate user/assistant/user/assistant/...";
  EXPECT_NE(render_error(mistral(), {{"user", "a"}, {"user", "b"}}).find(alternate),
            std::string::npos);
  EXPECT_NE(render_error(mistral(), {{"assistant", "a"}}).find(alternate), std::string::npos);
  EXPECT_NE(render_error(mistral(), {{"system", "s"}, {"assistant", "a"}}).find(alternate),
            std::string::npos);
  EXPECT_NE(render_error(mistral(), {{"user", "a"}, {"system", "s"}}).find("first message"),
            std::string::npos);
  // The other families accept any order.
  EXPECT_NO_THROW(prompt(chatml(), {{"user", "a"}, {"user", "b"}}));
  EXPECT_NO_THROW(prompt(llama3(), {{"user", "a"}, {"user", "b"}}));
}

TEST(ChatTemplateRender, UnknownRoleAndEmptyConversation) {
  for (const ChatTemplate& t : {chatml(), llama3(), mistral()}) {
    EXPECT_NE(render_error(t, {{"user", "a"}, {"function", "42"}}).find("'function'"),
              std::string::npos)
        << to_string(t.family);
    EXPECT_NE(render_error(t, {}).find("at least one message"), std::string::npos);
  }
}

TEST(ChatTemplateFamily, DetectedFromTemplateTexts) {
  EXPECT_EQ(detect_chat_family(kChatmlText), ChatFamily::chatml);
  EXPECT_EQ(detect_chat_family(kLlama3Text), ChatFamily::llama3);
  EXPECT_EQ(detect_chat_family(kMistralText), ChatFamily::mistral);
  EXPECT_EQ(detect_chat_family(kGemmaText), std::nullopt);
  // Llama 2: [INST] with a <<SYS>> block, which Mistral v3's rendering would get wrong.
  EXPECT_EQ(detect_chat_family("{{ '[INST] <<SYS>>\\n' + system + '\\n<</SYS>>\\n\\n' }}"),
            std::nullopt);
  EXPECT_EQ(detect_chat_family(""), std::nullopt);
}

TEST(ChatTemplateFamily, NamesAndAliases) {
  EXPECT_EQ(parse_chat_family("chatml"), ChatFamily::chatml);
  EXPECT_EQ(parse_chat_family("qwen"), ChatFamily::chatml);
  EXPECT_EQ(parse_chat_family("llama3"), ChatFamily::llama3);
  EXPECT_EQ(parse_chat_family("mistral"), ChatFamily::mistral);
  for (ChatFamily f : {ChatFamily::chatml, ChatFamily::llama3, ChatFamily::mistral}) {
    EXPECT_EQ(parse_chat_family(to_string(f)), f);
  }
  try {
    parse_chat_family("gemma");
    ADD_FAILURE() << "no std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'gemma'"), std::string::npos) << what;
    EXPECT_NE(what.find("chatml"), std::string::npos) << what;
    EXPECT_NE(what.find("llama3"), std::string::npos) << what;
    EXPECT_NE(what.find("mistral"), std::string::npos) << what;
  }
}

TEST(ChatTemplateLoad, StringInTokenizerConfig) {
  TempDir dir;
  write_config(dir, {{"bos_token", "<|begin_of_text|>"}, {"chat_template", kLlama3Text}});
  const ChatTemplate t = load_chat_template(dir.path(), std::nullopt);
  ASSERT_NE(t.jinja, nullptr);  // the model's own template, run as Jinja
  EXPECT_EQ(t.bos_token, "<|begin_of_text|>");
  EXPECT_EQ(t.source, (dir.path() / "tokenizer_config.json").string());
  // It renders what the built-in family renders for plain messages.
  EXPECT_EQ(prompt(t, kMultiTurn), prompt(llama3(), kMultiTurn));
}

TEST(ChatTemplateLoad, ListInTokenizerConfigUsesDefault) {
  TempDir dir;
  write_config(
      dir, {{"bos_token", "<s>"},
            {"chat_template", json::array({{{"name", "tool_use"}, {"template", kGemmaText}},
                                           {{"name", "default"}, {"template", kMistralText}}})}});
  const ChatTemplate t = load_chat_template(dir.path(), std::nullopt);
  ASSERT_NE(t.jinja, nullptr);
  EXPECT_EQ(t.bos_token, "<s>");
  EXPECT_EQ(prompt(t, {{"user", "Hi"}}), "<s>[INST] Hi[/INST]");  // the default, not Gemma's
}

TEST(ChatTemplateLoad, ListWithoutDefaultIsAnError) {
  TempDir dir;
  write_config(dir,
               {{"chat_template", json::array({{{"name", "rag"}, {"template", kMistralText}}})}});
  EXPECT_NE(load_error(dir.path()).find("no template named 'default'"), std::string::npos);
}

TEST(ChatTemplateLoad, JinjaFileWinsOverTokenizerConfig) {
  TempDir dir;
  write_config(dir, {{"bos_token", nullptr}, {"chat_template", kLlama3Text}});
  write_file(dir.path() / "chat_template.jinja", kChatmlText);
  const ChatTemplate t = load_chat_template(dir.path(), std::nullopt);
  EXPECT_EQ(t.bos_token, "");
  EXPECT_EQ(t.source, (dir.path() / "chat_template.jinja").string());
  EXPECT_EQ(prompt(t, {{"user", "Hi"}}).rfind("<|im_start|>system\n", 0), 0u);
}

TEST(ChatTemplateLoad, JinjaFileAloneAndBosAsAnObject) {
  // transformers 5 writes the template beside a config without it; older configs write
  // special tokens as AddedToken objects.
  TempDir dir;
  write_config(dir,
               {{"bos_token", {{"__type", "AddedToken"}, {"content", "<s>"}, {"lstrip", false}}}});
  write_file(dir.path() / "chat_template.jinja", kMistralText);
  const ChatTemplate t = load_chat_template(dir.path(), std::nullopt);
  EXPECT_EQ(t.bos_token, "<s>");
  EXPECT_EQ(prompt(t, {{"user", "Hi"}}), "<s>[INST] Hi[/INST]");
}

TEST(ChatTemplateLoad, OverrideNeedsNoTemplate) {
  TempDir empty;
  const ChatTemplate bare = load_chat_template(empty.path(), ChatFamily::chatml);
  EXPECT_EQ(bare.family, ChatFamily::chatml);
  EXPECT_EQ(bare.bos_token, "");
  EXPECT_EQ(bare.source, "--chat-template flag");

  // The flag wins over the model's own template; the bos token still comes from the model.
  TempDir dir;
  write_config(dir, {{"bos_token", "<|begin_of_text|>"}, {"chat_template", kGemmaText}});
  const ChatTemplate t = load_chat_template(dir.path(), ChatFamily::llama3);
  EXPECT_EQ(t.family, ChatFamily::llama3);
  EXPECT_EQ(t.bos_token, "<|begin_of_text|>");
  EXPECT_EQ(t.source, "--chat-template flag");
}

TEST(ChatTemplateLoad, AnyFamilyRunsAndABrokenTemplateNamesTheFileAndLine) {
  TempDir dir;
  write_config(dir, {{"bos_token", "<bos>"}, {"chat_template", kGemmaText}});
  EXPECT_EQ(prompt(load_chat_template(dir.path(), std::nullopt), {{"user", "Hi "}}),
            "<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n");

  write_file(dir.path() / "chat_template.jinja", "{% for m in messages %}\n{{ m.content }\n");
  const std::string what = load_error(dir.path());
  EXPECT_EQ(what.rfind((dir.path() / "chat_template.jinja").string() + ": ", 0), 0u) << what;
  EXPECT_NE(what.find("line 2"), std::string::npos) << what;
  EXPECT_NE(what.find("--chat-template"), std::string::npos) << what;
}

TEST(ChatTemplateRender, AFinalAssistantMessageIsContinuedAsTransformersDoes) {
  TempDir dir;
  write_config(dir, {{"bos_token", "<bos>"}, {"chat_template", kGemmaText}});
  const ChatTemplate t = load_chat_template(dir.path(), std::nullopt);
  // The template trims the message: the cut goes after its stripped text.
  const std::vector<ChatMessage> prefill = {{.role = "user", .content = "Hi"},
                                            {.role = "assistant", .content = "Sure, "}};
  EXPECT_EQ(render(t, prefill, ChatEnd::continue_last),
            "<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>assistant\nSure,");
  EXPECT_EQ(render(t, prefill, ChatEnd::as_is),
            "<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>assistant\nSure,"
            "<end_of_turn>\n");
  const std::vector<ChatMessage> user_last = {{.role = "user", .content = "Hi"}};
  EXPECT_NE(render_error(t, user_last, ChatEnd::continue_last).find("final assistant"),
            std::string::npos);
  // The built-in families always open the reply.
  EXPECT_NE(render_error(llama3(), prefill, ChatEnd::continue_last).find("always opens"),
            std::string::npos);
}

TEST(ChatTemplateRender, WhatTheModelsTemplateRefusesIsTheRequestsError) {
  TempDir dir;
  write_file(dir.path() / "chat_template.jinja",
             "{% if messages[0].role != 'user' %}{{ raise_exception('Conversation must start "
             "with the user') }}{% endif %}{{ messages[0].content }}");
  const ChatTemplate t = load_chat_template(dir.path(), std::nullopt);
  EXPECT_NE(render_error(t, {{"assistant", "x"}}).find("Conversation must start with the user"),
            std::string::npos);
  EXPECT_NE(render_error(t, {}).find("at least one message"), std::string::npos);
  const std::vector<ChatMessage> one = {{.role = "user", .content = "x"}};
  EXPECT_EQ(render(t, one, ChatEnd::as_is), "x");
}

// transformers' apply_chat_template passes tools=None and documents=None when a request
// has none: they are defined, and none. Before, they were undefined, and templates that
// loop over tools rendered where transformers raises.
TEST(ChatTemplateRender, ToolsAndDocumentsAreNoneAsTransformersPassesThem) {
  TempDir dir;
  write_file(dir.path() / "chat_template.jinja",
             "{{ tools is defined }} {{ tools is none }} {{ documents is defined }} "
             "{{ documents is none }} {{ add_generation_prompt }}");
  const ChatTemplate t = load_chat_template(dir.path(), std::nullopt);
  EXPECT_EQ(prompt(t, {{"user", "Hi"}}), "True True True True True");
  write_file(dir.path() / "chat_template.jinja",
             "{% for tool in tools %}{{ tool }}{% endfor %}{{ messages[0].content }}");
  EXPECT_THROW(prompt(load_chat_template(dir.path(), std::nullopt), {{"user", "Hi"}}),
               ChatTemplateError);
}

// A template that fails (not one that refuses the conversation by raise_exception) is the
// model's defect: a ChatTemplateError, not the request's std::invalid_argument; and no
// error names the server's directories, only the template's file.
TEST(ChatTemplateRender, ATemplateThatFailsIsTheModelsErrorAndNamesNoPath) {
  TempDir dir;
  write_file(dir.path() / "chat_template.jinja", "x\n{{ messages[0].nothing.deeper }}");
  const ChatTemplate t = load_chat_template(dir.path(), std::nullopt);
  try {
    prompt(t, {{"user", "Hi"}});
    ADD_FAILURE() << "no ChatTemplateError";
  } catch (const ChatTemplateError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find(dir.path().string()), std::string::npos) << what;
    EXPECT_NE(what.find("chat_template.jinja"), std::string::npos) << what;
    EXPECT_NE(what.find("line 2: 'nothing' is undefined"), std::string::npos) << what;
  }
  write_file(dir.path() / "chat_template.jinja", "{{ raise_exception('no system role') }}");
  const std::string refused =
      render_error(load_chat_template(dir.path(), std::nullopt), {{"user", "Hi"}});
  EXPECT_NE(refused.find("no system role"), std::string::npos) << refused;
  EXPECT_EQ(refused.find(dir.path().string()), std::string::npos) << refused;
}

TEST(ChatTemplateLoad, MissingTemplate) {
  TempDir dir;
  write_config(dir, {{"bos_token", "<s>"}});
  const std::string what = load_error(dir.path());
  EXPECT_EQ(what, (dir.path() / "tokenizer_config.json").string() +
                      ": no chat template (neither chat_template in this file nor "
                      "chat_template.jinja); pass --chat-template chatml|llama3|mistral or send "
                      "a raw prompt");
  TempDir empty;
  EXPECT_NE(load_error(empty.path()).find("no chat template"), std::string::npos);
}

TEST(ChatTemplateLoad, MalformedJsonNamesTheFile) {
  TempDir dir;
  write_file(dir.path() / "tokenizer_config.json", R"({"chat_template": "<|im_start|>)");
  const std::string what = load_error(dir.path());
  EXPECT_EQ(what.rfind((dir.path() / "tokenizer_config.json").string() + ": ", 0), 0u) << what;
  // Malformed is malformed even with an override: the bos token could not be read.
  EXPECT_THROW(load_chat_template(dir.path(), ChatFamily::chatml), ModelFileError);

  write_config(dir, {{"chat_template", 42}});
  EXPECT_NE(load_error(dir.path()).find("'chat_template' must be"), std::string::npos);
  write_config(dir, {{"bos_token", 1}, {"chat_template", kChatmlText}});
  EXPECT_NE(load_error(dir.path()).find("'bos_token' must be"), std::string::npos);
}

}  // namespace
}  // namespace baton
