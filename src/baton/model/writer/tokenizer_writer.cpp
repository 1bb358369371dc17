#include "baton/model/writer/tokenizer_writer.h"

#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "baton/model/tokenizer/byte_level.h"
#include "baton/model/tokenizer/split_regex.h"

namespace baton {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// Llama 3's pre-tokenizer pattern; Qwen2's differs only in splitting digits one by one.
constexpr const char* kSplitPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Merges stop here, or earlier when no pair occurs twice in the text.
constexpr int kMaxMerges = 320;

// Plain English written for this file, so that the merges are the common English ones
// (" the", "ing", " and") and a demo prompt takes a few tokens per word, not one per byte.
constexpr std::string_view kTrainingText = R"(
The harbour town woke slowly on the first cold morning of the year. Fishing boats rocked
against the stone wall, and the gulls were already shouting over the nets. In the small
bakery on the corner, the baker had been working since four o'clock, and the smell of warm
bread was drifting down the street. Children walked to school in pairs, talking about the
storm that had passed in the night and the trees it had thrown across the road.

At the top of the hill stood the old lighthouse. Nobody had lived there for many years,
but the light still turned every evening, and the keepers of the town said that it would
keep turning for as long as the sea was there to watch. The people who lived nearby were
used to the long beam sweeping over their windows, and some of them said they could not
sleep without it.

The teacher opened the window and looked at the class. "Today we are going to learn how a
machine reads a sentence," she said. "It does not see words the way that you and I do. It
sees small pieces, and it has to learn which pieces belong together. When it has seen the
same two pieces next to each other many times, it joins them into one, and then it looks
for the next pair. After thousands of steps, the most common words are single pieces, and
the rare ones are built from smaller parts."

One of the students raised her hand. "So the machine is counting?" she asked. "That is
right," said the teacher. "It is counting, comparing and joining. There is nothing magic
about it. Anyone with a pencil and enough patience could do the same thing, although it
would take them a very long time."

In the afternoon the wind came back, stronger than before. The harbour master walked along
the pier and checked the ropes of every boat, one after another. He had done this for
thirty years, and he knew which knots would hold and which would slip. When he reached the
end of the pier he stopped for a moment and watched the waves. They were grey and heavy,
and they broke against the rocks with a sound like a distant train.

Later that evening, the families gathered in their kitchens. There was soup on the stove,
there were candles on the tables, and there were stories about other storms, older and
worse than this one. The grandmothers remembered the winter when the sea froze near the
shore, and the grandfathers remembered the summer when the whole town went out in boats to
rescue a ship that had lost its way in the fog.

Questions and answers: What time is it? It is seven o'clock. Where are you going? I'm going
home. Who is there? It's only me. Why don't they come? They said they'll come tomorrow, and
they've promised to bring the letters. How many are there? There are 12 boats, 340 houses
and 1 lighthouse. When does the train leave? At 08:45, from platform 3.

Numbers, lists and code also appear in text: 1, 2, 3, 10, 20, 100, 2024, 3.14; (a + b) * c;
x = y + 1; if (ready) { start(); } else { wait(); } - first item; - second item; "quoted
words", 'single quotes', a/b/c, key: value, name=value, [brackets], #tag, @name, 50% off.

The next morning was calm and bright. The sea was flat again, the boats went out as usual,
and by noon the town had almost forgotten the storm. Only the fallen trees by the road and
a few broken tiles on the roofs showed that anything had happened at all.
)";

struct Family {
  std::vector<std::string> specials;  // in id order, after the vocabulary
  std::optional<std::string> bos;     // config.json's bos_token_id and the tokenizer's
  bool bos_in_tokenizer_config = false;
  std::vector<std::string> eos;  // end of turn, end of text
  std::string eos_token;         // tokenizer_config.json's eos_token
  std::optional<std::string> pad_token;
  std::string chat_template;
};

// ChatML as Qwen2/Qwen3 use it, without their default system message or tool calls.
constexpr const char* kChatMl =
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

