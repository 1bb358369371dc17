// What cutting prefill layers into pieces costs on the GPU (serialize/op cuts them while
// another engine waits, so that it waits for one piece, not a layer), per cut and size.
// Usage: prefill_pieces_bench MODEL_DIR [--profile whole|rows:P|wide:C]
// An 8192-token prompt in four chunks of 2048 through the CUDA runner, each layer whole
// (one op per layer, as an engine alone runs) or in pieces, each piece waited for before
// the next is launched (as the engine ran them) or queued behind the one before (as it runs
// them now: "queued"):
// - rows P: pieces of P rows (every product re-reads its weights, attention its keys);
// - columns C: each product in pieces of C output columns and attention one KV head a
//   piece, all over the chunk's 2048 rows;
// - hold B: the engine's own pieces (LayerPieces: the runner's cut, sized by PieceSizer
//   to B ms, small parts packed; queued, to B/2 ms), its sizer warmed by one prompt.
// Prints the prompt's time, its ratio to whole layers, the mean and longest piece. Median
// of 3 prompts. With --profile it runs one prompt after a warm-up and brackets only the
// first layer of the last chunk with cudaProfilerStart/Stop, for `ncu --profile-from-start
// off` (scripts/kernel_profile.py sums the kernels).
#include <cuda_profiler_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "baton/engine/llm/layer_pieces.h"
#include "baton/engine/llm/piece_clock.h"
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

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Pieces {
  int count = 0;
  double longest_ms = 0.0;
};

// Runs one piece (its segments of parts) and waits for it; returns its time.
double run_piece(baton::Stream& stream, const std::shared_ptr<baton::ModelStep>& step, int layer,
                 std::vector<baton::PieceSegment> piece, Pieces& pieces) {
  const auto start = Clock::now();
  stream.encode(baton::piece_op(step, layer, std::move(piece)));
  stream.synchronize();
  const double ms = ms_since(start);
  ++pieces.count;
  pieces.longest_ms = std::max(pieces.longest_ms, ms);
  return ms;
}

// How a layer is run: whole, or in pieces (each waited for, counted in `pieces`).
using LayerCutter = std::function<void(baton::Stream&, const std::shared_ptr<baton::ModelStep>&,
                                       int layer, std::size_t context, Pieces& pieces)>;

void whole(baton::Stream& stream, const std::shared_ptr<baton::ModelStep>& s, int layer,
           std::size_t /*context*/, Pieces& /*pieces*/) {
  stream.encode(baton::Op{.run = [s, layer] { s->run_layer(layer); }, .bytes = 0});
  stream.commit();
}

// Pieces queued one behind another, as the engine runs them: each committed, then the one
// before it waited for, timed by the stream's device time (PieceClock).
class QueuedPieces {
 public:
  QueuedPieces(baton::Stream& stream, Pieces& pieces)
      : stream_(stream), pieces_(pieces), clock_(idle(stream)) {}
  // Queues `piece` and returns what completed meanwhile (the piece before it, mostly).
  baton::PieceClock::Completed add(const std::shared_ptr<baton::ModelStep>& step, int layer,
                                   std::vector<baton::PieceSegment> piece) {
    stream_.encode(baton::piece_op(step, layer, piece));
    stream_.commit();
    clock_.committed(std::move(piece));
    stream_.wait_in_flight(1);
    return collect();
  }
  baton::PieceClock::Completed finish() {
    stream_.wait_idle();
    return collect();
  }

 private:
  static baton::Stream& idle(baton::Stream& stream) {
    stream.wait_idle();  // PieceClock times the stream's device time from here on
    return stream;
  }
  baton::PieceClock::Completed collect() {
    baton::PieceClock::Completed done = clock_.take_completed();
    pieces_.count += static_cast<int>(done.pieces);
    if (done.pieces == 1) pieces_.longest_ms = std::max(pieces_.longest_ms, done.ms);
    return done;
  }
  baton::Stream& stream_;
  Pieces& pieces_;
  baton::PieceClock clock_;
};

// Every part in pieces of `units` (rows or columns), attention `heads` KV heads a piece;
// each waited for, or `queued` behind the one before.
LayerCutter fixed_pieces(bool rows, int units, int heads, bool queued = false) {
  return [=](baton::Stream& stream, const std::shared_ptr<baton::ModelStep>& s, int layer,
             std::size_t /*context*/, Pieces& pieces) {
    std::vector<baton::PartCut> parts;
    if (rows) {
      parts.push_back({.part = baton::LayerPart::rows, .units = s->rows(), .align = 1});
    } else {
      parts = s->cut_layer();
    }
    std::optional<QueuedPieces> queue;
    if (queued) queue.emplace(stream, pieces);
    for (const baton::PartCut& cut : parts) {
      const int piece = cut.part == baton::LayerPart::attention ? heads : units;
      for (int first = 0; first < cut.units; first += piece) {
        const baton::PieceSegment segment{
            .kind = cut.part, .first = first, .count = std::min(piece, cut.units - first)};
        if (queue) {
          (void)queue->add(s, layer, {segment});
        } else {
          (void)run_piece(stream, s, layer, {segment}, pieces);
        }
      }
    }
    if (queue) (void)queue->finish();
  };
}

