// InputProcessor: the chat template and tokenization that generate and the server share,
// and sampling from the request, then generation_config.json, then greedy.
#include "baton/engine/llm/input_processor.h"

#include <gtest/gtest.h>

#include <fstream>

#include "baton/model/files/model_file_error.h"
#include "model/safetensors_writer.h"
#include "temp_dir.h"

namespace baton {
namespace {

namespace fs = std::filesystem;

class InputProcessorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::copy_file(fs::path(BATON_TEST_DATA) / "tokenizers" / "llama3_style" / "tokenizer.json",
                  dir_.path() / "tokenizer.json");
    tokenizer_.emplace(BpeTokenizer::from_directory(dir_.path()));
  }
  void write_chatml_template() {
    std::ofstream(dir_.path() / "chat_template.jinja")
        << "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
           "{% endfor %}<|im_start|>assistant\n";
  }
  testing::TempDir dir_;
  std::optional<BpeTokenizer> tokenizer_;
};

TEST_F(InputProcessorTest, AChatIsRenderedInTheModelsTemplateThenTokenized) {
  write_chatml_template();
  const InputProcessor input(dir_.path(), *tokenizer_, {});
  const std::vector<ChatMessage> chat = {{.role = "system", .content = "Be brief."},
                                         {.role = "user", .content = "Hello"}};
  const ChatTemplate expected = load_chat_template(dir_.path(), std::nullopt);
  EXPECT_EQ(input.chat_prompt(chat), tokenizer_->encode(render(expected, chat)));
  EXPECT_EQ(input.template_name(), "jinja");
  EXPECT_EQ(input.text_prompt("Hello"), tokenizer_->encode("Hello"));
}

TEST_F(InputProcessorTest, WithoutATemplateRawTextStillWorksAndAChatSaysWhy) {
  const InputProcessor input(dir_.path(), *tokenizer_, {});
  EXPECT_EQ(input.template_name(), "raw");
  EXPECT_EQ(input.text_prompt("Hello"), tokenizer_->encode("Hello"));
  const std::vector<ChatMessage> chat = {{.role = "user", .content = "Hello"}};
  EXPECT_THROW(input.chat_prompt(chat), ModelFileError);
  const InputProcessor forced(dir_.path(), *tokenizer_, {}, ChatFamily::llama3);
  EXPECT_EQ(forced.template_name(), "llama3");
  EXPECT_FALSE(forced.chat_prompt(chat).empty());
}

// A template that is there but does not parse refuses the model at load, naming the file
// and the problem; before, it loaded as a model without a template and every chat got
// "has no chat template".
TEST_F(InputProcessorTest, ATemplateThatDoesNotParseRefusesTheModelAtLoad) {
  std::ofstream(dir_.path() / "chat_template.jinja") << "{% for m in messages %}\n{{ m.content }\n";
  try {
    const InputProcessor input(dir_.path(), *tokenizer_, {});
    ADD_FAILURE() << "loaded; template " << input.template_name();
  } catch (const ModelFileError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("chat_template.jinja"), std::string::npos) << what;
    EXPECT_NE(what.find("line 2"), std::string::npos) << what;
  }
}

TEST_F(InputProcessorTest, SamplingComesFromTheRequestThenTheModelThenGreedy) {
  const InputProcessor greedy(dir_.path(), *tokenizer_, {});
  EXPECT_EQ(greedy.sampling({}).temperature, 0.0);
  EXPECT_EQ(greedy.sampling({}).top_p, 1.0);

  GenerationDefaults model;
  model.do_sample = true;
  model.temperature = 0.7;
  model.top_p = 0.8;
  model.top_k = 20;
  model.repetition_penalty = 1.05;
  const InputProcessor sampled(dir_.path(), *tokenizer_, model);
  const SamplingParams from_model = sampled.sampling({});
  EXPECT_EQ(from_model.temperature, 0.7);
  EXPECT_EQ(from_model.top_p, 0.8);
  EXPECT_EQ(from_model.top_k, 20);
  EXPECT_EQ(from_model.repetition_penalty, 1.05);
  SamplingRequest request;
  request.temperature = 0.0;
  request.top_k = 5;
  request.seed = 9;
  const SamplingParams from_request = sampled.sampling(request);
  EXPECT_EQ(from_request.temperature, 0.0);
  EXPECT_EQ(from_request.top_k, 5);
  EXPECT_EQ(from_request.top_p, 0.8);
  EXPECT_EQ(from_request.seed, 9u);
}

// The server's configured defaults for the model sit between the request and the model's
// generation_config.json: one resolver for both (the router no longer merges them first).
TEST_F(InputProcessorTest, TheServersDefaultsComeAfterTheRequestAndBeforeTheModel) {
  GenerationDefaults model;
  model.do_sample = true;
  model.temperature = 0.7;
  model.top_p = 0.8;
  const InputProcessor processor(dir_.path(), *tokenizer_, model);
  SamplingRequest configured;
  configured.temperature = 0.3;
  configured.presence_penalty = 0.25;
  configured.seed = 4;
  SamplingRequest request;
  request.seed = 9;
  const SamplingParams p = processor.sampling(request, configured);
  EXPECT_EQ(p.temperature, 0.3);        // configured, over the model's 0.7
  EXPECT_EQ(p.top_p, 0.8);              // the model's, nothing configured
  EXPECT_EQ(p.presence_penalty, 0.25);  // configured, over the neutral 0
  EXPECT_EQ(p.seed, 9u);                // the request's, over the configured 4
  request.temperature = 1.1;
  EXPECT_EQ(processor.sampling(request, configured).temperature, 1.1);
}

TEST_F(InputProcessorTest, PresenceAndFrequencyPenaltiesNeverComeFromTheModel) {
  GenerationDefaults model;
  model.do_sample = true;
  model.repetition_penalty = 1.05;
  const InputProcessor processor(dir_.path(), *tokenizer_, model);
  const SamplingParams unset = processor.sampling({});
  EXPECT_EQ(unset.presence_penalty, 0.0);
  EXPECT_EQ(unset.frequency_penalty, 0.0);
  SamplingRequest request;
  request.presence_penalty = 0.5;
  request.frequency_penalty = -1.25;
  const SamplingParams set = processor.sampling(request);
  EXPECT_EQ(set.presence_penalty, 0.5);
  EXPECT_EQ(set.frequency_penalty, -1.25);
  EXPECT_EQ(set.repetition_penalty, 1.05);  // the others still come from the model
}

}  // namespace
}  // namespace baton
