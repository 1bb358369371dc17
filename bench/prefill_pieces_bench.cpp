// What cutting prefill layers into pieces costs on the GPU (serialize/op cuts them while
// another engine waits, so that it waits for one piece, not a layer).
// Usage: prefill_pieces_bench MODEL_DIR
// An 8192-token prompt in four chunks of 2048 through the CUDA runner, each layer whole
// (one op per layer, as an engine alone runs) or in pieces of P rows, each piece waited for
// before the next is launched (as the engine runs them, timing each for the piece sizer).
// Prints, per piece size, the prompt's time, its ratio to whole layers, the mean time of
// one piece, the fixed cost per piece the ratio implies, and the ratio when the pieces
// are launched back to back, not waited for (what is the kernels' and what the waits').
// Median of 3 prompts.
// With --profile P (0: whole layers) it runs one prompt after a warm-up and brackets only
// the first layer of the last chunk with cudaProfilerStart/Stop, for
// `ncu --profile-from-start off` (scripts/kernel_profile.py sums the kernels).
#include <cuda_profiler_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "baton/host/make_device.h"
#include "baton/model/cuda/cuda_model_runner.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kPrompt = 8192;
constexpr int kChunk = 2048;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Milliseconds of one kPrompt-token prompt in chunks, layers cut in pieces of `piece` rows
// (0: whole layers), each piece waited for when `wait`.
double prompt_ms(baton::cuda::CudaModelRunner& runner, baton::Stream& stream,
                 baton::KvBlockPool& pool, const baton::LlamaModel& model, int piece,
                 bool wait = true, bool profile = false) {
  baton::KvSequence kv;
  for (int b = 0; b < kPrompt / 16; ++b) kv.blocks.push_back(*pool.allocate());
  std::vector<baton::TokenId> prompt;
  for (int i = 0; i < kPrompt; ++i) {
    prompt.push_back(static_cast<baton::TokenId>((i * 31 + 7) % model.config().vocab_size));
  }
  const auto start = Clock::now();
  for (int first = 0; first < kPrompt; first += kChunk) {
    baton::StepPlan plan{
        .sequences = {{{prompt.begin() + first, prompt.begin() + first + kChunk}, &kv}},
        .prefills = true,
        .output = baton::StepOutput::greedy};
    const std::shared_ptr<baton::ModelStep> s = runner.begin(std::move(plan), 1.0);
    for (int layer = 0; layer < s->layers(); ++layer) {
      const bool profiled = profile && layer == 0 && first + kChunk == kPrompt;
      if (profiled) {
        stream.synchronize();
        cudaProfilerStart();
      }
      if (piece == 0) {
        stream.encode(baton::Op{.run = [s, layer] { s->run_layer(layer); }, .bytes = 0});
        stream.commit();
      } else {
        for (int row = 0; row < s->rows(); row += piece) {
          const int count = std::min(piece, s->rows() - row);
          stream.encode(baton::Op{.run = [s, layer, row, count] { s->run_rows(layer, row, count); },
                                  .bytes = 0});
          stream.commit();
          if (wait) stream.synchronize();
        }
      }
      if (profiled) {
        stream.synchronize();
        cudaProfilerStop();
      }
    }
    stream.encode(baton::Op{.run = [s] { s->finish(); }, .bytes = 0});
    stream.synchronize();
    (void)s->take_output();
  }
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  for (const baton::BlockId b : kv.blocks) pool.release(b);
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  const bool profile = argc == 4 && std::string_view(argv[2]) == "--profile";
  if (argc != 2 && !profile) {
    std::fprintf(stderr, "usage: prefill_pieces_bench MODEL_DIR [--profile ROWS]\n");
    return 2;
  }
  const baton::LlamaModel model = baton::LlamaModel::load(argv[1]);
  baton::KvBlockPool pool(model.config(), 16, std::size_t{4} << 30);
  auto device = baton::make_device("cuda");
  auto stream = device->create_stream("runner");
  baton::cuda::CudaModelRunner runner(std::make_shared<const baton::cuda::CudaModel>(model), pool,
                                      dynamic_cast<baton::cuda::CudaStream&>(*stream));
  const int layers = static_cast<int>(model.layers().size());
  (void)prompt_ms(runner, *stream, pool, model, 0);  // warm-up
  if (profile) {
    const int piece = std::atoi(argv[3]);
    (void)prompt_ms(runner, *stream, pool, model, piece);
    std::printf("profiled: layer 0 of the last chunk, %s\n",
                piece == 0 ? "whole" : (std::to_string(piece) + "-row pieces").c_str());
    (void)prompt_ms(runner, *stream, pool, model, piece, true, true);
    return 0;
  }
  std::vector<double> runs;
  for (int i = 0; i < 3; ++i) runs.push_back(prompt_ms(runner, *stream, pool, model, 0));
  const double whole = median(runs);
  std::printf(
      "%d-token prompt in chunks of %d, %d layers: whole layers %.1f ms (%.2f ms a "
      "layer)\n\n",
      kPrompt, kChunk, layers, whole, whole / (kPrompt / kChunk * layers));
  std::printf("%8s %12s %10s %14s %18s %16s\n", "piece", "prompt ms", "x whole", "ms a piece",
              "fixed ms a piece", "x whole, no wait");
  for (const int piece : {64, 128, 256, 512, 1024, 2048}) {
    (void)prompt_ms(runner, *stream, pool, model, piece);  // the new shapes' warm-up
    runs.clear();
    for (int i = 0; i < 3; ++i) runs.push_back(prompt_ms(runner, *stream, pool, model, piece));
    const double ms = median(runs);
    runs.clear();
    for (int i = 0; i < 3; ++i) {
      runs.push_back(prompt_ms(runner, *stream, pool, model, piece, /*wait=*/false));
    }
    const double pieces = static_cast<double>(kPrompt / piece) * layers;
    std::printf("%8d %12.1f %10.2f %14.3f %18.3f %16.2f\n", piece, ms, ms / whole, ms / pieces,
                (ms - whole) / pieces, median(runs) / whole);
  }
  return 0;
}
