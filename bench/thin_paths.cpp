// How much of a thin resource's time is the CUDA runtime library's own? One W1-like plan (N
// live blocks, sizes up to MAX_MIB, 73% allocations) timed in one process through each path
// in turn, RUNS times, alternating the order:
//   async:  cudaMallocFromPoolAsync/cudaFreeAsync (cudart, what RMM calls),
//           cuMemAllocFromPoolAsync/cuMemFreeAsync (the driver, under cudart),
//           rmm_allocate_async/rmm_deallocate_async on rmm_async_create's pool (librmm.so)
//   cuda:   cudaMalloc/cudaFree, cuMemAlloc/cuMemFree, rmm_cuda_create's resource,
//           and (with -DWITH_RMM) rmm::mr::cuda_memory_resource and an RMM-like C++ class
//           calling cudaMalloc/cudaFree, both under a counting adaptor as in perf_anchor
// PLAN w2 or w4 replaces the W1 plan with bench-vs-rmm's churn: N steps over a working set
// of 1000 blocks (log-uniform 256 B..1 MiB), each step a free and an allocation; w4 puts
// allocation k on stream k % 4 and frees it on the next stream. PLAN w3 is bench-vs-rmm's
// W3: THREADS (default 4) fresh threads per timed run, each with its own stream and its own
// working set filled untimed, N steps each, timed from all ready to the last one done.
// PRE_FREE_GIB: see main.
// Each async path has its own pool made like RMM's cuda_async_memory_resource (a quarter of
// the free memory each, release threshold at the maximum). Built without -DWITH_RMM it has
// only the cudart and driver paths (to see whether loading librmm.so changes them).
//   managed: cudaMallocManaged/cudaFree, cuMemAllocManaged/cuMemFree, rmm_managed_create's
//           resource, and (with -DWITH_RMM) rmm::mr::managed_memory_resource and an RMM-like
//           class, both counted
// W1 is perf_anchor's: live bytes stay under 16 000 MiB; allocations and frees are also
// timed apart (the per-call clock reads cost ~20 ns of the microseconds each call takes).
// HOLD_GIB=G keeps G GiB allocated (cudaMalloc) while everything runs (a process where an
// earlier resource still holds memory); PRE_ASYNC=1 makes and destroys a cudaMallocAsync pool
// primed with half of the free memory before every timed run (as bench-vs-rmm's cuda_async
// cells do just before its cuda cells).
//   thin_paths async|cuda|managed [N] [MAX_MIB] [RUNS] [w1|w2|w3|w4]   prints medians (ns per
//   operation; W1 also ns per allocation and per free)
#ifdef WITH_RMM
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/mr/device/managed_memory_resource.hpp>
#include <rmm/rmm.h>
#endif

