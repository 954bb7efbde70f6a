// CUDA programs for the LD_PRELOAD interposer (scripts/gpu-preload.sh), two modes:
//   kernels (default): every iteration cudaMallocs four 1-3 MiB buffers, runs kernels over
//     all of them (fill, combine, reduce), copies the result back and checks it against the
//     closed form, then cudaFrees the buffers (kernel time and the copy weigh heavily);
//   alloc: allocation-bound — every iteration cudaMallocs eight 1-4 MiB temporaries, runs a
//     small kernel on each (4096 elements) and one reduction into a device accumulator, and
//     cudaFrees them; the accumulator is checked at the end.
// Prints the time per iteration and a checksum that must be identical with and without the
// interposer. Usage: preload_loop [iterations] [kernels|alloc]
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                           \
    }                                                                                         \
  } while (0)

__global__ void fill(unsigned* p, size_t n, unsigned v)
{
  for (size_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x)
    p[j] = v + unsigned(j % 7);
}
__global__ void combine(const unsigned* a, const unsigned* b, unsigned* c, size_t n)
{
  for (size_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x)
    c[j] = 2 * a[j] + b[j];
}
__global__ void reduce(const unsigned* c, size_t n, unsigned long long* out)
{
  unsigned long long s = 0;
  for (size_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x)
    s += c[j];
  atomicAdd(out, s);
}

static unsigned long long mod7_sum(size_t n)
{  // sum of j % 7 for j < n
  return (n / 7) * 21ull + ((n % 7) * ((n % 7) - 1)) / 2;
}

__global__ void touch(unsigned* p, size_t n, unsigned v)
{
  for (size_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x)
    p[j] = v + unsigned(j % 7);
}
__global__ void sum_heads(unsigned* const* heads, int count, size_t n, unsigned long long* out)
{
  unsigned long long s = 0;
  for (int k = 0; k < count; k++)
    for (size_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x)
      s += heads[k][j];
  atomicAdd(out, s);
}

static int alloc_bound(int iters)
{
  const int warmup = 20, count = 8;
  const size_t head = 4096;
  unsigned long long* acc;
  unsigned** table;  // device array of the temporaries' addresses
  CHECK(cudaMalloc(&acc, sizeof *acc));
  CHECK(cudaMemset(acc, 0, sizeof *acc));
  CHECK(cudaMallocHost((void**)&table, 2 * count * sizeof(unsigned*)));
  unsigned long long want = 0;
  std::chrono::steady_clock::time_point t0;
  for (int i = 0; i < warmup + iters; i++) {
    if (i == warmup) {
      CHECK(cudaDeviceSynchronize());
      t0 = std::chrono::steady_clock::now();
    }
    // Double-buffered pinned table: the kernel of the previous iteration may still read
    // the other half.
    unsigned** heads = table + (i % 2) * count;
    for (int k = 0; k < count; k++) {
      size_t bytes = (size_t(1) << 20) + size_t((i * 7 + k * 3) % 13) * (size_t(1) << 18);
      CHECK(cudaMalloc(&heads[k], bytes));
      unsigned v = unsigned(i + k);
      touch<<<16, 256>>>(heads[k], head, v);
      want += head * v + mod7_sum(head);
    }
    sum_heads<<<16, 256>>>(heads, count, head, acc);
    CHECK(cudaGetLastError());
    for (int k = 0; k < count; k++)
      CHECK(cudaFree(heads[k]));
    // Without any free's implicit synchronization the host must not overwrite a table
    // half a queued kernel still reads: wait for the iteration before the previous one.
    if (i % 2 == 1) CHECK(cudaStreamSynchronize(0));
  }
  CHECK(cudaDeviceSynchronize());
  double us =
    std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  unsigned long long got = 0;
  CHECK(cudaMemcpy(&got, acc, sizeof got, cudaMemcpyDeviceToHost));
  // The warm-up iterations count in the accumulator as well.
  int bad = got != want;
  std::printf(
    "iterations %d bad %d us_per_iter %.2f checksum %016llx\n", iters, bad, us / iters, got);
  CHECK(cudaFree(acc));
  CHECK(cudaFreeHost(table));
  return bad;
}

int main(int argc, char** argv)
{
  int iters = argc > 1 ? std::atoi(argv[1]) : 1000;
  if (argc > 2 && std::string(argv[2]) == "alloc") return alloc_bound(iters);
  const int warmup            = 20;
  unsigned long long checksum = 0;
  int bad                     = 0;
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
  double us =
    std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
    "iterations %d bad %d us_per_iter %.2f checksum %016llx\n", iters, bad, us / iters, checksum);
  return bad != 0;
}
