// Why does one process run the thin W1 cells at one speed and the next at another? One fresh
// process, the CUDA runtime only (no rmm): where the runtime put things, then the W1 pattern
// of bench-vs-rmm (N live blocks of sizes uniform in [1, MAX MiB], 73% allocations, live
// bytes under 16 000 MiB) through cudaMalloc/cudaFree and through cudaMallocFromPoolAsync/
// cudaFreeAsync on a pool made like RMM's cuda_async_memory_resource. Prints one line:
//   dev=<first device pointer> host=<malloc'd pointer> lib=<address of cudaMalloc>
//   cuda64=<ns/op> cuda1=<ns/op> async1=<ns/op> cpu=<ns/step> mem=<ns/step>
// (medians of RUNS), where cpu and mem time the host alone, interleaved with the cells: an
// arithmetic chain and a pointer chase over 64 MiB (does the process's host speed explain
// its cells?). tests-gpu/mode_probe.sh runs it in many fresh processes, with and
// without librmm.so preloaded and with and without address-space randomization.
#include "cuda_probe.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <utility>
#include <vector>

namespace {

template <typename Alloc, typename Free>
double w1(std::size_t n, std::size_t max_mib, std::uint64_t seed, Alloc alloc, Free dealloc)
{
  std::mt19937_64 gen{seed};
  std::uniform_int_distribution<std::size_t> size_d(1, max_mib << 20);
  std::uniform_int_distribution<int> op_d(0, 99);
  struct step {
    std::size_t size;
    int op;
    std::uint64_t idx;
  };
  std::vector<step> plan(2 * n);
  for (auto& s : plan) { s = {size_d(gen), op_d(gen), gen()}; }
  std::size_t const max_usage = std::size_t{16000} << 20;
  std::vector<std::pair<void*, std::size_t>> live;
  live.reserve(n);
  std::size_t made = 0, ops = 0, live_bytes = 0;
  auto const t0 = std::chrono::steady_clock::now();
  for (auto const& s : plan) {
    if (live.empty() || (s.op < 73 && made < n && live_bytes + s.size < max_usage)) {
      live.emplace_back(alloc(s.size), s.size);
      live_bytes += s.size;
      ++made;
    } else {
      auto const i = s.idx % live.size();
      dealloc(live[i].first);
      live_bytes -= live[i].second;
      live[i] = live.back();
      live.pop_back();
    }
    ++ops;
  }
  for (auto const& b : live) {
    dealloc(b.first);
    ++ops;
  }
  CK(cudaDeviceSynchronize());
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
         double(ops);
}

// ns per step of a dependent arithmetic chain (the core's speed alone).
double cpu_probe()
{
  auto const t0    = std::chrono::steady_clock::now();
  std::uint64_t x  = 88172645463325252ull;
  std::size_t const steps = 20'000'000;
  for (std::size_t i = 0; i < steps; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  auto const el = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  if (x == 0) { std::puts(""); }  // keeps the chain
  return el / double(steps);
}

// ns per step of a pointer chase through one random cycle over 64 MiB (memory latency).
double mem_probe()
{
  static std::vector<std::uint32_t> next;
  if (next.empty()) {
    std::size_t const n = (std::size_t{64} << 20) / sizeof(std::uint32_t);
    std::vector<std::uint32_t> order(n);
    for (std::size_t i = 0; i < n; ++i) { order[i] = static_cast<std::uint32_t>(i); }
    std::shuffle(order.begin() + 1, order.end(), std::mt19937_64{5});
    next.resize(n);
    for (std::size_t i = 0; i < n; ++i) { next[order[i]] = order[(i + 1) % n]; }
  }
  std::size_t const steps = 2'000'000;
  std::uint32_t at        = 0;
  auto const t0           = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < steps; ++i) { at = next[at]; }
  auto const el = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  if (at == 0xffffffffu) { std::puts(""); }
  return el / double(steps);
}

double median(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv)
{
  int const runs = argc > 1 ? std::atoi(argv[1]) : 3;
  CK(cudaFree(nullptr));
  void* first{};
  CK(cudaMalloc(&first, 1 << 20));
  void* host = std::malloc(1 << 20);
  void* sym  = dlsym(RTLD_DEFAULT, "cudaMalloc");
  std::printf("dev=%p host=%p lib=%p", first, host, sym);
  CK(cudaFree(first));
  std::free(host);

  auto cuda_alloc = [](std::size_t s) {
    void* p{};
    CK(cudaMalloc(&p, s));
    return p;
  };
  auto cuda_free = [](void* p) { CK(cudaFree(p)); };
  std::vector<double> c64, c1, a1, cpu, mem;
  for (int r = 0; r < runs; ++r) {
    cpu.push_back(cpu_probe());
    mem.push_back(mem_probe());
    c64.push_back(w1(1000, 64, 7 + r, cuda_alloc, cuda_free));
    c1.push_back(w1(10000, 1, 11 + r, cuda_alloc, cuda_free));
  }
  // As RMM's cuda_async_memory_resource: primed with half the free memory, threshold max.
  std::size_t free_b{}, total_b{};
  CK(cudaMemGetInfo(&free_b, &total_b));
  cudaMemPool_t const pool = make_rmm_like_pool((free_b / 2) & ~std::size_t{255});
  auto async_alloc = [pool](std::size_t s) {
    void* p{};
    CK(cudaMallocFromPoolAsync(&p, s, pool, nullptr));
    return p;
  };
  auto async_free = [](void* p) { CK(cudaFreeAsync(p, nullptr)); };
  for (int r = 0; r < runs; ++r) {
    a1.push_back(w1(10000, 1, 13 + r, async_alloc, async_free));
    cpu.push_back(cpu_probe());
    mem.push_back(mem_probe());
  }
  CK(cudaMemPoolDestroy(pool));
  std::printf(" cuda64=%.0f cuda1=%.0f async1=%.0f cpu=%.3f mem=%.1f\n", median(c64), median(c1),
              median(a1), median(cpu), median(mem));
  return 0;
}
