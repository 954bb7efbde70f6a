// vs_rmm_bench.cpp: the side-by-side benchmark of bench/vs-rmm/, one source written against the
// RMM 26.x C++ API (the 26.06/26.10 `rmm::mr` classes, `cuda::mr::any_resource`,
// `rmm::device_async_resource_ref`, `cuda::stream_ref`). run.sh compiles it twice with the same
// compiler and flags: against RAPIDS's compiled librmm 26.10 (the librmm-cu13 wheel) and against
// rmm-rs's installed package (-DRMM_API_VERSION=2610). The variant's name comes from
// -DVSR_VARIANT=<token>.
//
// Workloads (BENCH.md): W1 random (RMM's random_allocations loop and cases), W2 churn, W3 threads
// (T = 1, 2, 4, 8, 16), W4 cross-stream. Resources: pool, binning (bins 2^18..2^22 over a pool),
// arena, cuda_async, cuda. The step counts are those of the 23.12 harness (bench-vs-rmm), so that
// its cells and these line up; the runtime baselines (cuda, cuda_async) run fewer steps.
// Every resource that takes memory from an upstream takes it from `counting_upstream` (below),
// a CCCL resource over `rmm::mr::cuda_memory_resource` that records the peak; cuda_async's peak
// is its pool's cudaMemPoolAttrReservedMemHigh. A cell is one warm-up run, then three timed
// runs (one when the warm-up took longer than --slow-s, none past --lone-s), and its median.
//
// vs_rmm_bench [--json FILE] [--resources pool,binning,arena,cuda_async,cuda]
//              [--workloads w2,w1,w4,w3] [--threads 1,2,4,8,16] [--w3-steps N] [--quick]
//              [--slow-s S] [--lone-s S] [--deadline-s S]
// Exit status: 0 when every cell ran, 1 when a cell failed or was skipped, 2 for a bad command
// line, 3 when the library could not be used at all (no device: the JSON says why).
#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/version_config.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#define VSR_STR2(x) #x
#define VSR_STR(x)  VSR_STR2(x)
#ifdef VSR_VARIANT
#define VSR_VARIANT_NAME VSR_STR(VSR_VARIANT)
#else
#define VSR_VARIANT_NAME "unnamed"
#endif

namespace {

constexpr std::size_t MiB   = std::size_t{1} << 20;
constexpr std::size_t ALIGN = rmm::CUDA_ALLOCATION_ALIGNMENT;
using clock_type            = std::chrono::steady_clock;
using device_resource       = cuda::mr::any_resource<cuda::mr::device_accessible>;

double since(clock_type::time_point t0)
{
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

cuda::stream_ref default_stream() { return cuda::stream_ref{cudaStream_t{nullptr}}; }

// Waits for a stream through the runtime (not stream_ref::sync, which goes to the driver).
void sync(cuda::stream_ref s)
{
  if (cudaStreamSynchronize(s.get()) != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error("cudaStreamSynchronize failed");
  }
}

// ------------------------------------------------------------------------------------------
// The upstream of every sub-allocator: RMM's cuda_memory_resource, counted. Copies share the
// counters (a pool keeps its own copy inside its any_resource).
struct upstream_counters {
  std::atomic<std::size_t> current{0};
  std::atomic<std::size_t> peak{0};
};

class counting_upstream {
 public:
  explicit counting_upstream(std::shared_ptr<upstream_counters> counters)
    : counters_{std::move(counters)}
  {
  }

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment)
  {
    void* ptr = upstream_.allocate(stream, bytes, alignment);
    taken(bytes);
    return ptr;
  }

  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment) noexcept
  {
    upstream_.deallocate(stream, ptr, bytes, alignment);
    counters_->current.fetch_sub(bytes);
  }