// Llama 3's headers, without Llama 3.1's date lines or tool calls.
constexpr const char* kLlama3Chat =
    "{{- bos_token }}"
    "{%- for message in messages %}"
    "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + "
    "message['content'] | trim + '<|eot_id|>' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}";

Family family_of(ModelArch arch) {
  switch (arch) {
    case ModelArch::qwen2:
    case ModelArch::qwen3:
      // As Qwen2.5 and Qwen3: bos_token_id <|endoftext|> in config.json, but no bos_token
      // in tokenizer_config.json, since the chat format starts without one.
      return {{"<|endoftext|>", "<|im_start|>", "<|im_end|>"},
              "<|endoftext|>",
              false,
              {"<|im_end|>", "<|endoftext|>"},
              "<|im_end|>",
              "<|endoftext|>",
              kChatMl};
    case ModelArch::llama:
      return {{"<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
               "<|eot_id|>"},
              "<|begin_of_text|>",
              true,
              {"<|eot_id|>", "<|end_of_text|>"},
              "<|eot_id|>",
              std::nullopt,
              kLlama3Chat};
    case ModelArch::mistral:
      break;
  }
  throw std::invalid_argument("no made-up tokenizer for " + std::string(to_string(arch)) +
                              "; known: llama, qwen2, qwen3");
}

using Merge = std::pair<std::string, std::string>;  // raw bytes of the two symbols

struct Word {
  std::vector<std::string> symbols;  // raw bytes
  int count = 0;
};

std::vector<Word> words_of(std::string_view text) {
  std::map<std::string, int> counts;  // ordered, so that training is deterministic
  for (std::string_view piece : SplitRegex(kSplitPattern).split(text)) ++counts[std::string(piece)];
  std::vector<Word> words;
  for (const auto& [piece, count] : counts) {
    Word w{.symbols = {}, .count = count};
    for (char c : piece) w.symbols.emplace_back(1, c);
    words.push_back(std::move(w));
  }
  return words;
}

// The most frequent adjacent pair; the smallest pair among equals. Count 0 when none.
std::pair<Merge, int> best_pair(const std::vector<Word>& words) {
  std::map<Merge, int> pairs;
  for (const Word& w : words) {
    for (std::size_t i = 0; i + 1 < w.symbols.size(); ++i) {
      pairs[{w.symbols[i], w.symbols[i + 1]}] += w.count;
    }
  }
  std::pair<Merge, int> best{{}, 0};
  for (const auto& [pair, count] : pairs) {
    if (count > best.second) best = {pair, count};
  }
  return best;
}

// Joins each occurrence of `merge`, left to right, as the encoder applies it.
void apply_merge(Word& w, const Merge& merge) {
  std::vector<std::string> joined;
  for (std::size_t i = 0; i < w.symbols.size(); ++i) {
    if (i + 1 < w.symbols.size() && w.symbols[i] == merge.first &&
        w.symbols[i + 1] == merge.second) {
      joined.push_back(w.symbols[i] + w.symbols[i + 1]);
      ++i;
    } else {
      joined.push_back(std::move(w.symbols[i]));
    }
  }
  w.symbols = std::move(joined);
}

// Plain BPE training: count the adjacent pairs over the pre-tokenized text, join the
// most frequent one, repeat.
std::vector<Merge> learn_merges(std::string_view text, int max_merges) {
  std::vector<Word> words = words_of(text);
  std::vector<Merge> merges;
  while (static_cast<int>(merges.size()) < max_merges) {
    const auto [merge, count] = best_pair(words);
    if (count < 2) break;
    for (Word& w : words) apply_merge(w, merge);
    merges.push_back(merge);
  }
  return merges;
}

ordered_json added_token(const std::string& content, TokenId id) {
  return {{"id", id},        {"content", content},  {"single_word", false}, {"lstrip", false},
          {"rstrip", false}, {"normalized", false}, {"special", true}};
}

ordered_json pre_tokenizer() {
  return {{"type", "Sequence"},
          {"pretokenizers",
           {{{"type", "Split"},
             {"pattern", {{"Regex", kSplitPattern}}},
             {"behavior", "Isolated"},
             {"invert", false}},
            {{"type", "ByteLevel"},
             {"add_prefix_space", false},
             {"trim_offsets", true},
             {"use_regex", false}}}}};
}

