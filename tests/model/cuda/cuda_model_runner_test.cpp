// The CUDA model runner against the CPU forward pass (an independent path: f32 activations
// and KV on the host) on random bf16 models of several shapes: every op is exercised by a
// shape that needs it (q/k/v bias, q/k norm, GQA groups of 1 to 7, head_dim 16 to 256, a
// sliding window, prefill chunks through the cuBLAS attention and decode rows through the
// paged kernel, long contexts split along the keys). Tolerance: relative error of each
// sequence's logits below 2e-2 (bf16 activations and KV; the CPU path keeps f32). And the
// reference models (tests/data/models, f32) against transformers' logits (below 3e-2: their
// weights are rounded to bf16 too) and greedy tokens. fp8 weights on the device (E4M3, a
// scale per row) against the CPU's bf16 pass: below 0.15 (3 mantissa bits: each weight
// within 1/16 of itself; a wrong scale or slice is off by the logits themselves). q8
// weights (Q8_0's layout, kept 8-bit on the device) against the CPU's q8 pass: below 3e-2
// (0.008-0.018 measured on an H100).
// Skipped where no CUDA device is visible (CI); run on the GPU machine.
#ifdef BATON_HAVE_CUDA
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "baton/gpu/cuda/cuda_device.h"
#include "baton/model/config/config_reader.h"
#include "baton/model/cpu/cpu_model_runner.h"
#include "baton/model/cuda/cuda_model.h"
#include "baton/model/cuda/cuda_model_runner.h"
#include "baton/model/writer/model_writer.h"
#include "model/safetensors_writer.h"
#include "scoped_env.h"
#include "skip_without_gpu.h"
#include "temp_dir.h"

namespace baton::cuda {
namespace {

constexpr double kTolerance = 2e-2;
// The reference models are f32: rounding their weights to bf16 adds its own error.
constexpr double kReferenceTolerance = 3e-2;
constexpr int kBlockTokens = 16;
constexpr double kFp8Tolerance = 0.15;
// q8 weights: the CPU pass quantizes the activations to 8 bits too, the device keeps them
// bf16 (both read the same weights).
constexpr double kQ8Tolerance = 3e-2;

double relative_error(std::span<const float> ours, std::span<const float> theirs) {
  double diff = 0.0;
  double norm = 0.0;
  for (std::size_t i = 0; i < theirs.size(); ++i) {
    diff += (ours[i] - theirs[i]) * static_cast<double>(ours[i] - theirs[i]);
    norm += theirs[i] * static_cast<double>(theirs[i]);
  }
  return std::sqrt(diff / norm);
}

TokenId argmax(std::span<const float> row) {
  return static_cast<TokenId>(std::max_element(row.begin(), row.end()) - row.begin());
}

// A model on both runners, over one pool's blocks: each sequence has a CPU twin with the
// same block ids (each runner holds its own keys and values).
class BothRunners {
 public:
  BothRunners(const LlamaModel& model, std::size_t kv_bytes = std::size_t{64} << 20)
      : model_(model),
        pool_(model.config(), kBlockTokens, kv_bytes),
        cpu_(model, pool_),
        weights_(std::make_shared<const CudaModel>(model)),
        stream_(device_.create_stream("runner")),
        cuda_(weights_, pool_, dynamic_cast<CudaStream&>(*stream_)) {}

  int add_sequence(int capacity) {
    KvSequence s;
    for (int b = 0; b < (capacity + kBlockTokens - 1) / kBlockTokens; ++b) {
      s.blocks.push_back(*pool_.allocate());
    }
    gpu_sequences_.push_back(s);
    cpu_sequences_.push_back(s);
    return static_cast<int>(gpu_sequences_.size()) - 1;
  }