  void* allocate_sync(std::size_t bytes, std::size_t alignment)
  {
    void* ptr = upstream_.allocate_sync(bytes, alignment);
    taken(bytes);
    return ptr;
  }

  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment) noexcept
  {
    upstream_.deallocate_sync(ptr, bytes, alignment);
    counters_->current.fetch_sub(bytes);
  }

  bool operator==(counting_upstream const& other) const noexcept
  {
    return counters_ == other.counters_;
  }
  bool operator!=(counting_upstream const& other) const noexcept { return !(*this == other); }

  friend void get_property(counting_upstream const&, cuda::mr::device_accessible) noexcept {}

 private:
  void taken(std::size_t bytes)
  {
    auto const now = counters_->current.fetch_add(bytes) + bytes;
    auto old       = counters_->peak.load();
    while (now > old && !counters_->peak.compare_exchange_weak(old, now)) {}
  }

  rmm::mr::cuda_memory_resource upstream_{};
  std::shared_ptr<upstream_counters> counters_;
};

static_assert(cuda::mr::resource_with<counting_upstream, cuda::mr::device_accessible>);

bool have_device()
{
  static bool const has = [] {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  }();
  return has;
}

std::size_t reserved_high(cudaMemPool_t pool)
{
  std::uint64_t value = 0;
  if (!have_device() ||
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &value) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return static_cast<std::size_t>(value);
}

void reset_reserved_high(cudaMemPool_t pool)
{
  std::uint64_t zero = 0;
  if (have_device() &&
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &zero) != cudaSuccess) {
    cudaGetLastError();
  }
}

std::size_t round_down_256(std::size_t v) { return v & ~std::size_t{255}; }
std::size_t free_memory() { return rmm::available_device_memory().first; }

// ------------------------------------------------------------------------------------------
// A resource under test. `top` is what the workloads allocate from.
enum class sizing {
  large,  // W1-W3: pools at half of free memory, the arena at free memory less 64 MiB
  grow    // W4: pools from nothing, the arena at `arena_bytes`
};

struct subject {
  std::shared_ptr<upstream_counters> counters = std::make_shared<upstream_counters>();
  std::optional<device_resource> pool;  // under binning
  std::optional<rmm::mr::cuda_async_memory_resource> async;
  std::optional<device_resource> top;
  std::string note;

  subject()                          = default;
  subject(subject const&)            = delete;
  subject& operator=(subject const&) = delete;
  ~subject()
  {
    cudaDeviceSynchronize();
    top.reset();
    pool.reset();
    async.reset();
  }

  [[nodiscard]] std::size_t peak_upstream() const
  {
    if (async) { return reserved_high(async->pool_handle()); }
    return counters->peak.load();
  }
};

std::unique_ptr<subject> make_subject(std::string const& name, sizing sz, std::size_t arena_bytes)
{
  auto s = std::make_unique<subject>();
  if (name == "cuda") {
    s->top.emplace(counting_upstream{s->counters});
  } else if (name == "cuda_async") {
    // Primed with half of free memory for W1-W3 (as RMM 23.12 did by default), empty for W4;
    // the release threshold at its maximum (BENCH.md).
    std::size_t const initial = sz == sizing::large ? round_down_256(free_memory() / 2) : 0;
    s->async.emplace(initial, std::numeric_limits<std::size_t>::max());
    reset_reserved_high(s->async->pool_handle());
    s->top.emplace(*s->async);
  } else if (name == "pool" || name == "binning") {
    std::size_t const initial = sz == sizing::large ? round_down_256(free_memory() / 2) : 0;
    device_resource pool{rmm::mr::pool_memory_resource{counting_upstream{s->counters}, initial}};
    if (name == "pool") {
      s->top.emplace(std::move(pool));
    } else {
      s->pool.emplace(std::move(pool));
      s->top.emplace(rmm::mr::binning_memory_resource{*s->pool, 18, 22});
    }
  } else if (name == "arena") {
    std::size_t const size =
      sz == sizing::large ? round_down_256(free_memory() - 64 * MiB) : arena_bytes;
    s->top.emplace(rmm::mr::arena_memory_resource{counting_upstream{s->counters}, size});
    s->note = "arena " + std::to_string(size / MiB) + " MiB";
  } else {
    throw std::invalid_argument("unknown resource " + name);
  }
  return s;
}

