// How much of a thin resource's time is the CUDA runtime library's own? One W1-like plan (N
// live blocks, sizes up to MAX_MIB, 73% allocations) timed in one process through each path
// in turn, RUNS times, alternating the order:
//   async:  cudaMallocFromPoolAsync/cudaFreeAsync (cudart, what RMM calls),
//           cuMemAllocFromPoolAsync/cuMemFreeAsync (the driver, under cudart),
//           rmm_allocate_async/rmm_deallocate_async on rmm_async_create's pool (librmm.so)
//   cuda:   cudaMalloc/cudaFree, cuMemAlloc/cuMemFree, rmm_cuda_create's resource
// Each async path has its own pool made like RMM's cuda_async_memory_resource (a quarter of
// the free memory each, release threshold at the maximum). Built without -DWITH_RMM it has
// only the cudart and driver paths (to see whether loading librmm.so changes them).
//   thin_paths async|cuda [N] [MAX_MIB] [RUNS]     prints medians (ns per operation)
#ifdef WITH_RMM
#include <rmm/rmm.h>
#endif

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#define CK(x)                                                      \
  do {                                                             \
    auto e = (x);                                                  \
    if (e != cudaSuccess) {                                        \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); \
      std::exit(1);                                                \
    }                                                              \
  } while (0)
