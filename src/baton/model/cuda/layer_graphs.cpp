#include "baton/model/cuda/layer_graphs.h"

#include <memory>

#include "baton/gpu/cuda/cuda_error.h"

namespace baton::cuda {
namespace {

struct GraphDeleter {
  void operator()(cudaGraph_t graph) const {
    report_release_failure(cudaGraphDestroy(graph), "cudaGraphDestroy");
  }
};
using GraphOwner = std::unique_ptr<std::remove_pointer_t<cudaGraph_t>, GraphDeleter>;

// Ends a capture that an exception left open, so that the stream can be used again.
class CaptureGuard {
 public:
  explicit CaptureGuard(cudaStream_t stream) : stream_(stream) {
    BATON_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  }
  ~CaptureGuard() {
    if (stream_ == nullptr) return;
    cudaGraph_t abandoned = nullptr;
    (void)cudaStreamEndCapture(stream_, &abandoned);  // already failing: the first error wins
    if (abandoned != nullptr) GraphOwner{abandoned};
    (void)cudaGetLastError();
  }
  CaptureGuard(const CaptureGuard&) = delete;
  CaptureGuard& operator=(const CaptureGuard&) = delete;
  GraphOwner end() {
    cudaGraph_t graph = nullptr;
    const cudaStream_t stream = std::exchange(stream_, nullptr);
    BATON_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    return GraphOwner{graph};
  }

 private:
  cudaStream_t stream_;
};

}  // namespace

void LayerGraphs::launch(const Key& key, cudaStream_t stream,
                         const std::function<void()>& enqueue) {
  if (key.generation != generation_ || graphs_.size() >= kMaxGraphs) {
    graphs_.clear();
    generation_ = key.generation;
  }
  auto found = graphs_.find(key);
  if (found == graphs_.end()) {
    CaptureGuard capture(stream);
    enqueue();
    const GraphOwner graph = capture.end();
    found = graphs_.emplace(key, GraphExec(graph.get())).first;
  }
  BATON_CUDA_CHECK(cudaGraphLaunch(found->second.get(), stream));
}

}  // namespace baton::cuda