// ------------------------------------------------------------------------------------------
struct sample {
  double seconds{0};
  std::size_t ops{0};
  std::size_t peak_live{0};
  std::size_t failures{0};
};

// W1: RMM's random_allocations loop. 2N steps; each draws a size uniform in [1, max MiB]; while
// something is live it allocates with probability 73% when fewer than N were allocated and the
// live bytes plus the size stay under 16 000 MiB, else frees a uniformly chosen live block (as
// does a failed allocation). The draws are made before the clock starts.
sample random_allocations(rmm::device_async_resource_ref mr, std::size_t n, std::size_t max_mib)
{
  struct draw {
    std::size_t size;
    std::size_t index;
    int op;
  };
  std::mt19937_64 gen{0x72616e64u};
  std::uniform_int_distribution<std::size_t> size_d(1, max_mib * MiB);
  std::uniform_int_distribution<std::size_t> index_d(0, n - 1);
  std::uniform_int_distribution<int> op_d(0, 99);
  std::vector<draw> plan(2 * n);
  for (auto& d : plan) {
    d.size  = size_d(gen);
    d.index = index_d(gen);
    d.op    = op_d(gen);
  }
  std::size_t const max_usage = 16000 * MiB;
  std::vector<std::pair<void*, std::size_t>> live;
  live.reserve(n);
  std::size_t allocated = 0, live_bytes = 0;
  sample s;
  auto const stream = default_stream();
  auto const t0     = clock_type::now();
  for (auto const& d : plan) {
    bool allocate = live.empty() || (d.op < 73 && allocated < n && live_bytes + d.size < max_usage);
    if (allocate) {
      try {
        live.emplace_back(mr.allocate(stream, d.size, ALIGN), d.size);
        ++allocated;
        ++s.ops;
        live_bytes += d.size;
        s.peak_live = std::max(s.peak_live, live_bytes);
        continue;
      } catch (rmm::bad_alloc const&) {
        ++s.failures;
      }
    }
    if (!live.empty()) {
      std::size_t const i = d.index % live.size();
      auto const victim   = live[i];
      live[i]             = live.back();
      live.pop_back();
      mr.deallocate(stream, victim.first, victim.second, ALIGN);
      live_bytes -= victim.second;
      ++s.ops;
    }
  }
  for (auto const& [p, bytes] : live) {
    mr.deallocate(stream, p, bytes, ALIGN);
    ++s.ops;
  }
  sync(stream);
  s.seconds = since(t0);
  return s;
}

// W2 and its relatives: 1 000 live blocks, sizes log-uniform in [256 B, 1 MiB]; each step frees
// one chosen uniformly and allocates a new one. Allocation k goes to streams[k % n]; with
// `cross`, a block allocated on streams[i] is freed on streams[(i + 1) % n] (W4).
struct churn {
  struct block {
    void* ptr;
    std::size_t bytes;
    std::size_t stream;
  };
  std::vector<block> live;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> plan;  // (victim, new size)
  std::size_t next{0};
  std::size_t live_bytes{0};
  std::size_t peak{0};

  static std::size_t size(std::mt19937_64& gen)
  {
    std::uniform_real_distribution<double> u(std::log(256.0), std::log(double(MiB)));
    return static_cast<std::size_t>(std::exp(u(gen)));
  }

  void fill(rmm::device_async_resource_ref mr,
            std::size_t steps,
            std::uint64_t seed,
            std::vector<cuda::stream_ref> const& streams)
  {
    std::mt19937_64 gen{seed};
    live.clear();
    next       = 0;
    live_bytes = 0;
    for (int i = 0; i < 1000; ++i) {
      auto const bytes = size(gen);
      auto const si    = next++ % streams.size();
      live.push_back({mr.allocate(streams[si], bytes, ALIGN), bytes, si});
      live_bytes += bytes;
    }
    peak = live_bytes;
    plan.resize(steps);
    std::uniform_int_distribution<std::uint32_t> victim_d(0, 999);
    for (auto& [victim, bytes] : plan) {
      victim = victim_d(gen);
      bytes  = static_cast<std::uint32_t>(size(gen));
    }
  }

