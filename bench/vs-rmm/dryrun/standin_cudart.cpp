// A stand-in libcudart.so.13 for dry runs of bench/vs-rmm/ on a machine with no GPU: what the
// benchmark programs built by run.sh (vs_rmm_bench against rmm-rs, RMM 23.12's perf_anchor, RMM's
// random_allocations) and rmm-rs's CUDA backend (RMM_RUNTIME=cuda, which loads libcudart.so.13)
// call, answered on the host. Device memory is anonymous memory mapped without reserve (nothing
// touches it), VSR_STANDIN_GIB of it (default 80); streams and events are tokens and every
// operation completes at once; a memory pool counts its bytes. The numbers a dry run prints
// measure the host's bookkeeping only: the stand-in exists to run the whole pipeline before the
// GPU does.
//
// RAPIDS's librmm.so does not call this library: it carries its own copy of the CUDA runtime,
// linked statically, which only NVIDIA's driver can serve.
#include <cuda_runtime_api.h>

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace {

struct mempool {
  std::size_t used{0};
  std::size_t high{0};
  std::uint64_t release_threshold{0};
};

struct block {
  std::size_t bytes;
  mempool* pool;
};

struct state {
  std::mutex mutex;
  std::unordered_map<std::uintptr_t, block> blocks;
  std::unordered_set<void*> pools;
  std::size_t used{0};
  mempool default_pool;
};

state& st()
{
  static auto* s = new state();  // never destroyed: calls may come during exit
  return *s;
}

thread_local cudaError_t last_error = cudaSuccess;

cudaError_t fail(cudaError_t e)
{
  last_error = e;
  return e;
}

std::size_t capacity()
{
  static std::size_t const bytes = [] {
    char const* env = std::getenv("VSR_STANDIN_GIB");
    return std::size_t(env != nullptr ? std::strtoull(env, nullptr, 10) : 80) << 30;
  }();
  return bytes;
}

mempool* pool_of(cudaMemPool_t p) { return reinterpret_cast<mempool*>(p); }

cudaError_t take(void** ptr, std::size_t bytes, mempool* pool)
{
  if (ptr == nullptr) { return fail(cudaErrorInvalidValue); }
  *ptr = nullptr;
  if (bytes == 0) { return cudaSuccess; }
  std::size_t const len = (bytes + 4095) & ~std::size_t{4095};
  auto& s               = st();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.used + len > capacity()) { return fail(cudaErrorMemoryAllocation); }
    s.used += len;
  }
  void* m =
    mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  std::lock_guard<std::mutex> lock(s.mutex);
  if (m == MAP_FAILED) {
    s.used -= len;
    return fail(cudaErrorMemoryAllocation);
  }
  s.blocks[reinterpret_cast<std::uintptr_t>(m)] = {len, pool};
  if (pool != nullptr) {
    pool->used += len;
    if (pool->used > pool->high) { pool->high = pool->used; }
  }
  *ptr = m;
  return cudaSuccess;
}

cudaError_t give_back(void* ptr)
{
  if (ptr == nullptr) { return cudaSuccess; }
  auto& s         = st();
  std::size_t len = 0;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.blocks.find(reinterpret_cast<std::uintptr_t>(ptr));
    if (it == s.blocks.end()) { return fail(cudaErrorInvalidValue); }
    len = it->second.bytes;
    if (it->second.pool != nullptr) { it->second.pool->used -= len; }
    s.blocks.erase(it);
    s.used -= len;
  }
  munmap(ptr, len);
  return cudaSuccess;
}

int attribute(cudaDeviceAttr attr)
{
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
      return 1024;
    case cudaDevAttrMaxBlockDimX:
      return 1024;
    case cudaDevAttrMaxBlockDimY:
      return 1024;
    case cudaDevAttrMaxBlockDimZ:
      return 64;
    case cudaDevAttrMaxGridDimX:
      return 2147483647;
    case cudaDevAttrMaxGridDimY:
      return 65535;
    case cudaDevAttrMaxGridDimZ:
      return 65535;
    case cudaDevAttrWarpSize:
      return 32;
    case cudaDevAttrMultiProcessorCount:
      return 132;
    case cudaDevAttrComputeCapabilityMajor:
      return 9;
    case cudaDevAttrComputeCapabilityMinor:
      return 0;
    case cudaDevAttrUnifiedAddressing:
      return 1;
    case cudaDevAttrManagedMemory:
      return 1;
    case cudaDevAttrConcurrentManagedAccess:
      return 1;
    case cudaDevAttrMemoryPoolsSupported:
      return 1;
    case cudaDevAttrMemoryPoolSupportedHandleTypes:
      return cudaMemHandleTypePosixFileDescriptor;
    default:
      return 0;
  }
}

