// LlamaModel::release_host_copies(), what the server does once a chat model's runner holds
// its weights on a GPU: a q8 model (hidden 1024, MLP 4096, 2 layers, vocabulary 16384,
// tied: 42 MiB of its arrays are 2 MiB or more) gives those pages back, host_bytes() and
// the process's RssAnon drop by them, and a CPU runner then refuses the model rather than
// fault on its first read. No test reads a released matrix (it would fault).
#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>

#include "baton/model/cpu/cpu_model_runner.h"
#include "baton/model/llama_model.h"
#include "baton/model/writer/model_writer.h"
#include "process_memory.h"
#include "temp_dir.h"

namespace baton {
namespace host_copy_release_test {
namespace {

using testing::kSanitized;
using testing::rss_anon_bytes;

constexpr std::size_t kMiB = std::size_t{1} << 20;

ModelShape q8_shape() {
  ModelShape s = model_shape("tiny", ModelArch::llama);
  s.vocab_size = 16384;
  s.hidden_size = 1024;
  s.intermediate_size = 4096;
  s.num_layers = 2;
  s.num_heads = 16;
  s.num_kv_heads = 4;
  s.head_dim = 64;
  s.tie_word_embeddings = true;
  return s;
}

// The q8 bytes of every matrix, the embedding once.
std::size_t q8_bytes(const LlamaModel& model) {
  std::size_t total = model.embedding().bytes();
  for (const LlamaModel::Layer& l : model.layers()) {
    for (const WeightMatrix* m : {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down}) {
      total += m->bytes();
    }
  }
  return total;
}

TEST(HostCopyRelease, AQ8ModelOnADeviceGivesItsHostCopyBack) {
  const testing::TempDir dir;
  const ModelShape shape = q8_shape();
  write_model(dir.path(), ModelArch::llama, shape, 11);
  LlamaModel model = LlamaModel::load(
      dir.path(), {.weights = WeightFormat::q8, .threads = 2, .use = WeightUse::upload});
  ASSERT_TRUE(model.embedding().is_q8());
  ASSERT_FALSE(model.host_copies_released());
  // Arrays of 2 MiB or more (all whole pages): the embedding's int8 values (16 MiB) and
  // f32 scales (16384 x 32 x 4 = 2 MiB), each layer's gate, up and down values (4 MiB).
  // q, k, v, o (1 MiB or less) and the MLP's scales (512 KiB) are kept.
  const auto hidden = static_cast<std::size_t>(shape.hidden_size);
  const auto vocab = static_cast<std::size_t>(shape.vocab_size);
  const std::size_t expected = vocab * hidden + vocab * (hidden / 32) * sizeof(float) +
                               static_cast<std::size_t>(shape.num_layers) * 3 * hidden *
                                   static_cast<std::size_t>(shape.intermediate_size);
  const std::size_t q8 = q8_bytes(model);
  const std::size_t host_before = model.host_bytes();
  const std::size_t rss_before = rss_anon_bytes();  // quantizing wrote every page
  const std::size_t released = model.release_host_copies();
  const std::size_t rss_after = rss_anon_bytes();
  const std::size_t host_after = model.host_bytes();
  std::cout << "released " << released << " bytes of " << q8 << " q8 bytes; RssAnon "
            << rss_before / 1024 << " KiB before, " << rss_after / 1024 << " KiB after\n";
  EXPECT_EQ(released, expected);
  EXPECT_EQ(host_before - host_after, expected);
  EXPECT_GE(released, q8 * 3 / 4);
  if (!kSanitized) {
    EXPECT_GE(rss_before - std::min(rss_before, rss_after), released * 9 / 10)
        << "RssAnon " << rss_before / kMiB << " MiB before, " << rss_after / kMiB << " after";
  }
  EXPECT_TRUE(model.host_copies_released());
  EXPECT_EQ(model.release_host_copies(), 0u);  // once
  EXPECT_EQ(model.host_bytes(), host_after);
  EXPECT_EQ(q8_bytes(model), q8);  // the shapes stay readable
  EXPECT_EQ(model.output().format(), WeightFormat::q8);
}

TEST(HostCopyRelease, ACpuRunnerRefusesAReleasedModel) {
  const testing::TempDir dir;
  write_model(dir.path(), ModelArch::llama, model_shape("tiny", ModelArch::llama), 12);
  LlamaModel model = LlamaModel::load(dir.path(), {.weights = WeightFormat::q8, .threads = 1});
  const KvBlockPool pool(model.config(), 8, kMiB);
  { CpuModelRunner unreleased(model, pool); }
  EXPECT_EQ(model.release_host_copies(), 0u);  // every array under 2 MiB: none given back
  ASSERT_TRUE(model.host_copies_released());
  try {
    CpuModelRunner runner(model, pool);
    FAIL() << "a CPU runner was built from a released model";
  } catch (const std::logic_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(dir.path().string()), std::string::npos) << message;
    EXPECT_NE(message.find("released after an upload to a device"), std::string::npos) << message;
  }
}

// Engine threads may read a matrix's shape and the model's host_bytes() while it is
// released (ThreadSanitizer checks this test).
TEST(HostCopyRelease, ShapesAndHostBytesMayBeReadWhileReleasing) {
  const testing::TempDir dir;
  write_model(dir.path(), ModelArch::llama, model_shape("tiny", ModelArch::llama), 13);
  LlamaModel model = LlamaModel::load(dir.path(), {.weights = WeightFormat::q8, .threads = 1});
  std::atomic<bool> done{false};
  std::size_t reads = 0;
  std::thread reader([&] {
    while (!done.load()) {
      reads += model.host_bytes() > 0 && model.output().rows() > 0 && model.output().is_q8();
      reads += model.host_copies_released();
    }
  });
  model.release_host_copies();
  done = true;
  reader.join();
  EXPECT_GT(model.host_bytes(), 0u);  // f32 vectors and arrays under 2 MiB stay
}

}  // namespace
}  // namespace host_copy_release_test
}  // namespace baton