  void steps(rmm::device_async_resource_ref mr,
             std::vector<cuda::stream_ref> const& streams,
             bool cross)
  {
    auto const n = streams.size();
    for (auto const& [victim, bytes] : plan) {
      auto& b = live[victim];
      mr.deallocate(streams[cross ? (b.stream + 1) % n : b.stream], b.ptr, b.bytes, ALIGN);
      live_bytes -= b.bytes;
      auto const si = next++ % n;
      b             = {mr.allocate(streams[si], bytes, ALIGN), bytes, si};
      live_bytes += bytes;
      peak = std::max(peak, live_bytes);
    }
  }

  void drain(rmm::device_async_resource_ref mr, std::vector<cuda::stream_ref> const& streams)
  {
    for (auto const& b : live) {
      mr.deallocate(streams[b.stream], b.ptr, b.bytes, ALIGN);
    }
    live.clear();
    for (auto const& s : streams) {
      sync(s);
    }
  }
};

sample churn_run(rmm::device_async_resource_ref mr,
                 std::size_t steps,
                 std::uint64_t seed,
                 std::vector<cuda::stream_ref> const& streams,
                 bool cross)
{
  churn c;
  c.fill(mr, steps, seed, streams);
  auto const t0 = clock_type::now();
  c.steps(mr, streams, cross);
  sample s;
  s.seconds   = since(t0);
  s.ops       = 2 * steps;
  s.peak_live = c.peak;
  c.drain(mr, streams);
  return s;
}

// W3: T threads, each with its own stream and its own churn on the one resource; timed from
// the moment every thread is ready until the last one has made its steps.
sample threads_run(rmm::device_async_resource_ref mr,
                   std::size_t steps,
                   std::vector<cuda::stream_ref> const& streams,
                   std::size_t t)
{
  std::atomic<std::size_t> ready{0};
  std::atomic<bool> go{false};
  std::vector<clock_type::time_point> done(t);
  std::vector<std::size_t> peaks(t, 0);
  std::vector<std::exception_ptr> errors(t);
  std::vector<std::thread> workers;
  for (std::size_t i = 0; i < t; ++i) {
    workers.emplace_back([&, i] {
      churn c;
      std::vector<cuda::stream_ref> const mine{streams[i]};
      try {
        c.fill(mr, steps, 1000 + i, mine);
      } catch (...) {
        errors[i] = std::current_exception();
      }
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
        std::this_thread::yield();
      }
      if (!errors[i]) {
        try {
          c.steps(mr, mine, false);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      }
      done[i]  = clock_type::now();
      peaks[i] = c.peak;
      try {
        c.drain(mr, mine);
      } catch (...) {
        if (!errors[i]) { errors[i] = std::current_exception(); }
      }
    });
  }
  while (ready.load() < t) {
    std::this_thread::yield();
  }
  auto const t0 = clock_type::now();
  go.store(true, std::memory_order_release);
  for (auto& w : workers) {
    w.join();
  }
  for (auto const& e : errors) {
    if (e) { std::rethrow_exception(e); }
  }
  sample s;
  s.seconds =
    std::chrono::duration<double>(*std::max_element(done.begin(), done.end()) - t0).count();
  s.ops = 2 * steps * t;
  for (auto p : peaks) {
    s.peak_live += p;  // the sum of the threads' peaks: a bound of the peak live bytes
  }
  return s;
}

// ------------------------------------------------------------------------------------------
struct row {
  std::string resource, workload, note, error;
  std::size_t n{0}, max_mib{0}, steps{0}, threads{0};
  sample median;
  std::vector<double> runs;
  std::size_t peak_upstream{0};
  double mpairs{0}, scaling{0};
};