void* token() { return new int(0); }
void drop(void* t) { delete static_cast<int*>(t); }

}  // namespace

extern "C" {

// Errors and versions.
cudaError_t cudaGetLastError()
{
  cudaError_t const e = last_error;
  last_error          = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError() { return last_error; }
char const* cudaGetErrorName(cudaError_t e)
{
  switch (e) {
    case cudaSuccess:
      return "cudaSuccess";
    case cudaErrorInvalidValue:
      return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation:
      return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidDevice:
      return "cudaErrorInvalidDevice";
    default:
      return "cudaErrorStandIn";
  }
}
char const* cudaGetErrorString(cudaError_t e)
{
  switch (e) {
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument";
    case cudaErrorMemoryAllocation:
      return "out of memory";
    case cudaErrorInvalidDevice:
      return "invalid device ordinal";
    default:
      return "error of the stand-in runtime";
  }
}
cudaError_t cudaRuntimeGetVersion(int* v)
{
  *v = 13000;
  return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int* v)
{
  *v = 13000;
  return cudaSuccess;
}

// Devices.
cudaError_t cudaGetDeviceCount(int* n)
{
  *n = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* d)
{
  *d = 0;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : fail(cudaErrorInvalidDevice); }
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr attr, int d)
{
  if (d != 0) { return fail(cudaErrorInvalidDevice); }
  *v = attribute(attr);
  return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int d)
{
  if (d != 0) { return fail(cudaErrorInvalidDevice); }
  std::memset(prop, 0, sizeof *prop);
  std::strncpy(prop->name, "stand-in runtime (host, no GPU)", sizeof prop->name - 1);
  prop->totalGlobalMem      = capacity();
  prop->major               = 9;
  prop->minor               = 0;
  prop->multiProcessorCount = 132;
  prop->warpSize            = 32;
  prop->unifiedAddressing   = 1;
  prop->managedMemory       = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties_v2(cudaDeviceProp* prop, int d)
{
  return cudaGetDeviceProperties(prop, d);
}
cudaError_t cudaMemGetInfo(size_t* free, size_t* total)
{
  std::lock_guard<std::mutex> lock(st().mutex);
  *free  = capacity() - st().used;
  *total = capacity();
  return cudaSuccess;
}

// Memory.
cudaError_t cudaMalloc(void** p, size_t bytes) { return take(p, bytes, nullptr); }
cudaError_t cudaFree(void* p) { return give_back(p); }
cudaError_t cudaMallocManaged(void** p, size_t bytes, unsigned int)
{
  return take(p, bytes, nullptr);
}
cudaError_t cudaMallocHost(void** p, size_t bytes) { return take(p, bytes, nullptr); }
cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned int) { return take(p, bytes, nullptr); }
cudaError_t cudaFreeHost(void* p) { return give_back(p); }
cudaError_t cudaMemcpyAsync(void* dst, void const* src, size_t bytes, cudaMemcpyKind, cudaStream_t)
{
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void* dst, void const* src, size_t bytes, cudaMemcpyKind)
{
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* dst, int value, size_t bytes, cudaStream_t)
{
  std::memset(dst, value, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemset(void* dst, int value, size_t bytes)
{
  std::memset(dst, value, bytes);
  return cudaSuccess;
}
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* a, void const* p)
{
  std::memset(a, 0, sizeof *a);
  std::lock_guard<std::mutex> lock(st().mutex);
  auto const addr = reinterpret_cast<std::uintptr_t>(p);
  for (auto const& [base, b] : st().blocks) {
    if (addr >= base && addr < base + b.bytes) {
      a->type          = cudaMemoryTypeDevice;
      a->device        = 0;
      a->devicePointer = const_cast<void*>(p);
      return cudaSuccess;
    }
  }
  a->type = cudaMemoryTypeUnregistered;
  return cudaSuccess;
}

// Stream-ordered allocation and memory pools.
cudaError_t cudaMallocAsync(void** p, size_t bytes, cudaStream_t)
{
  return take(p, bytes, &st().default_pool);
}
cudaError_t cudaMallocFromPoolAsync(void** p, size_t bytes, cudaMemPool_t pool, cudaStream_t)
{
  return take(p, bytes, pool_of(pool));
}
cudaError_t cudaFreeAsync(void* p, cudaStream_t) { return give_back(p); }
cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, cudaMemPoolProps const*)
{
  auto* p = new mempool();
  std::lock_guard<std::mutex> lock(st().mutex);
  st().pools.insert(p);
  *pool = reinterpret_cast<cudaMemPool_t>(p);
  return cudaSuccess;
}
cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool)
{
  auto* p = pool_of(pool);
  std::lock_guard<std::mutex> lock(st().mutex);
  if (st().pools.erase(p) == 0) { return fail(cudaErrorInvalidValue); }
  for (auto& [base, b] : st().blocks) {
    if (b.pool == p) { b.pool = nullptr; }
  }
  delete p;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int)
{
  *pool = reinterpret_cast<cudaMemPool_t>(&st().default_pool);
  return cudaSuccess;
}
cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int)
{
  return cudaDeviceGetDefaultMemPool(pool, 0);
}
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t, size_t) { return cudaSuccess; }
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value)
{
  auto* p = pool_of(pool);
  std::lock_guard<std::mutex> lock(st().mutex);
  if (attr == cudaMemPoolAttrReleaseThreshold) {
    std::memcpy(&p->release_threshold, value, sizeof p->release_threshold);
  } else if (attr == cudaMemPoolAttrReservedMemHigh || attr == cudaMemPoolAttrUsedMemHigh) {
    p->high = p->used;  // only a reset to the current value is allowed
  }
  return cudaSuccess;
}
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value)
{
  auto* p = pool_of(pool);
  std::lock_guard<std::mutex> lock(st().mutex);
  std::uint64_t v = 0;
  switch (attr) {
    case cudaMemPoolAttrReleaseThreshold:
      v = p->release_threshold;
      break;
    case cudaMemPoolAttrReservedMemCurrent:
    case cudaMemPoolAttrUsedMemCurrent:
      v = p->used;
      break;
    case cudaMemPoolAttrReservedMemHigh:
    case cudaMemPoolAttrUsedMemHigh:
      v = p->high;
      break;
    default: {
      int const zero = 0;  // the int-valued attributes (reuse policies)
      std::memcpy(value, &zero, sizeof zero);
      return cudaSuccess;
    }
  }
  std::memcpy(value, &v, sizeof v);
  return cudaSuccess;
}

// Streams and events.
cudaError_t cudaStreamCreate(cudaStream_t* s)
{
  *s = static_cast<cudaStream_t>(token());
  return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int) { return cudaStreamCreate(s); }
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned int, int)
{
  return cudaStreamCreate(s);
}
cudaError_t cudaStreamDestroy(cudaStream_t s)
{
  drop(s);
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamQuery(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamGetId(cudaStream_t s, unsigned long long* id)
{
  *id = reinterpret_cast<std::uintptr_t>(s);  // the default, legacy and per-thread streams: 0, 1, 2
  return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned int) { return cudaSuccess; }
cudaError_t cudaLaunchHostFunc(cudaStream_t, cudaHostFn_t fn, void* data)
{
  fn(data);
  return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t* e)
{
  *e = static_cast<cudaEvent_t>(token());
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int) { return cudaEventCreate(e); }
cudaError_t cudaEventDestroy(cudaEvent_t e)
{
  drop(e);
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) { return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventQuery(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t, cudaEvent_t)
{
  *ms = 0;
  return cudaSuccess;
}

}  // extern "C"
