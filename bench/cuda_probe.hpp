// What bench/thin_paths.cpp needs beside the paths it times: the runtime-call check
// and a cudaMallocAsync pool made as RMM's cuda_async_memory_resource makes its own.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define CK(x)                                                      \
  do {                                                             \
    auto e = (x);                                                  \
    if (e != cudaSuccess) {                                        \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); \
      std::exit(1);                                                \
    }                                                              \
  } while (0)

// A pool on device 0 with the release threshold at its maximum, primed with `prime` bytes
// (one allocation and free on the legacy stream, then a synchronization).
inline cudaMemPool_t make_rmm_like_pool(std::size_t prime)
{
  cudaMemPool_t pool{};
  cudaMemPoolProps props{};
  props.allocType     = cudaMemAllocationTypePinned;
  props.handleTypes   = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id   = 0;
  CK(cudaMemPoolCreate(&pool, &props));
  std::uint64_t threshold = ~std::uint64_t{0};
  CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  void* p{};
  CK(cudaMallocFromPoolAsync(&p, prime, pool, nullptr));
  CK(cudaFreeAsync(p, nullptr));
  CK(cudaStreamSynchronize(nullptr));
  return pool;
}
