// Where does a cuda_async allocation's time go? One W1-like plan (N live blocks, sizes up to
// MAX_MIB, 73% allocations) timed through (a) cudaMallocFromPoolAsync/cudaFreeAsync called
// directly on a pool made like RMM's cuda_async_memory_resource, and (b) librmm.so's C ABI
// (rmm_async_create + rmm_allocate_async/rmm_deallocate_async) on the same kind of pool.
// Build against cudart static or shared to compare those too (tests-gpu/async_overhead.sh).
//   async_overhead direct|rmm [N] [MAX_MIB]      prints ns per operation
//   async_overhead both [N] [MAX_MIB] [RUNS]     both pools in one process, the same plan
//                                                timed through each in turn RUNS times:
//                                                medians and their ratio (a process's
//                                                speed for these calls varies by up to 2x
//                                                from one process to the next, so only
//                                                one process can compare the two paths)
#include <rmm/rmm.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
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
  std::string const mode = argc > 1 ? argv[1] : "rmm";
  bool const both        = mode == "both";
  std::size_t const n    = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 10000;
  std::size_t const mib  = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 1;
  int const runs         = argc > 4 ? std::atoi(argv[4]) : 3;
  std::size_t free_b{}, total_b{};
  CK(cudaMemGetInfo(&free_b, &total_b));
  // Half of the free memory for one pool, a quarter each for two.
  std::size_t const initial = (free_b / (both ? 4 : 2)) & ~std::size_t{255};

  cudaMemPool_t pool{};
  rmm_resource_t mr{};
  if (both || mode == "direct") {
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
  }
  if (both || mode != "direct") {
    std::uint64_t threshold = ~std::uint64_t{0};
    RK(rmm_async_create(&initial, &threshold, 0, &mr));
  }
  auto alloc = [&](bool direct, std::size_t b) {
    void* p{};
    if (direct) {
      CK(cudaMallocFromPoolAsync(&p, b, pool, 0));
    } else {
      RK(rmm_allocate_async(mr, b, nullptr, &p));
    }
    return p;
  };
  auto dealloc = [&](bool direct, void* p, std::size_t b) {
    if (direct) {
      CK(cudaFreeAsync(p, 0));
    } else {
      RK(rmm_deallocate_async(mr, p, b, nullptr));
    }
  };
  struct step {
    std::size_t size, idx;
    int op;
  };
  // One plan for every run, so that both paths see the same requests.
  std::mt19937_64 gen{0x5eed0001};
  std::uniform_int_distribution<std::size_t> size_d(1, mib << 20);
  std::uniform_int_distribution<int> op_d(0, 99);
  std::vector<step> plan(2 * n);
  for (auto& s : plan) {
    s.size = size_d(gen);
    s.op   = op_d(gen);
    s.idx  = gen();
  }
  auto timed = [&](bool direct) {
    std::vector<std::pair<void*, std::size_t>> live;
    live.reserve(n);
    std::size_t made = 0, ops = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (auto const& s : plan) {
      if (live.empty() || (s.op < 73 && made < n)) {
        live.emplace_back(alloc(direct, s.size), s.size);
        ++made;
      } else {
        auto i = s.idx % live.size();
        dealloc(direct, live[i].first, live[i].second);
        live[i] = live.back();
        live.pop_back();
      }
      ++ops;
    }
    for (auto& [p, b] : live) {
      dealloc(direct, p, b);
      ++ops;
    }
    CK(cudaStreamSynchronize(0));
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / ops;
  };
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  if (both) {
    timed(true);  // warm-up, both
    timed(false);
    std::vector<double> d, r;
    for (int i = 0; i < runs; ++i) {
      // Alternate which goes first, so neither always follows the other.
      if (i % 2 == 0) {
        d.push_back(timed(true));
        r.push_back(timed(false));
      } else {
        r.push_back(timed(false));
        d.push_back(timed(true));
      }
    }
    double const md = median(d), mr_ = median(r);
    std::printf("both N=%zu max=%zuMiB, %d runs each: direct %.1f ns/op, rmm C ABI %.1f ns/op, "
                "rmm / direct %.3f\n",
                n, mib, runs, md, mr_, mr_ / md);
    return 0;
  }
  bool const direct = mode == "direct";
  timed(direct);  // warm-up
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    best = std::min(best, timed(direct));
  }
  std::printf("%s N=%zu max=%zuMiB: %.1f ns/op (best of %d)\n", direct ? "direct" : "rmm C ABI", n,
              mib, best, runs);
  return 0;
}