struct config {
  // The sub-allocators first and the runtime's own allocators last, so that a run cut short by
  // --deadline-s loses the baselines first.
  std::vector<std::string> resources{"pool", "binning", "arena", "cuda_async", "cuda"};
  std::vector<std::string> workloads{"w2", "w1", "w4", "w3"};
  std::vector<std::size_t> threads{1, 2, 4, 8, 16};
  std::size_t w3_steps{0};  // 0: the default of steps_for
  bool quick{false};
  double slow_s{4.0};
  double lone_s{15.0};
  double deadline_s{0};
  std::string json;
};

double ns_per_op(sample const& s) { return s.ops ? s.seconds * 1e9 / double(s.ops) : 0.0; }

// One warm-up run, then three timed runs (one when the warm-up took longer than slow_s, none
// when it took longer than lone_s: the warm-up is the measurement then, its one-time costs a
// small part of it); the median. Its allocation failures are the most any run had.
sample measure(config const& cfg, std::function<sample()> const& f, row& r)
{
  auto const warm = f();
  int const reps  = warm.seconds > cfg.lone_s ? 0 : warm.seconds > cfg.slow_s ? 1 : 3;
  if (reps < 3) {
    r.note += std::string(r.note.empty() ? "" : "; ") + (reps ? "1 timed run" : "the warm-up only");
  }
  std::vector<sample> v;
  if (reps == 0) { v.push_back(warm); }
  for (int i = 0; i < reps; ++i) {
    v.push_back(f());
  }
  std::sort(
    v.begin(), v.end(), [](sample const& a, sample const& b) { return a.seconds < b.seconds; });
  auto m = v[v.size() / 2];
  for (auto const& x : v) {
    r.runs.push_back(x.seconds);
    m.failures = std::max(m.failures, x.failures);
  }
  return m;
}

