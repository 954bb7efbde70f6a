// Allocation-bound CUDA program for the LD_PRELOAD interposer (scripts/gpu-preload.sh):
// every iteration cudaMallocs four buffers, runs real kernels (fill, combine, reduce),
// checks the result against the closed form, and cudaFrees the buffers. Prints the time
// per iteration and a checksum that must be identical with and without the interposer.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                      \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                   \
    }                                                                                 \
  } while (0)

__global__ void fill(unsigned* p, size_t n, unsigned v) {
  for (size_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x)
    p[j] = v + unsigned(j % 7);
}
__global__ void combine(const unsigned* a, const unsigned* b, unsigned* c, size_t n) {
  for (size_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x)
    c[j] = 2 * a[j] + b[j];
}
__global__ void reduce(const unsigned* c, size_t n, unsigned long long* out) {
  unsigned long long s = 0;
  for (size_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x)
    s += c[j];
  atomicAdd(out, s);
}

static unsigned long long mod7_sum(size_t n) {  // sum of j % 7 for j < n
  return (n / 7) * 21ull + ((n % 7) * ((n % 7) - 1)) / 2;
}

int main(int argc, char** argv) {
  int iters = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int warmup = 20;
  unsigned long long checksum = 0;
  int bad = 0;
  std::chrono::steady_clock::time_point t0;
  for (int i = 0; i < warmup + iters; i++) {
    if (i == warmup) {
      CHECK(cudaDeviceSynchronize());
      t0 = std::chrono::steady_clock::now();
    }
    size_t n = (size_t(1) << 18) + size_t(i % 8) * (size_t(1) << 16);  // 1-3 MiB per buffer
    unsigned *a, *b, *c;
    unsigned long long* out;
    CHECK(cudaMalloc(&a, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&b, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&c, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&out, sizeof(unsigned long long)));
    CHECK(cudaMemsetAsync(out, 0, sizeof(unsigned long long)));
    fill<<<256, 256>>>(a, n, unsigned(i));
    fill<<<256, 256>>>(b, n, 1u);
    combine<<<256, 256>>>(a, b, c, n);
    reduce<<<256, 256>>>(c, n, out);
    CHECK(cudaGetLastError());
    unsigned long long got = 0;
    CHECK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
    unsigned long long want = n * (2ull * unsigned(i) + 1) + 3 * mod7_sum(n);
    if (got != want) bad++;
    checksum = checksum * 1099511628211ull ^ got;
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    CHECK(cudaFree(out));
  }
  CHECK(cudaDeviceSynchronize());
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  std::printf("iterations %d bad %d us_per_iter %.2f checksum %016llx\n", iters, bad, us / iters,
              checksum);
  return bad != 0;
}
