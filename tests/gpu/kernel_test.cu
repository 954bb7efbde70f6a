// Real kernels on memory from rmm-rs's C ABI, on a caller-owned CUDA stream.
// Built with nvcc on the GPU machine (scripts/gpu-check.sh); exits non-zero on any mismatch.
#include <rmm/rmm.h>

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK_RMM(call)                       \
  do {                                        \
    rmm_status_t s_ = (call);                 \
    if (s_ != RMM_STATUS_SUCCESS) {           \
      std::fprintf(stderr,                    \
                   "%s:%d %s -> %s: %s\n",    \
                   __FILE__,                  \
                   __LINE__,                  \
                   #call,                     \
                   rmm_status_string(s_),     \
                   rmm_last_error_message()); \
      std::exit(1);                           \
    }                                         \
  } while (0)
#define CHECK_CUDA(call)                                                                           \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

__global__ void fill(unsigned* p, size_t n, unsigned seed)
{
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    p[i] = static_cast<unsigned>(i) * 2654435761u ^ seed;
}

__global__ void verify(const unsigned* p, size_t n, unsigned seed, unsigned* errors)
{
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    if (p[i] != (static_cast<unsigned>(i) * 2654435761u ^ seed)) atomicAdd(errors, 1u);
}

// Fills on the device, verifies on the device, copies back and verifies on the host.
static int exercise(
  const char* label, rmm_resource_t mr, cudaStream_t stream, size_t n, unsigned seed)
{
  void* p = nullptr;
  void* e = nullptr;
  CHECK_RMM(rmm_allocate_async(mr, n * sizeof(unsigned), stream, &p));
  CHECK_RMM(rmm_allocate_async(mr, sizeof(unsigned), stream, &e));
  if (reinterpret_cast<uintptr_t>(p) % 256 != 0) {
    std::fprintf(stderr, "%s: %p not 256-byte aligned\n", label, p);
    return 1;
  }
  CHECK_RMM(rmm_memset_async(e, 0, sizeof(unsigned), stream));
  fill<<<256, 256, 0, stream>>>(static_cast<unsigned*>(p), n, seed);
  CHECK_CUDA(cudaGetLastError());
  verify<<<256, 256, 0, stream>>>(static_cast<unsigned*>(p), n, seed, static_cast<unsigned*>(e));
  CHECK_CUDA(cudaGetLastError());
  std::vector<unsigned> host(n);
  unsigned errors = 0;
  CHECK_RMM(rmm_memcpy_async(host.data(), p, n * sizeof(unsigned), stream));
  CHECK_RMM(rmm_memcpy_async(&errors, e, sizeof(unsigned), stream));
  CHECK_RMM(rmm_stream_synchronize(stream));
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i)
    if (host[i] != (static_cast<unsigned>(i) * 2654435761u ^ seed)) ++bad;
  CHECK_RMM(rmm_deallocate_async(mr, p, n * sizeof(unsigned), stream));
  CHECK_RMM(rmm_deallocate_async(mr, e, sizeof(unsigned), stream));
  std::printf("%-28s %9zu words: device errors %u, host mismatches %zu -> %s\n",
              label,
              n,
              errors,
              bad,
              (errors == 0 && bad == 0) ? "ok" : "FAILED");
  return (errors == 0 && bad == 0) ? 0 : 1;
}

int main()
{
  const char* name = nullptr;
  const char* desc = nullptr;
  CHECK_RMM(rmm_runtime_name(&name));
  CHECK_RMM(rmm_runtime_description(&desc));
  std::printf("runtime: %s (%s)\n", name, desc);
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  int failures      = 0;
  rmm_resource_t mr = nullptr;
  CHECK_RMM(rmm_get_current_device_resource(&mr));
  failures += exercise("current (cuda_memory_resource)", mr, stream, 1 << 24, 0x1234);
  CHECK_RMM(rmm_resource_release(mr));

  const char* kinds[]                        = {"managed", "pinned_host", "system"};
  rmm_status_t (*creates[])(rmm_resource_t*) = {
    rmm_managed_create, rmm_pinned_host_create, rmm_system_create};
  for (int k = 0; k < 3; ++k) {
    rmm_status_t s = creates[k](&mr);
    if (s == RMM_STATUS_UNSUPPORTED) {
      std::printf("%-28s unsupported here: %s\n", kinds[k], rmm_last_error_message());
      continue;
    }
    CHECK_RMM(s);
    failures += exercise(kinds[k], mr, stream, 1 << 22, 0x9e37 + k);
    CHECK_RMM(rmm_resource_release(mr));
  }

  // Out of memory names the size; nothing changes afterwards.
  CHECK_RMM(rmm_cuda_create(&mr));
  void* p        = nullptr;
  rmm_status_t s = rmm_allocate(mr, size_t{1} << 60, &p);
  std::printf("allocate 2^60 bytes -> %s: %s\n", rmm_status_string(s), rmm_last_error_message());
  if (s != RMM_STATUS_OUT_OF_MEMORY || p != nullptr) failures++;
  failures += exercise("cuda after OOM", mr, stream, 1 << 20, 77);
  CHECK_RMM(rmm_resource_release(mr));
  CHECK_CUDA(cudaStreamDestroy(stream));
  std::printf("%s\n", failures == 0 ? "ALL OK" : "FAILURES");
  return failures == 0 ? 0 : 1;
}