// The 23.12 harness's step counts: BENCH.md's for the sub-allocators, except W3 (50 000 steps a
// thread: RMM's pool takes one lock); fewer for the runtime's allocators, whose calls cost
// microseconds (the time per operation stays comparable).
std::size_t steps_for(config const& cfg, std::string const& res, std::string const& w)
{
  bool const cuda = res == "cuda", async = res == "cuda_async";
  std::size_t n = 0;
  if (w == "w2") { n = cuda ? 50'000 : async ? 200'000 : 1'000'000; }
  if (w == "w4") { n = cuda ? 20'000 : async ? 50'000 : 200'000; }
  if (w == "w3") { n = cuda ? 1'000 : async ? 5'000 : (cfg.w3_steps ? cfg.w3_steps : 50'000); }
  return cfg.quick ? std::max<std::size_t>(n / 20, 500) : n;
}

void print_row(row const& r)
{
  if (!r.error.empty()) {
    std::printf("%-10s %-28s ERROR: %s\n", r.resource.c_str(), r.workload.c_str(), r.error.c_str());
  } else {
    std::string note = r.note;
    if (r.median.failures) {
      note += " (" + std::to_string(r.median.failures) + " allocation failures)";
    }
    std::printf("%-10s %-28s %10.1f %10.1f %12.1f %13.1f  %s\n",
                r.resource.c_str(),
                r.workload.c_str(),
                r.median.seconds * 1e3,
                ns_per_op(r.median),
                double(r.peak_upstream) / double(MiB),
                double(r.median.peak_live) / double(MiB),
                note.c_str());
  }
  std::fflush(stdout);
}

std::string json_string(std::string const& s)
{
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      o += ' ';
    } else {
      o += c;
    }
  }
  return o + "\"";
}

struct run_info {
  std::string device;
  std::string fatal;
  std::size_t free_bytes{0}, total_bytes{0};
};

void write_json(config const& cfg, run_info const& info, std::vector<row> const& rows)
{
  if (cfg.json.empty()) { return; }
  std::ofstream o(cfg.json);
  o << "{\n  \"program\": \"vs_rmm_bench\",\n  \"variant\": " << json_string(VSR_VARIANT_NAME)
    << ",\n  \"api\": \"" << RMM_VERSION_MAJOR << "." << RMM_VERSION_MINOR << "\""
    << ",\n  \"device\": " << json_string(info.device)
    << ",\n  \"free_bytes_at_start\": " << info.free_bytes
    << ",\n  \"total_bytes\": " << info.total_bytes
    << ",\n  \"quick\": " << (cfg.quick ? "true" : "false") << ",\n  \"slow_s\": " << cfg.slow_s
    << ",\n  \"lone_s\": " << cfg.lone_s;
  if (!info.fatal.empty()) { o << ",\n  \"error\": " << json_string(info.fatal); }
  o << ",\n  \"rows\": [\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto const& r = rows[i];
    o << "    {\"resource\": " << json_string(r.resource)
      << ", \"workload\": " << json_string(r.workload)
      << ", \"kind\": " << json_string(r.workload.substr(0, 2)) << ", \"n\": " << r.n
      << ", \"max_mib\": " << r.max_mib << ", \"steps\": " << r.steps
      << ", \"threads\": " << r.threads;
    if (!r.error.empty()) {
      o << ", \"error\": " << json_string(r.error);
    } else {
      double const per_op = ns_per_op(r.median);
      o << ", \"seconds\": " << r.median.seconds << ", \"operations\": " << r.median.ops
        << ", \"ns_per_op\": " << per_op << ", \"ns_per_pair\": " << 2 * per_op
        << ", \"peak_upstream_bytes\": " << r.peak_upstream
        << ", \"peak_live_bytes\": " << r.median.peak_live
        << ", \"failures\": " << r.median.failures << ", \"mpairs_per_s\": " << r.mpairs
        << ", \"scaling\": " << r.scaling << ", \"runs_s\": [";
      for (std::size_t j = 0; j < r.runs.size(); ++j) {
        o << (j ? ", " : "") << r.runs[j];
      }
      o << "]";
    }
    o << ", \"note\": " << json_string(r.note) << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  o << "  ]\n}\n";
}

// Runs one workload on one resource: one row per cell (W1: per case, W3: per thread count).
// `flush` runs after every cell (it writes the JSON: a run cut short keeps its cells).
void run_cells(config const& cfg,
               std::string const& res,
               std::string const& w,
               std::vector<cuda::stream_ref> const& streams,
               std::vector<row>& rows,
               std::function<void()> const& flush)
{
  auto const done = [&](row r) {
    rows.push_back(std::move(r));
    print_row(rows.back());
    flush();
  };
  if (w == "w1") {
    std::vector<std::pair<std::size_t, std::size_t>> const cases{
      {10'000, 1}, {100'000, 1}, {1'000, 64}, {1'000, 4096}};
    for (auto [n, max] : cases) {
      if (res == "cuda" && n == 100'000) { continue; }  // 200 000 cudaMalloc/cudaFree calls
      if (res == "cuda" && max == 4096) { n = 250; }    // milliseconds per call of GiBs
      if (cfg.quick) { n = max >= 64 ? std::min<std::size_t>(n, 200) : n / 10; }
      row r;
      r.resource = res;
      r.n        = n;
      r.max_mib  = max;
      r.workload = "W1 N=" + std::to_string(n) + " max=" + std::to_string(max) + "MiB";
      try {
        auto s   = make_subject(res, sizing::large, 0);
        r.note   = s->note;
        r.median = measure(
          cfg, [&] { return random_allocations(*s->top, n, max); }, r);
        r.peak_upstream = s->peak_upstream();
      } catch (std::exception const& e) {
        r.error = e.what();
      }
      done(std::move(r));
    }
  } else if (w == "w2") {
    row r;
    r.resource = res;
    r.steps    = steps_for(cfg, res, w);
    r.workload = "W2 churn " + std::to_string(r.steps) + " steps";
    try {
      auto s   = make_subject(res, sizing::large, 0);
      r.note   = s->note;
      r.median = measure(
        cfg, [&] { return churn_run(*s->top, r.steps, 7, {default_stream()}, false); }, r);
      r.peak_upstream = s->peak_upstream();
    } catch (std::exception const& e) {
      r.error = e.what();
    }
    done(std::move(r));
  } else if (w == "w3") {
    std::size_t const steps = steps_for(cfg, res, w);
    std::unique_ptr<subject> s;
    double base = 0;
    for (auto t : cfg.threads) {
      row r;
      r.resource = res;
      r.steps    = steps;
      r.threads  = t;
      r.workload = "W3 T=" + std::to_string(t) + " " + std::to_string(steps) + " steps";
      try {
        if (t < 1 || t > streams.size()) { throw std::invalid_argument("threads: 1 to 16"); }
        if (!s) { s = make_subject(res, sizing::large, 0); }
        r.note   = s->note;
        r.median = measure(
          cfg, [&] { return threads_run(*s->top, steps, streams, t); }, r);
        r.peak_upstream = s->peak_upstream();
        r.mpairs        = double(r.median.ops / 2) / r.median.seconds / 1e6;
        if (base == 0) { base = r.mpairs; }
        r.scaling = r.mpairs / base;
        char buf[96];
        std::snprintf(buf, sizeof buf, "%.3f Mpairs/s, scaling %.2fx", r.mpairs, r.scaling);
        r.note = std::string(buf) + (r.note.empty() ? "" : "; " + r.note);
      } catch (std::exception const& e) {
        r.error = e.what();
      }
      done(std::move(r));
    }
  } else if (w == "w4") {
    row r;
    r.resource = res;
    r.steps    = steps_for(cfg, res, w);
    r.workload = "W4 streams " + std::to_string(r.steps) + " steps";
    std::vector<cuda::stream_ref> const four(streams.begin(), streams.begin() + 4);
    // An arena cannot grow: it starts at 256 MiB and doubles, up to 4 GiB, while it runs out.
    for (std::size_t arena = 256 * MiB;; arena *= 2) {
      try {
        r.runs.clear();
        r.note   = {};
        auto s   = make_subject(res, sizing::grow, arena);
        r.note   = s->note;
        r.median = measure(
          cfg, [&] { return churn_run(*s->top, r.steps, 11, four, true); }, r);
        r.peak_upstream = s->peak_upstream();
        char buf[96];
        std::snprintf(
          buf,
          sizeof buf,
          "peak upstream / peak live = %.2f",
          double(r.peak_upstream) / double(std::max<std::size_t>(1, r.median.peak_live)));
        r.note = std::string(buf) + (r.note.empty() ? "" : "; " + r.note);
        break;
      } catch (rmm::bad_alloc const& e) {
        if (res == "arena" && arena < 4096 * MiB) { continue; }
        r.error = e.what();
        break;
      } catch (std::exception const& e) {
        r.error = e.what();
        break;
      }
    }
    done(std::move(r));
  } else {
    throw std::invalid_argument("unknown workload " + w);
  }
}

std::vector<std::string> split(std::string const& s)
{
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) { out.push_back(item); }
  }
  return out;
}