  struct Results {
    StepResult cpu, cuda;
  };
  // One step: `tokens[i]` go to sequence `which[i]`.
  Results run(const std::vector<int>& which, const std::vector<std::vector<TokenId>>& tokens,
              StepOutput cpu_output, StepOutput gpu_output) {
    StepPlan cpu_plan;
    StepPlan gpu_plan;
    for (std::size_t i = 0; i < which.size(); ++i) {
      cpu_plan.sequences.push_back(
          {tokens[i], &cpu_sequences_[static_cast<std::size_t>(which[i])]});
      gpu_plan.sequences.push_back(
          {tokens[i], &gpu_sequences_[static_cast<std::size_t>(which[i])]});
      cpu_plan.prefills = gpu_plan.prefills = cpu_plan.prefills || tokens[i].size() > 1;
    }
    cpu_plan.output = cpu_output;
    gpu_plan.output = gpu_output;
    Results out;
    const std::shared_ptr<ModelStep> cpu = cpu_.begin(std::move(cpu_plan), 1.0);
    for (int i = 0; i < cpu->layers(); ++i) cpu->run_layer(i);
    cpu->finish();
    out.cpu = cpu->take_output();
    const std::shared_ptr<ModelStep> gpu = cuda_.begin(std::move(gpu_plan), 1.0);
    for (int i = 0; i < gpu->layers(); ++i) {
      // Each layer whole, or each part of the runner's cut in pieces of piece_units_ rows
      // or columns (attention a KV head at a time), as the engine runs a prefill under
      // serialize/op while another engine waits.
      if (piece_units_ == 0) {
        stream_->encode(Op{.run = [gpu, i] { gpu->run_layer(i); }, .bytes = 0});
        continue;
      }
      for (const PartCut& cut : gpu->cut_layer()) {
        const int piece = cut.part == LayerPart::attention ? 1 : piece_units_;  // KV heads
        for (int first = 0; first < cut.units; first += piece) {
          const int count = std::min(piece, cut.units - first);
          stream_->encode(Op{.run = [gpu, i, part = cut.part, first,
                                     count] { gpu->run_piece(i, part, first, count); },
                             .bytes = 0});
        }
      }
    }
    stream_->encode(Op{.run = [gpu] { gpu->finish(); }, .bytes = 0});
    stream_->synchronize();
    out.cuda = gpu->take_output();
    return out;
  }

  struct Outputs {
    std::vector<float> cpu, cuda;
  };
  Outputs step(const std::vector<int>& which, const std::vector<std::vector<TokenId>>& tokens,
               StepOutput output = StepOutput::last_logits) {
    Results r = run(which, tokens, output, output);
    return {.cpu = std::move(r.cpu.values), .cuda = std::move(r.cuda.values)};
  }

  struct Pick {
    TokenId token = 0;
    float logprob = 0.0f;
    bool finite = true;
    float cpu_logprob_of_pick = 0.0f;  // the CPU's log-probability of the device's pick
  };
  // One step with greedy picks on the device: the CPU's picks, and the device's.
  std::pair<std::vector<GreedyToken>, std::vector<Pick>> step_greedy(
      const std::vector<int>& which, const std::vector<std::vector<TokenId>>& tokens) {
    const Results r = run(which, tokens, StepOutput::last_logits, StepOutput::greedy);
    const auto vocab = static_cast<std::size_t>(model_.config().vocab_size);
    std::vector<GreedyToken> cpu_picks;
    std::vector<Pick> picks;
    for (std::size_t s = 0; s < r.cuda.greedy.size(); ++s) {
      const std::span<const float> row(r.cpu.values.data() + s * vocab, vocab);
      const GreedyToken best = greedy_token(row);
      const float norm = row[static_cast<std::size_t>(best.token)] - best.logprob;
      const GreedyToken& g = r.cuda.greedy[s];
      cpu_picks.push_back(best);
      picks.push_back(
          {g.token, g.logprob, g.finite, row[static_cast<std::size_t>(g.token)] - norm});
    }
    return {cpu_picks, picks};
  }

