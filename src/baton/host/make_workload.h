// The synthetic workloads for a backend: BLAS on the CPU, cuBLAS bf16 on CUDA; and the
// long dispatches of the `long-dispatch` scenario (one attention kernel per layer).
// Thread-safety: a pure factory.
#pragma once

#include <memory>
#include <string_view>

#include "baton/engine/synthetic/long_dispatch_workload.h"
#include "baton/engine/synthetic/synthetic_workload.h"

namespace baton {

// The default shape of `kind` on `backend` (prefill `tokens` 0: the backend's default).
SyntheticShape default_shape(std::string_view backend, BurstKind kind, std::size_t tokens = 0);

// Throws BackendUnavailable for a backend this build does not have.
std::unique_ptr<Workload> make_synthetic_workload(std::string_view backend,
                                                  const SyntheticShape& shape,
                                                  int sm_count_target = 0);

// The backend's default long-dispatch shape (`keys` 0: the backend's default).
AttentionShape default_attention_shape(std::string_view backend, std::size_t keys = 0);

// Throws BackendUnavailable for a backend this build does not have.
std::unique_ptr<Workload> make_long_dispatch_workload(std::string_view backend,
                                                      const AttentionShape& shape);

}  // namespace baton