int usage(char const* argv0)
{
  std::fprintf(stderr,
               "usage: %s [--json FILE] [--resources pool,binning,arena,cuda_async,cuda]\n"
               "          [--workloads w2,w1,w4,w3] [--threads 1,2,4,8,16] [--w3-steps N]\n"
               "          [--quick] [--slow-s S] [--lone-s S] [--deadline-s S]\n",
               argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv)
{
  config cfg;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string const a = argv[i];
      auto value          = [&]() -> std::string {
        if (i + 1 >= argc) { throw std::invalid_argument(a + " needs a value"); }
        return argv[++i];
      };
      if (a == "--json") {
        cfg.json = value();
      } else if (a == "--resources") {
        cfg.resources = split(value());
      } else if (a == "--workloads") {
        cfg.workloads = split(value());
      } else if (a == "--threads") {
        cfg.threads.clear();
        for (auto const& t : split(value())) {
          cfg.threads.push_back(std::stoul(t));
        }
      } else if (a == "--w3-steps") {
        cfg.w3_steps = std::stoul(value());
      } else if (a == "--quick") {
        cfg.quick = true;
      } else if (a == "--slow-s") {
        cfg.slow_s = std::stod(value());
      } else if (a == "--lone-s") {
        cfg.lone_s = std::stod(value());
      } else if (a == "--deadline-s") {
        cfg.deadline_s = std::stod(value());
      } else {
        return usage(argv[0]);
      }
    }
  } catch (std::exception const& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return usage(argv[0]);
  }

  run_info info;
  info.device = "no CUDA device visible to the runtime";
  if (have_device()) {
    cudaDeviceProp prop{};
    int dev = 0, rt = 0, drv = 0;
    cudaGetDevice(&dev);
    if (cudaGetDeviceProperties(&prop, dev) == cudaSuccess) { info.device = prop.name; }
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    info.device += ", runtime " + std::to_string(rt) + ", driver " + std::to_string(drv);
  }
  cudaGetLastError();
  std::vector<row> rows;
  try {
    auto const [free_b, total_b] = rmm::available_device_memory();
    info.free_bytes              = free_b;
    info.total_bytes             = total_b;
  } catch (std::exception const& e) {
    info.fatal = std::string("the library cannot reach a device: ") + e.what();
    std::fprintf(stderr, "%s: %s\n", VSR_VARIANT_NAME, info.fatal.c_str());
    write_json(cfg, info, rows);
    return 3;
  }
  std::printf("variant: %s (RMM API %d.%02d)\ndevice: %s\nfree %.0f MiB of %.0f MiB\n",
              VSR_VARIANT_NAME,
              RMM_VERSION_MAJOR,
              RMM_VERSION_MINOR,
              info.device.c_str(),
              double(info.free_bytes) / double(MiB),
              double(info.total_bytes) / double(MiB));
  std::printf("\n%-10s %-28s %10s %10s %12s %13s  %s\n",
              "resource",
              "workload",
              "total ms",
              "ns/op",
              "peak up MiB",
              "peak live MiB",
              "note");

  int rc = 0;
  {
    // The streams outlive every resource (the pools keep per-stream state).
    std::vector<rmm::cuda_stream> owned(16);
    std::vector<cuda::stream_ref> streams;
    for (auto const& s : owned) {
      streams.emplace_back(s);
    }
    auto const t0 = clock_type::now();
    for (auto const& w : cfg.workloads) {
      for (auto const& res : cfg.resources) {
        auto const tw = clock_type::now();
        if (cfg.deadline_s > 0 && since(t0) > cfg.deadline_s) {
          row r;
          r.resource = res;
          r.workload = w;
          r.error    = "skipped: past --deadline-s";
          rows.push_back(r);
          print_row(r);
          continue;
        }
        try {
          run_cells(cfg, res, w, streams, rows, [&] { write_json(cfg, info, rows); });
        } catch (std::exception const& e) {
          std::fprintf(stderr, "%s %s: %s\n", res.c_str(), w.c_str(), e.what());
          rc = 1;
        }
        std::fprintf(stderr,
                     "[%s %s %s: %.1f s, total %.1f s]\n",
                     VSR_VARIANT_NAME,
                     w.c_str(),
                     res.c_str(),
                     since(tw),
                     since(t0));
        write_json(cfg, info, rows);
      }
    }
    for (auto const& s : streams) {
      if (cudaStreamSynchronize(s.get()) != cudaSuccess) { cudaGetLastError(); }
    }
  }
  write_json(cfg, info, rows);
  for (auto const& r : rows) {
    if (!r.error.empty()) { rc = 1; }
  }
  return rc;
}