// The BPE model: the 256 bytes (id = byte value), then each merge's result once.
ordered_json bpe_model(const std::vector<Merge>& merges) {
  ordered_json vocab = ordered_json::object();
  for (int b = 0; b < 256; ++b) vocab[to_byte_level(std::string(1, static_cast<char>(b)))] = b;
  ordered_json merge_list = ordered_json::array();
  for (const Merge& m : merges) {
    const std::string joined = to_byte_level(m.first + m.second);
    if (!vocab.contains(joined)) vocab[joined] = static_cast<TokenId>(vocab.size());
    // An explicit array: a two-element list starting with a string would be an object.
    merge_list.push_back(ordered_json::array({to_byte_level(m.first), to_byte_level(m.second)}));
  }
  return {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", nullptr},
          {"continuing_subword_prefix", nullptr},
          {"end_of_word_suffix", nullptr},
          {"fuse_unk", false},
          {"byte_fallback", false},
          {"ignore_merges", false},
          {"vocab", std::move(vocab)},
          {"merges", std::move(merge_list)}};
}

std::string tokenizer_config(const Family& family, const MadeTokenizer& made) {
  json decoder = json::object();
  for (std::size_t i = 0; i < made.special_ids.size(); ++i) {
    decoder[std::to_string(made.special_ids[i])] = {{"content", made.special_tokens[i]},
                                                    {"lstrip", false},
                                                    {"normalized", false},
                                                    {"rstrip", false},
                                                    {"single_word", false},
                                                    {"special", true}};
  }
  // Sorted keys and two-space indent, as transformers writes it.
  json config = {{"added_tokens_decoder", std::move(decoder)},
                 {"bos_token", family.bos_in_tokenizer_config ? json(*family.bos) : json()},
                 {"chat_template", family.chat_template},
                 {"clean_up_tokenization_spaces", false},
                 {"eos_token", family.eos_token},
                 {"model_max_length", 131072},
                 {"pad_token", family.pad_token ? json(*family.pad_token) : json()},
                 {"tokenizer_class", "PreTrainedTokenizerFast"}};
  return config.dump(2) + "\n";
}

TokenId id_of(const MadeTokenizer& made, const std::string& token) {
  for (std::size_t i = 0; i < made.special_tokens.size(); ++i) {
    if (made.special_tokens[i] == token) return made.special_ids[i];
  }
  throw std::logic_error("special token " + token + " is not in its family's list");
}

}  // namespace

MadeTokenizer make_tokenizer(ModelArch arch) {
  const Family family = family_of(arch);
  const std::vector<Merge> merges = learn_merges(kTrainingText, kMaxMerges);
  ordered_json model = bpe_model(merges);
  MadeTokenizer made;
  made.merge_count = static_cast<std::int64_t>(merges.size());
  ordered_json added = ordered_json::array();
  auto next = static_cast<TokenId>(model["vocab"].size());
  for (const std::string& token : family.specials) {
    added.push_back(added_token(token, next));
    made.special_ids.push_back(next++);
    made.special_tokens.push_back(token);
  }
  made.size = next;
  if (family.bos) made.bos_id = id_of(made, *family.bos);
  for (const std::string& token : family.eos) made.eos_ids.push_back(id_of(made, token));
  const ordered_json tokenizer = {{"version", "1.0"},
                                  {"truncation", nullptr},
                                  {"padding", nullptr},
                                  {"added_tokens", std::move(added)},
                                  {"normalizer", nullptr},
                                  {"pre_tokenizer", pre_tokenizer()},
                                  {"post_processor", nullptr},
                                  {"decoder",
                                   {{"type", "ByteLevel"},
                                    {"add_prefix_space", true},
                                    {"trim_offsets", true},
                                    {"use_regex", true}}},
                                  {"model", std::move(model)}};
  made.tokenizer_json = tokenizer.dump(2) + "\n";
  made.tokenizer_config_json = tokenizer_config(family, made);
  return made;
}

}  // namespace baton
