// A model holds each weight once (llama_model.h): a generated bf16 model of 78 MiB (llama,
// hidden 512, 8 layers, MLP 1536, vocabulary 16384, untied), loaded and run once so that
// every weight read in place is paged in, grows this process's resident memory
// (/proc/self/statm) by at most 1.1 times its weights (plus 8 MiB for the pass's buffers);
// before, the copied weights' pages of the map stayed resident beside the copies (2x).
// And loading and unloading it 20 times gives the memory back: RSS after the 20th unload
// is within 8 MiB of that after the first (a leak of a tenth of the weights a load would
// show as 160 MiB).
#include <gtest/gtest.h>
#include <malloc.h>

#include <iostream>

#include "baton/model/cpu/forward_pass.h"
#include "baton/model/llama_model.h"
#include "baton/model/writer/model_writer.h"
#include "process_memory.h"
#include "temp_dir.h"

namespace baton {
namespace {

using testing::kSanitized;
using testing::rss_bytes;

constexpr std::uint64_t kMiB = 1 << 20;

class ModelMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kSanitized) GTEST_SKIP() << "RSS under a sanitizer is the sanitizer's";
  }
};

ModelShape medium_shape() {
  ModelShape s = model_shape("tiny", ModelArch::llama);
  s.vocab_size = 16384;
  s.hidden_size = 512;
  s.intermediate_size = 1536;
  s.num_layers = 8;
  s.num_heads = 8;
  s.num_kv_heads = 2;
  s.head_dim = 64;
  s.tie_word_embeddings = false;
  return s;
}

// Loads the model, runs a 4-token prompt through it (every matrix read), and returns the
// growth of RSS then and the weights' host bytes.
std::pair<std::uint64_t, std::uint64_t> load_and_run(const std::filesystem::path& dir) {
  const std::uint64_t before = rss_bytes();
  const LlamaModel model = LlamaModel::load(dir, {.threads = 2});
  KvCache cache(model.config(), 8);
  const std::vector<TokenId> prompt{1, 2, 3, 4};
  forward(model, prompt, cache);
  const std::uint64_t after = rss_bytes();
  return {after > before ? after - before : 0, model.host_bytes()};
}

TEST_F(ModelMemory, ResidentMemoryAfterLoadIsTheWeightsOnce) {
  const testing::TempDir dir;
  write_model(dir.path(), ModelArch::llama, medium_shape(), 5);
  const auto [growth, weights] = load_and_run(dir.path());
  EXPECT_GT(weights, 75 * kMiB);
  std::cout << "RSS grew " << growth / kMiB << " MiB for " << weights / kMiB
            << " MiB of weights\n";
  EXPECT_LE(growth, weights * 11 / 10 + 8 * kMiB)
      << "RSS grew " << growth / kMiB << " MiB for " << weights / kMiB << " MiB of weights";
}

TEST_F(ModelMemory, TwentyLoadsAndUnloadsGiveTheMemoryBack) {
  const testing::TempDir dir;
  write_model(dir.path(), ModelArch::llama, medium_shape(), 6);
  load_and_run(dir.path());  // the first: the allocator's arenas, the pool's threads
  const std::uint64_t settled = rss_bytes();
  for (int i = 0; i < 20; ++i) load_and_run(dir.path());
  const std::uint64_t end = rss_bytes();
  EXPECT_LE(end, settled + 8 * kMiB)
      << "RSS " << settled / kMiB << " MiB after one load, " << end / kMiB << " after 21";
}

// What CudaModel does once it has uploaded a model loaded for upload: no bf16 copy on the
// host, and after release_host_pages() neither the map's pages (RSS back to within 8 MiB
// of before the load, host_bytes() only the f32 vectors), the weights still readable.
TEST_F(ModelMemory, AModelLoadedForUploadHoldsNoHostCopyOnceReleased) {
  const testing::TempDir dir;
  write_model(dir.path(), ModelArch::llama, medium_shape(), 7);
  // The earlier tests' freed heap goes back first: the load trims it (malloc_trim), which
  // would otherwise hide the map's pages in the difference below.
  malloc_trim(0);
  const std::uint64_t before = rss_bytes();
  const LlamaModel model = LlamaModel::load(dir.path(), {.threads = 2, .use = WeightUse::upload});
  KvCache cache(model.config(), 8);
  const std::vector<TokenId> prompt{1, 2, 3, 4};
  const std::vector<float> logits = forward(model, prompt, cache);  // every page read
  EXPECT_GT(rss_bytes(), before + model.upload_bytes() / 2);
  model.release_host_pages();
  EXPECT_LE(rss_bytes(), before + 8 * kMiB) << "RSS " << (rss_bytes() - before) / kMiB << " MiB";
  EXPECT_LT(model.host_bytes(), kMiB);
  KvCache again(model.config(), 8);
  EXPECT_EQ(forward(model, prompt, again), logits);  // read back from the file
}

}  // namespace
}  // namespace baton