  // Each row of `width` within kTolerance; returns the CPU's argmax of every row.
  std::vector<TokenId> expect_close(const Outputs& out, std::size_t width, const char* what) {
    EXPECT_EQ(out.cuda.size(), out.cpu.size()) << what;
    std::vector<TokenId> next;
    for (std::size_t r = 0; r * width < out.cpu.size(); ++r) {
      const std::span<const float> cpu(out.cpu.data() + r * width, width);
      const std::span<const float> gpu(out.cuda.data() + r * width, width);
      const double error = relative_error(gpu, cpu);
      EXPECT_LT(error, tolerance_) << what << ", row " << r;
      largest_error_ = std::max(largest_error_, error);
      next.push_back(argmax(cpu));
    }
    return next;
  }

  const LlamaModel& model() const { return model_; }
  // The device runner's warm-up, as the engine runs it before its first step.
  void warm_up(int max_rows) {
    ASSERT_TRUE(cuda_.needs_warm_up());
    stream_->encode(Op{.run = [this, max_rows] { cuda_.warm_up(max_rows); }, .bytes = 0});
    stream_->synchronize();
  }
  void cut_layers_into(int units) { piece_units_ = units; }
  void set_tolerance(double tolerance) { tolerance_ = tolerance; }
  double largest_error() const { return largest_error_; }