// The engine's pieces for a budget: each waited for (as the engine ran them before), or
// queued behind the one before with half the budget each (LlmEngine::encode_pieces
// without the turn: a hold of `budget_ms` covers the piece running and the one queued).
LayerCutter budget_pieces(baton::PieceSizer& sizer, double budget_ms, bool queued = false) {
  return
      [&sizer, budget_ms, queued](baton::Stream& stream, const std::shared_ptr<baton::ModelStep>& s,
                                  int layer, std::size_t context, Pieces& pieces) {
        baton::LayerPieces walk(sizer, s->cut_layer(), context, queued ? budget_ms / 2 : budget_ms);
        if (!queued) {
          while (!walk.done()) {
            const std::vector<baton::PieceSegment> piece = walk.next();
            walk.record(piece, run_piece(stream, s, layer, piece, pieces));
          }
          return;
        }
        QueuedPieces queue(stream, pieces);
        while (!walk.done()) {
          const baton::PieceClock::Completed done = queue.add(s, layer, walk.next());
          if (done.pieces > 0) walk.record(done.segments, done.ms);
        }
        const baton::PieceClock::Completed done = queue.finish();
        if (done.pieces > 0) walk.record(done.segments, done.ms);
      };
}

struct Bench {
  const baton::LlamaModel& model;
  baton::KvBlockPool& pool;
  baton::Stream& stream;
  baton::cuda::CudaModelRunner& runner;

  // Milliseconds of one kPrompt-token prompt in chunks, each layer run by `cut`.
  double prompt_ms(const LayerCutter& cut, Pieces& pieces, bool profile = false) {
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
        cut(stream, s, layer, static_cast<std::size_t>(first + kChunk), pieces);
        if (profiled) {
          stream.synchronize();
          cudaProfilerStop();
        }
      }
      stream.encode(baton::Op{.run = [s] { s->finish(); }, .bytes = 0});
      stream.synchronize();
      (void)s->take_output();
    }
    const double ms = ms_since(start);
    for (const baton::BlockId b : kv.blocks) pool.release(b);
    return ms;
  }

  // The median of three prompts after one warm-up (new shapes' first launches); the
  // pieces of the three.
  double median_ms(const LayerCutter& cut, Pieces& pieces) {
    Pieces warm_up;
    (void)prompt_ms(cut, warm_up);
    std::vector<double> runs;
    for (int i = 0; i < 3; ++i) runs.push_back(prompt_ms(cut, pieces));
    return median(runs);
  }
};

// whole, rows:P or wide:C (attention a KV head a piece).
LayerCutter parse_cut(std::string_view spec) {
  if (spec == "whole") return whole;
  const std::size_t colon = spec.find(':');
  const int units = std::atoi(std::string(spec.substr(colon + 1)).c_str());
  if (colon == std::string_view::npos || units < 1) return nullptr;
  if (spec.substr(0, colon) == "rows") return fixed_pieces(true, units, 1);
  if (spec.substr(0, colon) == "wide") return fixed_pieces(false, units, 1);
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const bool profile = argc == 4 && std::string_view(argv[2]) == "--profile";
  const LayerCutter profiled = profile ? parse_cut(argv[3]) : nullptr;
  if ((argc != 2 && !profile) || (profile && !profiled)) {
    std::fprintf(stderr, "usage: prefill_pieces_bench MODEL_DIR [--profile whole|rows:P|wide:C]\n");
    return 2;
  }
  const baton::LlamaModel model = baton::LlamaModel::load(argv[1]);
  baton::KvBlockPool pool(model.config(), 16, std::size_t{4} << 30);
  auto device = baton::make_device("cuda");
  auto stream = device->create_stream("runner");
  baton::cuda::CudaModelRunner runner(std::make_shared<const baton::cuda::CudaModel>(model), pool,
                                      dynamic_cast<baton::cuda::CudaStream&>(*stream));
  Bench bench{.model = model, .pool = pool, .stream = *stream, .runner = runner};
  Pieces none;
  (void)bench.prompt_ms(whole, none);  // warm-up
  if (profile) {
    (void)bench.prompt_ms(profiled, none);
    std::printf("profiled: layer 0 of the last chunk, %s\n", argv[3]);
    (void)bench.prompt_ms(profiled, none, true);
    return 0;
  }
  const int layers = static_cast<int>(model.layers().size());
  const double whole_ms = bench.median_ms(whole, none);
  std::printf(
      "%d-token prompt in chunks of %d, %d layers: whole layers %.1f ms (%.2f ms a "
      "layer)\n\n",
      kPrompt, kChunk, layers, whole_ms, whole_ms / (kPrompt / kChunk * layers));
  std::printf("| cut | prompt ms | x whole | pieces a layer | ms a piece | longest ms |\n");
  std::printf("|---|---|---|---|---|---|\n");
  const auto row = [&](const std::string& name, const LayerCutter& cut) {
    Pieces pieces;
    const double ms = bench.median_ms(cut, pieces);
    const double per_layer = pieces.count / (3.0 * kPrompt / kChunk * layers);
    std::printf("| %s | %.1f | %.2f | %.1f | %.3f | %.3f |\n", name.c_str(), ms, ms / whole_ms,
                per_layer, ms / (per_layer * kPrompt / kChunk * layers), pieces.longest_ms);
    std::fflush(stdout);
  };
  for (const int rows : {64, 256, 1024}) {
    row("rows " + std::to_string(rows), fixed_pieces(true, rows, 1));
  }
  for (const int columns : {512, 1024, 2048, 4096}) {
    row("columns " + std::to_string(columns) + ", 1 head", fixed_pieces(false, columns, 1));
  }
  row("columns 4096, 2 heads", fixed_pieces(false, 4096, 2));
  for (const int columns : {1024, 2048, 4096}) {
    row("columns " + std::to_string(columns) + ", 1 head, queued",
        fixed_pieces(false, columns, 1, true));
  }
  for (const bool queued : {false, true}) {
    for (const double budget : {0.5, 1.0, 2.0}) {
      baton::PieceSizer sizer;
      char name[64];
      std::snprintf(name, sizeof name, "engine, hold %.1f ms%s", budget,
                    queued ? ", queued (pieces of half)" : "");
      row(name, budget_pieces(sizer, budget, queued));
    }
  }
  return 0;
}
