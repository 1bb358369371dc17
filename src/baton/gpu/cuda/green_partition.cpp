#include "baton/gpu/cuda/green_partition.h"

#include <cuda.h>

#include <cstdio>
#include <string>

#include "baton/gpu/cuda/cuda_error.h"

namespace baton::cuda {
namespace {

// The ABI of the toolkit we build with: green contexts came in 12.4, their streams later.
constexpr unsigned kDriverVersion = CUDART_VERSION;

template <typename Fn>
Fn entry_point(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  const cudaError_t status =
      cudaGetDriverEntryPointByVersion(name, &fn, kDriverVersion, cudaEnableDefault, &found);
  if (status != cudaSuccess || found != cudaDriverEntryPointSuccess || fn == nullptr) {
    throw GpuError(GpuErrorClass::other, "cuda",
                   std::string("the driver has no ") + name + " at CUDA version " +
                       std::to_string(kDriverVersion));
  }
  return reinterpret_cast<Fn>(fn);
}

void check(CUresult result, const char* what) {
  if (result != CUDA_SUCCESS) {
    throw GpuError(GpuErrorClass::other, "cuda",
                   std::string(what) + " failed with CUresult " + std::to_string(result));
  }
}

}  // namespace

struct GreenPartition::Driver {
  decltype(&cuDeviceGet) device_get = entry_point<decltype(&cuDeviceGet)>("cuDeviceGet");
  decltype(&cuDeviceGetDevResource) get_resource =
      entry_point<decltype(&cuDeviceGetDevResource)>("cuDeviceGetDevResource");
  decltype(&cuDevSmResourceSplitByCount) split =
      entry_point<decltype(&cuDevSmResourceSplitByCount)>("cuDevSmResourceSplitByCount");
  decltype(&cuDevResourceGenerateDesc) describe =
      entry_point<decltype(&cuDevResourceGenerateDesc)>("cuDevResourceGenerateDesc");
  decltype(&cuGreenCtxCreate) create = entry_point<decltype(&cuGreenCtxCreate)>("cuGreenCtxCreate");
  decltype(&cuGreenCtxDestroy) destroy =
      entry_point<decltype(&cuGreenCtxDestroy)>("cuGreenCtxDestroy");
  decltype(&cuGreenCtxStreamCreate) stream_create =
      entry_point<decltype(&cuGreenCtxStreamCreate)>("cuGreenCtxStreamCreate");
};

GreenPartition::GreenPartition(int prefill_sms) : driver_(std::make_unique<Driver>()) {
  BATON_CUDA_CHECK(cudaFree(nullptr));  // the primary context exists from here on
  CUdevice device = 0;
  check(driver_->device_get(&device, 0), "cuDeviceGet");
  CUdevResource all{};
  check(driver_->get_resource(device, &all, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
  CUdevResource prefill{};
  CUdevResource rest{};
  unsigned groups = 1;
  check(driver_->split(&prefill, &groups, &all, &rest, 0, static_cast<unsigned>(prefill_sms)),
        "cuDevSmResourceSplitByCount");
  if (groups != 1) throw GpuError(GpuErrorClass::other, "cuda", "green partition: no SM group");
  CUdevResource* sides[2] = {&prefill, &rest};
  try {
    for (int i = 0; i < 2; ++i) {
      CUdevResourceDesc desc = nullptr;
      check(driver_->describe(&desc, sides[i], 1), "cuDevResourceGenerateDesc");
      CUgreenCtx context = nullptr;
      check(driver_->create(&context, desc, device, CU_GREEN_CTX_DEFAULT_STREAM),
            "cuGreenCtxCreate");
      contexts_[i] = context;
    }
  } catch (...) {
    release();  // the destructor does not run for a half-built object
    throw;
  }
  prefill_sms_ = static_cast<int>(prefill.sm.smCount);
  decode_sms_ = static_cast<int>(rest.sm.smCount);
}

GreenPartition::~GreenPartition() { release(); }

void GreenPartition::release() noexcept {
  for (void*& context : contexts_) {
    if (context != nullptr && driver_->destroy(static_cast<CUgreenCtx>(context)) != CUDA_SUCCESS) {
      std::fprintf(stderr, "baton: cuGreenCtxDestroy failed while releasing\n");
    }
    context = nullptr;
  }
}

std::shared_ptr<const GreenPartition> PartitionCache::get(int prefill_sms) {
  std::lock_guard lock(mu_);
  auto it = partitions_.find(prefill_sms);
  if (it != partitions_.end()) return it->second;
  std::shared_ptr<const GreenPartition> made;
  try {
    made = std::make_shared<GreenPartition>(prefill_sms);
  } catch (const GpuError& error) {
    std::fprintf(stderr, "baton: no green partition of %d SMs (%s); using SM targets only\n",
                 prefill_sms, error.what());
  }
  partitions_.emplace(prefill_sms, made);
  return made;
}

cudaStream_t GreenPartition::make_stream(Side side) const {
  CUstream stream = nullptr;
  check(driver_->stream_create(&stream,
                               static_cast<CUgreenCtx>(contexts_[side == Side::prefill ? 0 : 1]),
                               CU_STREAM_NON_BLOCKING, 0),
        "cuGreenCtxStreamCreate");
  return stream;
}

}  // namespace baton::cuda
