// Where does a cuda_async allocation's time go? One W1-like plan (N live blocks, sizes up to
// MAX_MIB, 73% allocations) timed through (a) cudaMallocFromPoolAsync/cudaFreeAsync called
// directly on a pool made like RMM's cuda_async_memory_resource, and (b) librmm.so's C ABI
// (rmm_async_create + rmm_allocate_async/rmm_deallocate_async) on the same kind of pool.
// Build against cudart static or shared to compare those too (tests-gpu/async_overhead.sh).
//   async_overhead direct|rmm [N] [MAX_MIB]      prints ns per operation
#include <rmm/rmm.h>

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#define CK(x)                                                          \
  do {                                                                 \
    auto e = (x);                                                      \
    if (e != cudaSuccess) {                                            \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));     \
      std::exit(1);                                                    \
    }                                                                  \
  } while (0)
#define RK(x)                                                          \
  do {                                                                 \
    if ((x) != RMM_STATUS_SUCCESS) {                                   \
      std::fprintf(stderr, "%s: %s\n", #x, rmm_last_error_message()); \
      std::exit(1);                                                    \
    }                                                                  \
  } while (0)

int main(int argc, char** argv)
{
  bool const direct = argc > 1 && std::strcmp(argv[1], "direct") == 0;
  std::size_t const n   = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 10000;
  std::size_t const mib = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 1;
  std::size_t free_b{}, total_b{};
  CK(cudaMemGetInfo(&free_b, &total_b));
  std::size_t const initial = (free_b / 2) & ~std::size_t{255};

  cudaMemPool_t pool{};
  rmm_resource_t mr{};
  if (direct) {
    cudaMemPoolProps props{};
    props.allocType     = cudaMemAllocationTypePinned;
    props.handleTypes   = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id   = 0;
    CK(cudaMemPoolCreate(&pool, &props));
    std::uint64_t threshold = ~std::uint64_t{0};
    CK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    void* p{};
    CK(cudaMallocFromPoolAsync(&p, initial, pool, 0));
    CK(cudaFreeAsync(p, 0));
  } else {
    std::uint64_t threshold = ~std::uint64_t{0};
    RK(rmm_async_create(&initial, &threshold, 0, &mr));
  }
  auto alloc = [&](std::size_t b) {
    void* p{};
    if (direct) {
      CK(cudaMallocFromPoolAsync(&p, b, pool, 0));
    } else {
      RK(rmm_allocate_async(mr, b, nullptr, &p));
    }
    return p;
  };
  auto dealloc = [&](void* p, std::size_t b) {
    if (direct) {
      CK(cudaFreeAsync(p, 0));
    } else {
      RK(rmm_deallocate_async(mr, p, b, nullptr));
    }
  };
  std::mt19937_64 gen{0x5eed0001};
  std::uniform_int_distribution<std::size_t> size_d(1, mib << 20);
  std::uniform_int_distribution<int> op_d(0, 99);
  struct step {
    std::size_t size, idx;
    int op;
  };
  double best = 1e30;
  for (int run = 0; run < 4; ++run) {  // run 0 warms up
    std::vector<step> plan(2 * n);
    for (auto& s : plan) {
      s.size = size_d(gen);
      s.op   = op_d(gen);
      s.idx  = gen();
    }
    std::vector<std::pair<void*, std::size_t>> live;
    live.reserve(n);
    std::size_t made = 0, ops = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (auto const& s : plan) {
      if (live.empty() || (s.op < 73 && made < n)) {
        live.emplace_back(alloc(s.size), s.size);
        ++made;
      } else {
        auto i = s.idx % live.size();
        dealloc(live[i].first, live[i].second);
        live[i] = live.back();
        live.pop_back();
      }
      ++ops;
    }
    for (auto& [p, b] : live) {
      dealloc(p, b);
      ++ops;
    }
    CK(cudaStreamSynchronize(0));
    double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / ops;
    if (run > 0 && ns < best) { best = ns; }
  }
  std::printf("%s N=%zu max=%zuMiB: %.1f ns/op (best of 3)\n", direct ? "direct" : "rmm C ABI", n, mib, best);
  return 0;
}
