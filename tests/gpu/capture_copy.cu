// Stream-ordered copies captured into a CUDA graph (RMM 26.10 API): rmm::detail::memcpy_async
// and device_uvector's element copies are recorded as graph nodes, do nothing while captured,
// and move the bytes when the graph is launched. (RMM 26.10's memcpy_async uses
// cudaMemcpyBatchAsync on CUDA 13, whose copies a capture silently drops.)
//
//   nvcc -std=c++20 -DRMM_API_VERSION=2610 -I<prefix>/include -I<cccl 3.5> \
//        tests/gpu/capture_copy.cu -L<prefix>/lib -lrmm -o capture_copy
//   RMM_RUNTIME=cuda ./capture_copy      (prints "capture_copy: ok" and exits 0)
#include <rmm/detail/cuda_memcpy.hpp>
#include <rmm/device_uvector.hpp>

#include <cuda/stream_ref>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                              \
  do {                                                                                           \
    cudaError_t const e = (call);                                                                \
    if (e != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e)); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

int main()
{
  constexpr std::size_t n = 4096;
  cudaStream_t raw{};
  CHECK(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking));
  cuda::stream_ref const stream{raw};

  int* in{};
  int* out{};
  int* value{};
  CHECK(cudaMallocHost(&in, n * sizeof(int)));
  CHECK(cudaMallocHost(&out, n * sizeof(int)));
  CHECK(cudaMallocHost(&value, sizeof(int)));
  for (std::size_t i = 0; i < n; ++i) {
    in[i]  = static_cast<int>(i) * 3 + 1;
    out[i] = -1;
  }
  *value = 12345;

  // Allocated before the capture: the graph holds only the copies.
  rmm::device_uvector<int> vec(n, stream);
  CHECK(cudaStreamSynchronize(raw));

  cudaGraph_t graph{};
  CHECK(cudaStreamBeginCapture(raw, cudaStreamCaptureModeThreadLocal));
  CHECK(rmm::detail::memcpy_async(vec.data(), in, n * sizeof(int), stream));
  vec.set_element_async(7, *value, stream);
  CHECK(rmm::detail::memcpy_async(out, vec.data(), n * sizeof(int), stream));
  CHECK(cudaStreamEndCapture(raw, &graph));

  std::size_t nodes = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  if (nodes < 3) {
    std::fprintf(stderr, "capture_copy: the graph has %zu nodes, expected 3 copies\n", nodes);
    return 1;
  }
  CHECK(cudaStreamSynchronize(raw));
  if (out[0] != -1) {
    std::fprintf(stderr, "capture_copy: a captured copy ran before the graph was launched\n");
    return 1;
  }

  cudaGraphExec_t exec{};
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, raw));
  CHECK(cudaStreamSynchronize(raw));
  for (std::size_t i = 0; i < n; ++i) {
    int const want = i == 7 ? 12345 : static_cast<int>(i) * 3 + 1;
    if (out[i] != want) {
      std::fprintf(stderr, "capture_copy: out[%zu] = %d, expected %d\n", i, out[i], want);
      return 1;
    }
  }
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  vec.release();
  CHECK(cudaFreeHost(in));
  CHECK(cudaFreeHost(out));
  CHECK(cudaFreeHost(value));
  CHECK(cudaStreamDestroy(raw));
  std::printf("capture_copy: ok (%zu graph nodes, %zu ints)\n", nodes, n);
  return 0;
}