#define DK(x)                                           \
  do {                                                  \
    int e = (x);                                        \
    if (e != 0) {                                       \
      std::fprintf(stderr, "%s: CUresult %d\n", #x, e); \
      std::exit(1);                                     \
    }                                                   \
  } while (0)
#ifdef WITH_RMM
#define RK(x)                                                          \
  do {                                                                 \
    if ((x) != RMM_STATUS_SUCCESS) {                                   \
      std::fprintf(stderr, "%s: %s\n", #x, rmm_last_error_message()); \
      std::exit(1);                                                    \
    }                                                                  \
  } while (0)
#endif

using cu_alloc_pool_t = int (*)(std::uintptr_t*, std::size_t, void*, void*);
using cu_free_async_t = int (*)(std::uintptr_t, void*);
using cu_alloc_t      = int (*)(std::uintptr_t*, std::size_t);
using cu_free_t       = int (*)(std::uintptr_t);

template <typename F>
F sym(void* lib, char const* name)
{
  void* f = dlsym(lib, name);
  if (f == nullptr) {
    std::fprintf(stderr, "no %s in libcuda.so.1\n", name);
    std::exit(1);
  }
  return reinterpret_cast<F>(f);
}

struct path {
  std::string name;
  std::function<void*(std::size_t)> alloc;
  std::function<void(void*, std::size_t)> dealloc;
  std::vector<double> ns;
};

int main(int argc, char** argv)
{
  std::string const kind = argc > 1 ? argv[1] : "async";
  std::size_t const n    = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 10000;
  std::size_t const mib  = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 1;
  int const runs         = argc > 4 ? std::atoi(argv[4]) : 7;
  bool const async       = kind == "async";

  CK(cudaFree(nullptr));  // the primary context, current on this thread
  void* cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (cu == nullptr) {
    std::fprintf(stderr, "libcuda.so.1: %s\n", dlerror());
    return 1;
  }
  auto cu_alloc_pool = sym<cu_alloc_pool_t>(cu, "cuMemAllocFromPoolAsync");
  auto cu_free_async = sym<cu_free_async_t>(cu, "cuMemFreeAsync");
  auto cu_alloc      = sym<cu_alloc_t>(cu, "cuMemAlloc_v2");
  auto cu_free       = sym<cu_free_t>(cu, "cuMemFree_v2");

  std::size_t free_b{}, total_b{};
  CK(cudaMemGetInfo(&free_b, &total_b));
  std::size_t const initial = (free_b / 4) & ~std::size_t{255};
  auto make_pool            = [&] {
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
    CK(cudaMallocFromPoolAsync(&p, initial, pool, 0));
    CK(cudaFreeAsync(p, 0));
    CK(cudaStreamSynchronize(0));
    return pool;
  };

  std::vector<path> paths;
#ifdef WITH_RMM
  auto rmm_path = [](char const* name, rmm_resource_t mr) {
    return path{name,
                [mr](std::size_t s) {
                  void* p{};
                  RK(rmm_allocate_async(mr, s, nullptr, &p));
                  return p;
                },
                [mr](void* p, std::size_t s) { RK(rmm_deallocate_async(mr, p, s, nullptr)); },
                {}};
  };
#endif
  if (async) {
    cudaMemPool_t const a = make_pool(), b = make_pool();
    paths.push_back({"cudart cudaMallocFromPoolAsync",
                     [a](std::size_t s) {
                       void* p{};
                       CK(cudaMallocFromPoolAsync(&p, s, a, 0));
                       return p;
                     },
                     [](void* p, std::size_t) { CK(cudaFreeAsync(p, 0)); },
                     {}});
    paths.push_back({"driver cuMemAllocFromPoolAsync",
                     [b, cu_alloc_pool](std::size_t s) {
                       std::uintptr_t p{};
                       DK(cu_alloc_pool(&p, s, b, nullptr));
                       return reinterpret_cast<void*>(p);
                     },
                     [cu_free_async](void* p, std::size_t) {
                       DK(cu_free_async(reinterpret_cast<std::uintptr_t>(p), nullptr));
                     },
                     {}});
#ifdef WITH_RMM
    rmm_resource_t mr{};
    std::uint64_t threshold = ~std::uint64_t{0};
    RK(rmm_async_create(&initial, &threshold, 0, &mr));
    paths.push_back(rmm_path("librmm rmm_allocate_async (async)", mr));
#endif
  } else {
    paths.push_back({"cudart cudaMalloc",
                     [](std::size_t s) {
                       void* p{};
                       CK(cudaMalloc(&p, s));
                       return p;
                     },
                     [](void* p, std::size_t) { CK(cudaFree(p)); },
                     {}});
    paths.push_back({"driver cuMemAlloc",
                     [cu_alloc](std::size_t s) {
                       std::uintptr_t p{};
                       DK(cu_alloc(&p, s));
                       return reinterpret_cast<void*>(p);
                     },
                     [cu_free](void* p, std::size_t) {
                       DK(cu_free(reinterpret_cast<std::uintptr_t>(p)));
                     },
                     {}});
#ifdef WITH_RMM
    rmm_resource_t mr{};
    RK(rmm_cuda_create(&mr));
    paths.push_back(rmm_path("librmm rmm_allocate_async (cuda)", mr));
#endif
  }

  struct step {
    std::size_t size, idx;
    int op;
  };
  std::mt19937_64 gen{0x5eed0001};
  std::uniform_int_distribution<std::size_t> size_d(1, mib << 20);
  std::uniform_int_distribution<int> op_d(0, 99);
  std::vector<step> plan(2 * n);
  for (auto& s : plan) {
    s.size = size_d(gen);
    s.op   = op_d(gen);
    s.idx  = gen();
  }
  auto timed = [&](path& p) {
    std::vector<std::pair<void*, std::size_t>> live;
    live.reserve(n);
    std::size_t made = 0, ops = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (auto const& s : plan) {
      if (live.empty() || (s.op < 73 && made < n)) {
        live.emplace_back(p.alloc(s.size), s.size);
        ++made;
      } else {
        auto i = s.idx % live.size();
        p.dealloc(live[i].first, live[i].second);
        live[i] = live.back();
        live.pop_back();
      }
      ++ops;
    }
    for (auto& [q, b] : live) {
      p.dealloc(q, b);
      ++ops;
    }
    CK(cudaStreamSynchronize(0));
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
           double(ops);
  };
  for (auto& p : paths) {
    timed(p);  // warm-up
  }
  for (int r = 0; r < runs; ++r) {
    // Rotate which path goes first, so that none always follows another.
    for (std::size_t k = 0; k < paths.size(); ++k) {
      auto& p = paths[(k + r) % paths.size()];
      p.ns.push_back(timed(p));
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  double const base = median(paths[0].ns);
  std::printf("%s N=%zu max=%zuMiB, %d runs:", kind.c_str(), n, mib, runs);
  for (auto& p : paths) {
    std::printf("  %s %.1f (%.3f)", p.name.c_str(), median(p.ns), median(p.ns) / base);
  }
  std::printf("\n");
  return 0;
}