 private:
  int piece_units_ = 0;
  double tolerance_ = kTolerance;
  double largest_error_ = 0.0;
  const LlamaModel& model_;
  KvBlockPool pool_;
  CpuModelRunner cpu_;
  CudaDevice device_{CommitLimits{.max_ops = 1, .max_bytes = std::size_t{1} << 30}};
  std::shared_ptr<const CudaModel> weights_;
  std::unique_ptr<Stream> stream_;
  CudaModelRunner cuda_;
  std::vector<KvSequence> gpu_sequences_, cpu_sequences_;
};

std::vector<TokenId> tokens_of(int count, int salt, std::int64_t vocab) {
  std::vector<TokenId> t;
  for (int i = 0; i < count; ++i)
    t.push_back(static_cast<TokenId>((i * 37 + salt * 101 + 7) % vocab));
  return t;
}

// A prefill chunk (cuBLAS attention) beside a short prompt (the paged kernel) in one step,
// then decode steps of both.
void prefill_then_decode(BothRunners& both) {
  const auto vocab = static_cast<std::size_t>(both.model().config().vocab_size);
  const int a = both.add_sequence(64);
  const int b = both.add_sequence(64);
  const auto v = static_cast<std::int64_t>(vocab);
  std::vector<TokenId> next = both.expect_close(
      both.step({a, b}, {tokens_of(40, 1, v), tokens_of(5, 2, v)}), vocab, "prefill");
  for (int step = 0; step < 6; ++step) {
    next = both.expect_close(both.step({a, b}, {{next[0]}, {next[1]}}), vocab, "decode");
  }
}

// A long prompt prefilled in chunks after the first (causal offsets), then decode steps
// whose keys the paged kernel splits.
void long_context(BothRunners& both) {
  const auto vocab = static_cast<std::size_t>(both.model().config().vocab_size);
  const auto v = static_cast<std::int64_t>(vocab);
  const int a = both.add_sequence(720);
  const int b = both.add_sequence(720);
  const std::vector<TokenId> prompt = tokens_of(700, 3, v);
  std::vector<TokenId> next;
  for (int first = 0; first < 700; first += 300) {
    const int count = std::min(300, 700 - first);
    next = both.expect_close(
        both.step({a}, {{prompt.begin() + first, prompt.begin() + first + count}}), vocab, "chunk");
  }
  std::vector<TokenId> other =
      both.expect_close(both.step({b}, {tokens_of(3, 4, v)}), vocab, "short");
  for (int step = 0; step < 4; ++step) {
    const std::vector<TokenId> both_next =
        both.expect_close(both.step({a, b}, {{next[0]}, {other[0]}}), vocab, "long decode");
    next = {both_next[0]};
    other = {both_next[1]};
  }
}

// One sequence alone: a prompt, then decode steps of one row (skinny_gemm's products).
void decode_alone(BothRunners& both) {
  const auto vocab = static_cast<std::size_t>(both.model().config().vocab_size);
  const auto v = static_cast<std::int64_t>(vocab);
  const int a = both.add_sequence(64);
  std::vector<TokenId> next =
      both.expect_close(both.step({a}, {tokens_of(9, 5, v)}), vocab, "prefill alone");
  for (int step = 0; step < 6; ++step) {
    next = both.expect_close(both.step({a}, {{next[0]}}), vocab, "one-row decode");
  }
}

struct Shape {
  const char* name;
  ModelArch arch;
  ModelShape shape;
};

ModelShape shape_of(std::int64_t hidden, std::int64_t heads, std::int64_t kv_heads,
                    std::int64_t head_dim, std::int64_t inner) {
  ModelShape s;
  s.vocab_size = 1024;
  s.hidden_size = hidden;
  s.num_heads = heads;
  s.num_kv_heads = kv_heads;
  s.head_dim = head_dim;
  s.intermediate_size = inner;
  s.num_layers = 2;
  return s;
}

class CudaRunnerShapes : public ::testing::TestWithParam<Shape> {
 protected:
  LlamaModel load(DevicePrecision precision = DevicePrecision::bf16,
                  std::optional<WeightFormat> host = std::nullopt) {
    write_model(dir_.path(), GetParam().arch, GetParam().shape, 11);
    return LlamaModel::load(dir_.path(), {.weights = host, .device_precision = precision});
  }
  testing::TempDir dir_;
};

TEST_P(CudaRunnerShapes, PrefillAndDecodeMatchTheCpuPass) {
  SKIP_WITHOUT_GPU();
  const LlamaModel model = load();
  BothRunners both(model);
  prefill_then_decode(both);
}

TEST_P(CudaRunnerShapes, LongContextsMatchTheCpuPass) {
  SKIP_WITHOUT_GPU();
  const LlamaModel model = load();
  BothRunners both(model);
  long_context(both);
}

using testing::ScopedEnv;  // the runner reads its switches when made

// Every layer of the device's steps in pieces of 37 rows (cutting chunks, the paged rows
// and the sequences apart anywhere): the same logits within the same tolerance.
TEST_P(CudaRunnerShapes, LayersInPiecesOfRowsMatchTheCpuPass) {
  SKIP_WITHOUT_GPU();
  const LlamaModel model = load();
  const ScopedEnv rows("BATON_CUDA_WIDE_PIECES", "0");
  BothRunners both(model);
  both.cut_layers_into(37);
  prefill_then_decode(both);
  long_context(both);
}

// The wide cut: every product in pieces of 37 output columns (unaligned, past tile
// edges) and attention one KV head at a time, each piece over all rows.
TEST_P(CudaRunnerShapes, LayersInPiecesOfColumnsAndHeadsMatchTheCpuPass) {
  SKIP_WITHOUT_GPU();
  const LlamaModel model = load();
  BothRunners both(model);
  both.cut_layers_into(37);
  prefill_then_decode(both);
  long_context(both);
}

// fp8 weights: decode rows through decode_gemm_fp8, prefill chunks widened to bf16 for
// cuBLAS, and (cut into columns) each piece's slice widened alone.
TEST_P(CudaRunnerShapes, Fp8WeightsStayNearTheCpuPass) {
  SKIP_WITHOUT_GPU();
  const LlamaModel model = load(DevicePrecision::fp8);
  for (const int piece : {0, 37}) {
    BothRunners both(model);
    both.set_tolerance(kFp8Tolerance);
    both.cut_layers_into(piece);
    prefill_then_decode(both);
    long_context(both);
    std::printf("fp8, pieces of %d: largest relative error %.4f\n", piece, both.largest_error());
  }
}

// Weights the host holds in q8 stay q8 on the device (every matrix but the embedding, in
// the bytes upload_bytes() counts): decode rows through decode_gemm_q8, prefill chunks and
// column pieces widened to bf16 for cuBLAS.
TEST_P(CudaRunnerShapes, Q8WeightsStayQ8AndNearTheCpuPass) {
  SKIP_WITHOUT_GPU();
  const LlamaModel model = load(DevicePrecision::bf16, WeightFormat::q8);
  {
    const CudaModel device(model);
    EXPECT_TRUE(device.eight_bit());
    EXPECT_EQ(device.layers().front().gate_up.format, DeviceFormat::q8_groups);
    EXPECT_EQ(device.bytes(), model.upload_bytes());
  }
  for (const int piece : {0, 37}) {
    BothRunners both(model);
    both.set_tolerance(kQ8Tolerance);
    both.cut_layers_into(piece);
    prefill_then_decode(both);
    long_context(both);
    std::printf("q8, pieces of %d: largest relative error %.4f\n", piece, both.largest_error());
  }
}

// A GGUF file of Q8_0 weights (tests/data/gguf, Qwen2 with q/k/v biases) as it is stored:
// q8 on the host by default and kept q8 on the device.
TEST(CudaRunner, AQ8_0GgufFileStaysQ8AndNearTheCpuPass) {
  SKIP_WITHOUT_GPU();
  const LlamaModel model =
      LlamaModel::load(std::filesystem::path(BATON_TEST_DATA) / "gguf" / "tiny-qwen2-q8_0.gguf");
  {
    const CudaModel device(model);
    EXPECT_EQ(device.layers().front().qkv.format, DeviceFormat::q8_groups);
    EXPECT_EQ(device.bytes(), model.upload_bytes());
  }
  BothRunners both(model);
  both.set_tolerance(kQ8Tolerance);
  prefill_then_decode(both);
  std::printf("Q8_0 GGUF: largest relative error %.4f\n", both.largest_error());
}

// The warm-up at load (every piece shape of up to 300-row chunks, writing keys into the
// pool's first blocks, in a pool too small for the whole warm-up) changes no answer.
TEST_P(CudaRunnerShapes, AWarmedUpRunnerMatchesTheCpuPass) {
  SKIP_WITHOUT_GPU();
  const LlamaModel model = load();
  BothRunners both(model, KvBlockPool::block_bytes(model.config(), kBlockTokens, 4) * 12);
  both.warm_up(300);
  both.cut_layers_into(37);
  prefill_then_decode(both);
}

// The decode attention the key slots replaced (BATON_CUDA_PAGED_SLOTS=0: a warp a key; the
// default's key slots take head sizes 64, 128 and 256, this kernel the others), kept for
// comparisons: the same logits within the same tolerance, rows in one key range and in
// many, layers whole and in pieces.
TEST_P(CudaRunnerShapes, WarpAKeyAttentionMatchesTheCpuPass) {
  SKIP_WITHOUT_GPU();
  const LlamaModel model = load();
  const ScopedEnv slots("BATON_CUDA_PAGED_SLOTS", "0");
  for (const int piece : {0, 37}) {
    BothRunners both(model);
    both.cut_layers_into(piece);
    prefill_then_decode(both);
    long_context(both);
  }
}

// A one-row step's products that make their own input: q/k/v and gate/up norm their own
// row (the default, skinny_gemm.h NormedRow), down makes its own SwiGLU
// (BATON_CUDA_FUSED_SWIGLU=1, ActivatedRow), in bf16, fp8 and q8; and the same with both
// off (the norm and the SwiGLU launched apart): the same logits within each tolerance.
TEST_P(CudaRunnerShapes, ProductsThatMakeTheirOwnInputMatchTheCpuPass) {
  SKIP_WITHOUT_GPU();
  for (const char* fused : {"1", "0"}) {
    SCOPED_TRACE(fused);
    const ScopedEnv norm("BATON_CUDA_FUSED_NORM", fused);
    const ScopedEnv swiglu("BATON_CUDA_FUSED_SWIGLU", fused);
    {
      const LlamaModel model = load();
      BothRunners both(model);
      decode_alone(both);
      prefill_then_decode(both);
    }
    {
      const LlamaModel model = load(DevicePrecision::fp8);
      BothRunners both(model);
      both.set_tolerance(kFp8Tolerance);
      decode_alone(both);
    }
    {
      const LlamaModel model = load(DevicePrecision::bf16, WeightFormat::q8);
      BothRunners both(model);
      both.set_tolerance(kQ8Tolerance);
      decode_alone(both);
    }
  }
}

// The paths kept for comparisons: every launch direct, prefill chunks through cuBLAS.
TEST_P(CudaRunnerShapes, LongContextsMatchWithoutGraphsOrFlash) {
  SKIP_WITHOUT_GPU();
  const LlamaModel model = load();
  const ScopedEnv graphs("BATON_CUDA_GRAPHS", "0");
  const ScopedEnv flash("BATON_CUDA_FLASH", "0");
  BothRunners both(model);
  long_context(both);
}

TEST(CudaRunner, AnInvalidSwitchIsRefusedWithItsName) {
  SKIP_WITHOUT_GPU();
  testing::TempDir dir;
  write_model(dir.path(), ModelArch::llama, shape_of(64, 4, 2, 16, 128), 11);
  const LlamaModel model = LlamaModel::load(dir.path());
  const ScopedEnv graphs("BATON_CUDA_GRAPHS", "yes");
  try {
    BothRunners both(model);
    FAIL() << "a runner was made";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("BATON_CUDA_GRAPHS"), std::string::npos) << e.what();
  }
}

TEST_P(CudaRunnerShapes, HiddenStatesMatchTheCpuPass) {
  SKIP_WITHOUT_GPU();
  const LlamaModel model = load();
  BothRunners both(model);
  const auto v = model.config().vocab_size;
  const int a = both.add_sequence(48);
  const int b = both.add_sequence(48);
  both.expect_close(
      both.step({a, b}, {tokens_of(33, 5, v), tokens_of(9, 6, v)}, StepOutput::every_hidden),
      static_cast<std::size_t>(model.config().hidden_size), "hidden");
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CudaRunnerShapes,
    ::testing::Values(
        Shape{.name = "llama_d16", .arch = ModelArch::llama, .shape = shape_of(64, 4, 2, 16, 128)},
        Shape{.name = "qwen2_bias", .arch = ModelArch::qwen2, .shape = shape_of(64, 4, 2, 16, 128)},
        Shape{.name = "qwen3_qk_norm",
              .arch = ModelArch::qwen3,
              .shape = shape_of(64, 4, 2, 32, 128)},
        Shape{.name = "llama_group4_d128",
              .arch = ModelArch::llama,
              .shape = shape_of(512, 4, 1, 128, 1024)},
        Shape{.name = "qwen2_group7_d64",
              .arch = ModelArch::qwen2,
              .shape = shape_of(448, 7, 1, 64, 896)},
        Shape{.name = "llama_d256",
              .arch = ModelArch::llama,
              .shape = shape_of(512, 2, 1, 256, 1024)}),
    [](const ::testing::TestParamInfo<Shape>& param) { return std::string(param.param.name); });

TEST(CudaRunner, GreedyPicksOnTheDeviceAreTheCpusPicks) {
  SKIP_WITHOUT_GPU();
  testing::TempDir dir;
  write_model(dir.path(), ModelArch::qwen2, shape_of(448, 7, 1, 64, 896), 14);
  const LlamaModel model = LlamaModel::load(dir.path());
  BothRunners both(model);
  const auto v = model.config().vocab_size;
  std::vector<int> which;
  std::vector<std::vector<TokenId>> tokens;
  for (int s = 0; s < 12; ++s) {
    which.push_back(both.add_sequence(64));
    tokens.push_back(tokens_of(s % 3 == 0 ? 30 : 1 + s, s + 20, v));
  }
  const auto [cpu, gpu] = both.step_greedy(which, tokens);
  ASSERT_EQ(gpu.size(), tokens.size());
  for (std::size_t s = 0; s < gpu.size(); ++s) {
    EXPECT_TRUE(gpu[s].finite);
    // bf16 activations may swap two nearly equal logits: then the CPU's pick is a near-tie.
    if (gpu[s].token != cpu[s].token) {
      EXPECT_LT(cpu[s].logprob - gpu[s].cpu_logprob_of_pick, 0.05f) << "sequence " << s;
    }
    EXPECT_NEAR(gpu[s].logprob, cpu[s].logprob, 0.05f) << "sequence " << s;
  }
}

TEST(CudaRunner, ASlidingWindowMatchesTheCpuPass) {
  SKIP_WITHOUT_GPU();
  testing::TempDir dir;
  write_model(dir.path(), ModelArch::llama, shape_of(64, 4, 2, 16, 128), 12);
  ModelConfig config = read_model_config(dir.path());
  config.sliding_window = 8;
  const LlamaModel model(config, ModelWeights::open(dir.path()));
  BothRunners both(model);
  prefill_then_decode(both);
}

TEST(CudaRunner, AnUnsupportedGroupIsRefusedWithItsSize) {
  SKIP_WITHOUT_GPU();
  testing::TempDir dir;
  write_model(dir.path(), ModelArch::llama, shape_of(64, 16, 1, 4, 128), 13);
  const LlamaModel model = LlamaModel::load(dir.path());
  KvBlockPool pool(model.config(), kBlockTokens, std::size_t{1} << 20);
  CudaDevice device;
  auto stream = device.create_stream("s");
  try {
    CudaModelRunner runner(std::make_shared<const CudaModel>(model), pool,
                           dynamic_cast<CudaStream&>(*stream));
    FAIL() << "a group of 16 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("not 16"), std::string::npos) << e.what();
  }
}

// transformers' logits (f32 weights, here rounded to bf16) and greedy tokens.
class CudaReference : public ::testing::TestWithParam<const char*> {};

TEST_P(CudaReference, LogitsAndGreedyTokensMatchTransformers) {
  SKIP_WITHOUT_GPU();
  const auto dir = std::filesystem::path(BATON_TEST_DATA) / "models" / GetParam();
  const LlamaModel model = LlamaModel::load(dir);
  std::ifstream in(dir / "reference.json");
  const auto ref = nlohmann::json::parse(in);
  const auto prompt = ref["tokens"].get<std::vector<TokenId>>();
  const auto logits = ref["logits"].get<std::vector<std::vector<float>>>();
  const auto greedy = ref["greedy"].get<std::vector<TokenId>>();
  BothRunners both(model);
  const int s = both.add_sequence(64);
  std::vector<float> last;
  for (std::size_t t = 0; t < prompt.size(); ++t) {
    last = both.step({s}, {{prompt[t]}}).cuda;
    EXPECT_LT(relative_error(last, logits[t]), kReferenceTolerance)
        << GetParam() << " position " << t;
  }
  // Teacher-forced on transformers' greedy tokens: each argmax is transformers' next token,
  // or a near-tie (its logit within 1% of the logits' range of the best).
  int exact = 0;
  for (std::size_t i = 0; i < greedy.size(); ++i) {
    const auto [low, high] = std::minmax_element(last.begin(), last.end());
    const float best = *high;
    const float theirs = last[static_cast<std::size_t>(greedy[i])];
    if (argmax(last) == greedy[i]) {
      ++exact;
    } else {
      EXPECT_LT(best - theirs, 0.01f * (best - *low)) << GetParam() << " token " << i;
    }
    last = both.step({s}, {{greedy[i]}}).cuda;
  }
  EXPECT_GE(exact, static_cast<int>(greedy.size()) - 3) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Architectures, CudaReference,
                         ::testing::Values("llama", "qwen2", "qwen3", "mistral"));

}  // namespace
}  // namespace baton::cuda
#endif  // BATON_HAVE_CUDA