#include "cuda_probe.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#define DK(x)                                           \
  do {                                                  \
    int e = (x);                                        \
    if (e != 0) {                                       \
      std::fprintf(stderr, "%s: CUresult %d\n", #x, e); \
      std::exit(1);                                     \
    }                                                   \
  } while (0)
#ifdef WITH_RMM
#define RK(x)                                                         \
  do {                                                                \
    if ((x) != RMM_STATUS_SUCCESS) {                                  \
      std::fprintf(stderr, "%s: %s\n", #x, rmm_last_error_message()); \
      std::exit(1);                                                   \
    }                                                                 \
  } while (0)
#endif

using cu_alloc_pool_t    = int (*)(std::uintptr_t*, std::size_t, void*, void*);
using cu_free_async_t    = int (*)(std::uintptr_t, void*);
using cu_alloc_t         = int (*)(std::uintptr_t*, std::size_t);
using cu_free_t          = int (*)(std::uintptr_t);
using cu_alloc_managed_t = int (*)(std::uintptr_t*, std::size_t, unsigned);

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
  std::function<void*(std::size_t, cudaStream_t)> alloc;
  std::function<void(void*, std::size_t, cudaStream_t)> dealloc;
  std::vector<double> ns;
  std::vector<double> ns_after_free;      // PRE_FREE_GIB runs
  std::vector<double> alloc_ns, free_ns;  // W1: per allocation, per free
};

#ifdef WITH_RMM
// RMM 23.12's cuda_memory_resource (Managed: managed_memory_resource), as it is: the
// runtime call and nothing else.
template <bool Managed>
class rmm_like final : public rmm::mr::device_memory_resource {
  void* do_allocate(std::size_t bytes, rmm::cuda_stream_view) override
  {
    void* p{};
    auto const e = Managed ? cudaMallocManaged(&p, bytes) : cudaMalloc(&p, bytes);
    if (e != cudaSuccess) { throw std::bad_alloc{}; }
    return p;
  }
  void do_deallocate(void* p, std::size_t, rmm::cuda_stream_view) override { cudaFree(p); }
  [[nodiscard]] bool do_is_equal(device_memory_resource const& o) const noexcept override
  {
    return this == &o;
  }
};
using rmm_like_cuda    = rmm_like<false>;
using rmm_like_managed = rmm_like<true>;

// perf_anchor's counting adaptor (the same layer above both builds' cuda resource).
class counting final : public rmm::mr::device_memory_resource {
 public:
  explicit counting(device_memory_resource* up) : up_{up} {}

 private:
  void* do_allocate(std::size_t bytes, rmm::cuda_stream_view s) override
  {
    void* p        = up_->allocate(bytes, s);
    auto const now = cur_.fetch_add(bytes) + bytes;
    auto old       = peak_.load();
    while (now > old && !peak_.compare_exchange_weak(old, now)) {}
    calls_.fetch_add(1);
    return p;
  }
  void do_deallocate(void* p, std::size_t bytes, rmm::cuda_stream_view s) override
  {
    up_->deallocate(p, bytes, s);
    cur_.fetch_sub(bytes);
  }
  [[nodiscard]] bool do_is_equal(device_memory_resource const& o) const noexcept override
  {
    return this == &o;
  }
  device_memory_resource* up_;
  std::atomic<std::size_t> cur_{0}, peak_{0}, calls_{0};
};
#endif

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
  auto cu_alloc_mgd  = sym<cu_alloc_managed_t>(cu, "cuMemAllocManaged");

  std::size_t free_b{}, total_b{};
  CK(cudaMemGetInfo(&free_b, &total_b));
  std::size_t const initial = (free_b / 4) & ~std::size_t{255};
  std::vector<path> paths;
#ifdef WITH_RMM
  auto rmm_path = [](char const* name, rmm_resource_t mr) {
    return path{name,
                [mr](std::size_t s, cudaStream_t st) {
                  void* p{};
                  RK(rmm_allocate_async(mr, s, reinterpret_cast<rmm_stream_t>(st), &p));
                  return p;
                },
                [mr](void* p, std::size_t s, cudaStream_t st) {
                  RK(rmm_deallocate_async(mr, p, s, reinterpret_cast<rmm_stream_t>(st)));
                },
                {}};
  };
  auto cxx_path = [](char const* name, rmm::mr::device_memory_resource* r) {
    return path{
      name,
      [r](std::size_t s, cudaStream_t st) { return r->allocate(s, rmm::cuda_stream_view{st}); },
      [r](void* p, std::size_t s, cudaStream_t st) {
        r->deallocate(p, s, rmm::cuda_stream_view{st});
      },
      {}};
  };
#endif
  if (async) {
    cudaMemPool_t const a = make_rmm_like_pool(initial), b = make_rmm_like_pool(initial);
    paths.push_back({"cudart cudaMallocFromPoolAsync",
                     [a](std::size_t s, cudaStream_t st) {
                       void* p{};
                       CK(cudaMallocFromPoolAsync(&p, s, a, st));
                       return p;
                     },
                     [](void* p, std::size_t, cudaStream_t st) { CK(cudaFreeAsync(p, st)); },
                     {}});
    paths.push_back({"driver cuMemAllocFromPoolAsync",
                     [b, cu_alloc_pool](std::size_t s, cudaStream_t st) {
                       std::uintptr_t p{};
                       DK(cu_alloc_pool(&p, s, b, st));
                       return reinterpret_cast<void*>(p);
                     },
                     [cu_free_async](void* p, std::size_t, cudaStream_t st) {
                       DK(cu_free_async(reinterpret_cast<std::uintptr_t>(p), st));
                     },
                     {}});
#ifdef WITH_RMM
    rmm_resource_t mr{};
    std::uint64_t threshold = ~std::uint64_t{0};
    RK(rmm_async_create(&initial, &threshold, 0, &mr));
    paths.push_back(rmm_path("librmm rmm_allocate_async (async)", mr));
#endif
  } else {
    // cuda and managed: the runtime's blocking malloc and the driver's, both freed with
    // their library's free, then (with -DWITH_RMM) the C ABI and the counted C++ classes.
    bool const managed = kind == "managed";
    paths.push_back({managed ? "cudart cudaMallocManaged" : "cudart cudaMalloc",
                     [managed](std::size_t s, cudaStream_t) {
                       void* p{};
                       CK(managed ? cudaMallocManaged(&p, s) : cudaMalloc(&p, s));
                       return p;
                     },
                     [](void* p, std::size_t, cudaStream_t) { CK(cudaFree(p)); },
                     {}});
    paths.push_back({managed ? "driver cuMemAllocManaged" : "driver cuMemAlloc",
                     [managed, cu_alloc, cu_alloc_mgd](std::size_t s, cudaStream_t) {
                       std::uintptr_t p{};
                       DK(managed ? cu_alloc_mgd(&p, s, 1 /* CU_MEM_ATTACH_GLOBAL */)
                                  : cu_alloc(&p, s));
                       return reinterpret_cast<void*>(p);
                     },
                     [cu_free](void* p, std::size_t, cudaStream_t) {
                       DK(cu_free(reinterpret_cast<std::uintptr_t>(p)));
                     },
                     {}});
#ifdef WITH_RMM
    rmm_resource_t mr{};
    RK(managed ? rmm_managed_create(&mr) : rmm_cuda_create(&mr));
    paths.push_back(rmm_path(
      managed ? "librmm rmm_allocate_async (managed)" : "librmm rmm_allocate_async (cuda)", mr));
    static rmm::mr::cuda_memory_resource ours_cuda;
    static rmm::mr::managed_memory_resource ours_managed;
    static rmm_like_cuda theirs_cuda;
    static rmm_like_managed theirs_managed;
    static counting ours_counted{
      managed ? static_cast<rmm::mr::device_memory_resource*>(&ours_managed) : &ours_cuda};
    static counting theirs_counted{
      managed ? static_cast<rmm::mr::device_memory_resource*>(&theirs_managed) : &theirs_cuda};
    paths.push_back(cxx_path(managed ? "C++ rmm-rs managed_memory_resource (counted)"
                                     : "C++ rmm-rs cuda_memory_resource (counted)",
                             &ours_counted));
    paths.push_back(cxx_path(managed ? "C++ RMM-like cudaMallocManaged class (counted)"
                                     : "C++ RMM-like cudaMalloc class (counted)",
                             &theirs_counted));
#endif
  }

  std::string const plan_kind = argc > 5 ? argv[5] : "w1";
  std::vector<cudaStream_t> streams{nullptr};
  if (plan_kind == "w4") {
    streams.resize(4);
    for (auto& st : streams) {
      CK(cudaStreamCreate(&st));
    }
  }
  struct step {
    std::size_t size, idx;
    int op;
  };
  std::mt19937_64 gen{0x5eed0001};
  std::uniform_int_distribution<std::size_t> size_d(1, mib << 20);
  std::uniform_int_distribution<int> op_d(0, 99);
  std::uniform_real_distribution<double> log_d(std::log(256.0), std::log(double(1 << 20)));
  std::uniform_int_distribution<std::size_t> idx_d(0, 999);
  bool const churn = plan_kind != "w1";
  std::vector<step> plan(churn ? n + 1000 : 2 * n);
  for (std::size_t i = 0; i < plan.size(); ++i) {
    auto& s = plan[i];
    if (churn) {
      s.size = static_cast<std::size_t>(std::exp(log_d(gen)));
      s.idx  = i < 1000 ? i : idx_d(gen);
      s.op   = 0;
    } else {
      s.size = size_d(gen);
      s.op   = op_d(gen);
      s.idx  = gen();
    }
  }
  // bench-vs-rmm's churn: the first 1000 steps fill the working set (untimed), each later
  // step frees block idx and allocates a new one in its place.
  auto timed_churn = [&](path& p) {
    struct blk {
      void* p;
      std::size_t size, si;
    };
    std::vector<blk> live(1000);
    std::size_t k = 0;
    auto const ns = streams.size();
    for (std::size_t i = 0; i < 1000; ++i) {
      auto const si = k++ % ns;
      live[i]       = {p.alloc(plan[i].size, streams[si]), plan[i].size, si};
    }
    auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 1000; i < plan.size(); ++i) {
      auto& b = live[plan[i].idx];
      p.dealloc(b.p, b.size, streams[(b.si + (ns > 1 ? 1 : 0)) % ns]);
      auto const si = k++ % ns;
      b             = {p.alloc(plan[i].size, streams[si]), plan[i].size, si};
    }
    double const el =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    for (auto& b : live) {
      p.dealloc(b.p, b.size, streams[b.si]);
    }
    CK(cudaDeviceSynchronize());
    return el / double(2 * n);
  };
  // W3: perf_anchor's threads_run over one path.
  std::size_t const n_threads =
    std::getenv("THREADS") ? std::strtoul(std::getenv("THREADS"), nullptr, 10) : 4;
  std::vector<cudaStream_t> own(plan_kind == "w3" ? n_threads : 0);
  for (auto& st : own) {
    CK(cudaStreamCreate(&st));
  }
  auto timed_threads = [&](path& p) {
    using clk = std::chrono::steady_clock;
    std::atomic<std::size_t> ready{0};
    std::atomic<bool> go{false};
    std::vector<clk::time_point> ends(n_threads);
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < n_threads; ++t) {
      pool.emplace_back([&, t] {
        // A fresh thread has no current context until its first runtime call (the driver's
        // entry points need one); perf_anchor's threads get it from their first allocation.
        CK(cudaFree(nullptr));
        std::mt19937_64 g{100 + t};
        std::uniform_real_distribution<double> ld(std::log(256.0), std::log(double(1 << 20)));
        std::uniform_int_distribution<std::size_t> id(0, 999);
        std::vector<std::pair<void*, std::size_t>> live(1000);
        for (auto& b : live) {
          b.second = static_cast<std::size_t>(std::exp(ld(g)));
          b.first  = p.alloc(b.second, own[t]);
        }
        std::vector<std::pair<std::size_t, std::size_t>> steps(n);
        for (auto& s : steps) {
          s = {id(g), static_cast<std::size_t>(std::exp(ld(g)))};
        }
        ready.fetch_add(1);
        while (!go.load(std::memory_order_acquire)) {
          std::this_thread::yield();
        }
        for (auto const& [i, size] : steps) {
          p.dealloc(live[i].first, live[i].second, own[t]);
          live[i] = {p.alloc(size, own[t]), size};
        }
        ends[t] = clk::now();
        for (auto& b : live) {
          p.dealloc(b.first, b.second, own[t]);
        }
        CK(cudaStreamSynchronize(own[t]));
      });
    }
    while (ready.load() < n_threads) {
      std::this_thread::yield();
    }
    auto const t0 = clk::now();
    go.store(true, std::memory_order_release);
    for (auto& th : pool) {
      th.join();
    }
    double const el =
      std::chrono::duration<double, std::nano>(*std::max_element(ends.begin(), ends.end()) - t0)
        .count();
    return el / double(2 * n * n_threads);
  };
  auto timed = [&](path& p) {
    if (plan_kind == "w3") { return timed_threads(p); }
    if (churn) { return timed_churn(p); }
    using clk                   = std::chrono::steady_clock;
    std::size_t const max_usage = std::size_t{16000} << 20;  // perf_anchor's W1 cap
    std::vector<std::pair<void*, std::size_t>> live;
    live.reserve(n);
    std::size_t made = 0, ops = 0, allocs = 0, frees = 0, live_bytes = 0;
    double alloc_t = 0, free_t = 0;
    auto free_one = [&](std::size_t i) {
      auto const t = clk::now();
      p.dealloc(live[i].first, live[i].second, nullptr);
      free_t += std::chrono::duration<double, std::nano>(clk::now() - t).count();
      live_bytes -= live[i].second;
      ++frees;
    };
    auto t0 = clk::now();
    for (auto const& s : plan) {
      if (live.empty() || (s.op < 73 && made < n && live_bytes + s.size < max_usage)) {
        auto const t = clk::now();
        void* q      = p.alloc(s.size, nullptr);
        alloc_t += std::chrono::duration<double, std::nano>(clk::now() - t).count();
        live.emplace_back(q, s.size);
        live_bytes += s.size;
        ++made;
        ++allocs;
      } else {
        auto i = s.idx % live.size();
        free_one(i);
        live[i] = live.back();
        live.pop_back();
      }
      ++ops;
    }
    for (std::size_t i = 0; i < live.size(); ++i) {
      free_one(i);
      ++ops;
    }
    CK(cudaStreamSynchronize(0));
    p.alloc_ns.push_back(alloc_t / double(allocs));
    p.free_ns.push_back(free_t / double(frees));
    return std::chrono::duration<double, std::nano>(clk::now() - t0).count() / double(ops);
  };
  for (auto& p : paths) {
    timed(p);  // warm-up
    p.alloc_ns.clear();
    p.free_ns.clear();
  }
  // HOLD_GIB / PRE_ASYNC: see the top.
  char const* const hold_env = std::getenv("HOLD_GIB");
  void* held{};
  if (hold_env != nullptr && std::strtoul(hold_env, nullptr, 10) > 0) {
    CK(cudaMalloc(&held, std::strtoul(hold_env, nullptr, 10) << 30));
  }
  bool const pre_async = std::getenv("PRE_ASYNC") != nullptr;
  auto async_cycle     = [&] {
    std::size_t f{}, t{};
    CK(cudaMemGetInfo(&f, &t));
    CK(cudaMemPoolDestroy(make_rmm_like_pool((f / 2) & ~std::size_t{255})));
  };
  // PRE_FREE_GIB=G: every path is timed twice a round, once right after a cudaMalloc and
  // cudaFree of G GiB and once without, in alternating order (bench-vs-rmm's arena cells take
  // and give back most of the GPU just before the thin cells run: does the driver's work after
  // such a free slow the calls that follow?). Both are compared within the one process.
  char const* const pre_env  = std::getenv("PRE_FREE_GIB");
  std::size_t const pre_free = pre_env ? std::strtoul(pre_env, nullptr, 10) << 30 : 0;
  auto big_free              = [&] {
    // As bench-vs-rmm's W1 arena: at most the free memory less 64 MiB.
    std::size_t free_b{}, total_b{};
    CK(cudaMemGetInfo(&free_b, &total_b));
    void* q{};
    CK(cudaMalloc(&q, std::min(pre_free, free_b - (std::size_t{64} << 20))));
    CK(cudaFree(q));
  };
  for (int r = 0; r < runs; ++r) {
    // Rotate which path goes first, so that none always follows another.
    for (std::size_t k = 0; k < paths.size(); ++k) {
      auto& p = paths[(k + r) % paths.size()];
      if (pre_async) { async_cycle(); }
      if (pre_free == 0) {
        p.ns.push_back(timed(p));
        continue;
      }
      for (int half = 0; half < 2; ++half) {
        if (((r + half) & 1) != 0) {
          big_free();
          p.ns_after_free.push_back(timed(p));
        } else {
          p.ns.push_back(timed(p));
        }
      }
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  double const base = median(paths[0].ns);
  std::printf("%s %s N=%zu max=%zuMiB%s, %d runs:",
              kind.c_str(),
              plan_kind.c_str(),
              n,
              mib,
              plan_kind == "w3" ? (" T=" + std::to_string(n_threads)).c_str() : "",
              runs);
  for (auto& p : paths) {
    std::printf("  %s %.1f (%.3f)", p.name.c_str(), median(p.ns), median(p.ns) / base);
  }
  std::printf("\n");
  if (!paths[0].alloc_ns.empty()) {
    double const ab = median(paths[0].alloc_ns), fb = median(paths[0].free_ns);
    std::printf("  per allocation / per free, ns (÷ the first path's):");
    for (auto& p : paths) {
      std::printf("  %s %.1f (%.3f) / %.1f (%.3f)",
                  p.name.c_str(),
                  median(p.alloc_ns),
                  median(p.alloc_ns) / ab,
                  median(p.free_ns),
                  median(p.free_ns) / fb);
    }
    std::printf("\n");
  }
  if (held != nullptr) { CK(cudaFree(held)); }
  if (pre_free != 0) {
    std::printf("  after a %zu GiB free, ns (÷ the same path without):", pre_free >> 30);
    for (auto& p : paths) {
      std::printf("  %s %.1f (%.3f)",
                  p.name.c_str(),
                  median(p.ns_after_free),
                  median(p.ns_after_free) / median(p.ns));
    }
    std::printf("\n");
  }
  return 0;
}
