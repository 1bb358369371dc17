// SKIP_WITHOUT_GPU(): the first line of a test that needs a CUDA device; CI's machine has
// none, so there such a test reports itself skipped. One definition for every CUDA test
// file (the unity build puts several into one translation unit).
// Thread-safety: a macro over device_present(), which may be called from any thread.
#pragma once

#include "baton/gpu/cuda/cuda_handles.h"

#define SKIP_WITHOUT_GPU() \
  if (!::baton::cuda::device_present()) GTEST_SKIP() << "no CUDA device visible"
