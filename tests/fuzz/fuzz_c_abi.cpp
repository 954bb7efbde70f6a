// A seeded random driver of librmm's C ABI (only <rmm/rmm.h>), meant to run under
// AddressSanitizer and UndefinedBehaviorSanitizer, on every runtime (RMM_RUNTIME=host, cuda,
// hip): the fuzzer never touches memory that a resource handed out from the host; it fills
// and reads it through rmm_memset_async / rmm_memcpy_async only, so device memory on a GPU
// without pageable memory access is handled as on the host emulation.
//
// Several threads allocate and free through many resource kinds (pool, vmm_pool, binning,
// arena, fixed_size, every adaptor, managed, pinned, system/async/sam_headroom where the
// runtime has them, two callback resources whose callbacks allocate device memory through
// another resource's handle) on several streams, keeping a model of their live ranges:
// every allocation is filled with a byte pattern in stream order, and on free its bytes (its
// first and last 4 KiB when larger than 8 KiB) are copied (in the same stream's order, before
// the stream-ordered free) into a pinned staging buffer and checked once the stream has been
// synchronized: in batches (--check-batch N, default 16: the check also catches a resource
// that reuses a range before the stream's earlier work on it is done) or before the free
// (--check-batch 0).
// The vmm pools also get rmm_vmm_pool_release and rmm_vmm_pool_get_stats as operations
// (stats checked for consistency, and a release must shrink the pool by what it reports),
// and now and then a short-lived vmm pool is made and dropped.
// Between valid calls they make bad ones (null/released/foreign handles, null out-pointers,
// double frees, foreign and interior pointers, wrong sizes, absurd sizes, bad geometry and
// vmm options, wrong resource kinds, destroyed streams and events, popping statistics never
// pushed): each must return an error status and leave the resource's counters unchanged.
//
// Usage: rmm_fuzz_c_abi [--seconds N] [--ops N] [--seed S] [--threads T] [--forever]
//                       [--kinds LIST] [--check-batch N] [--vmm-reserve-mib N]
//   --ops N        stop after N operations in all (whichever of --seconds/--ops comes first)
//   --kinds LIST   allocate only through these kinds (comma-separated names of the table
//                  printed at the end; the bad calls still use every kind)
// Prints the runtime it ran on, per-kind operation counts, then one line
//   rmm_fuzz_c_abi: N operations, B bad calls, R refused (limits), D defects (X ops/s, runtime R)
// and exits non-zero on any defect. A kind whose creation the runtime answers with
// RMM_STATUS_UNSUPPORTED is left out (listed as "unsupported"), which is no defect.
#include <rmm/rmm.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

// ---- resource kinds ---------------------------------------------------------------------

enum kind_id : unsigned {
  K_CUDA,
  K_MANAGED,
  K_PINNED,
  K_SYSTEM,
  K_SAM_HEADROOM,
  K_ASYNC,
  K_ASYNC_MANAGED,
  K_ASYNC_VIEW,
  K_CALLBACK,
  K_CALLBACK_VTABLE,
  K_POOL,
  K_VMM_POOL,
  K_VMM_POOL_TRIM,
  K_BINNING,
  K_ARENA,
  K_FIXED_SIZE,
  K_ALIGNED,
  K_LIMITING,
  K_LOGGING,
  K_STATISTICS,
  K_TRACKING,
  K_THREAD_SAFE,
  K_PREFETCH,
  K_FAILURE_CALLBACK,
  K_SHARED_POOL,
  K_SHARED_VMM_POOL,
  K_SHARED_ARENA,
  K_SHARED_BINNING,
  K_SHARED_THREAD_SAFE,
  K_COUNT,
  K_NONE = K_COUNT,
};

constexpr std::array<char const*, K_COUNT> kind_names{
  "cuda",
  "managed",
  "pinned_host",
  "system",
  "sam_headroom",
  "async",
  "async_managed",
  "async_view",
  "callback",
  "callback_vtable",
  "pool",
  "vmm_pool",
  "vmm_pool_trim",
  "binning",
  "arena",
  "fixed_size",
  "aligned",
  "limiting",
  "logging",
  "statistics",
  "tracking",
  "thread_safe",
  "prefetch",
  "failure_callback",
  "shared_pool",
  "shared_vmm_pool",
  "shared_arena",
  "shared_binning",
  "shared_thread_safe",
};

bool is_vmm(unsigned k)
{
  return k == K_VMM_POOL || k == K_VMM_POOL_TRIM || k == K_SHARED_VMM_POOL;
}

// Per-kind operation counts (each thread keeps its own, merged at the end).
struct kind_counts {
  std::uint64_t allocs{}, frees{}, refused{}, defects{};
  std::uint64_t releases{}, released_bytes{}, stats_calls{}, churns{};
  kind_counts& operator+=(kind_counts const& o)
  {
    allocs += o.allocs;
    frees += o.frees;
    refused += o.refused;
    defects += o.defects;
    releases += o.releases;
    released_bytes += o.released_bytes;
    stats_calls += o.stats_calls;
    churns += o.churns;
    return *this;
  }
};

// ---- options and global state -----------------------------------------------------------

struct options {
  double seconds{30};
  std::uint64_t max_ops{0};  // 0: no budget
  std::uint64_t seed{1};
  unsigned threads{4};
  bool forever{false};
  std::size_t check_batch{16};
  std::size_t vmm_reserve{std::size_t{1} << 30};
  std::array<bool, K_COUNT> enabled{};
};
options g_opt;

// Each thread publishes its counts in its own cache line (no shared atomic per operation).
struct alignas(64) thread_slot {
  std::atomic<std::uint64_t> ops{0};
  std::atomic<std::uint64_t> bad_calls{0};
};
std::unique_ptr<thread_slot[]> g_slots;

std::atomic<std::uint64_t> g_refused{0};
std::atomic<std::uint64_t> g_defects{0};
std::atomic<std::uint64_t> g_callback_failures{0};
std::atomic<bool> g_stop{false};
std::mutex g_print;
std::array<kind_counts, K_COUNT> g_kinds{};
std::array<bool, K_COUNT> g_kind_seen{};  // created by at least one thread
std::set<std::string> g_unsupported;      // kinds the runtime refused as unsupported
std::set<std::string> g_out_of_memory;    // kinds some thread could not create (memory)
constexpr std::uint64_t max_defect_lines = 200;

void defect(unsigned thread, std::uint64_t step, std::string const& what)
{
  auto const n = g_defects.fetch_add(1);
  if (n >= max_defect_lines) { return; }
  std::lock_guard<std::mutex> lock(g_print);
  std::fprintf(stderr,
               "DEFECT thread %u step %" PRIu64 ": %s (last error: %s)\n",
               thread,
               step,
               what.c_str(),
               rmm_last_error_message());
  if (n + 1 == max_defect_lines) {
    std::fprintf(stderr, "(further defects are counted, not printed)\n");
  }
}

// ---- the callback resources: device memory through another resource's handle ------------

// Set by a callback when its upstream refused the request (an out-of-memory answer): the
// caller then counts the failed allocation as a refusal, not a defect.
thread_local bool t_upstream_refused = false;

struct callback_ctx {
  rmm_resource_t upstream;
};

void* cb_allocate(std::size_t bytes, rmm_stream_t stream, void* arg)
{
  auto* ctx             = static_cast<callback_ctx*>(arg);
  void* p               = nullptr;
  rmm_status_t const st = rmm_allocate_async(ctx->upstream, bytes, stream, &p);
  if (st != RMM_STATUS_SUCCESS) {
    t_upstream_refused = st == RMM_STATUS_OUT_OF_MEMORY || st == RMM_STATUS_BAD_ALLOC;
    rmm_callback_set_error_message(rmm_last_error_message());
    return nullptr;
  }
  return p;
}

void cb_deallocate(void* ptr, std::size_t bytes, rmm_stream_t stream, void* arg)
{
  auto* ctx = static_cast<callback_ctx*>(arg);
  if (rmm_deallocate_async(ctx->upstream, ptr, bytes, stream) != RMM_STATUS_SUCCESS) {
    g_callback_failures.fetch_add(1);  // a defect, reported by the caller's check
  }
}

// The vtable resource: its context is a retained handle, released by `destroy`.
std::uint32_t vt_allocate(void* ctx, std::size_t bytes, rmm_stream_t stream, void** out)
{
  rmm_status_t const st = rmm_allocate_async(static_cast<rmm_resource_t>(ctx), bytes, stream, out);
  if (st != RMM_STATUS_SUCCESS) {
    t_upstream_refused = st == RMM_STATUS_OUT_OF_MEMORY || st == RMM_STATUS_BAD_ALLOC;
    rmm_callback_set_error_message(rmm_last_error_message());
  }
  return st;
}
std::uint32_t vt_deallocate(void* ctx, void* ptr, std::size_t bytes, rmm_stream_t stream)
{
  rmm_status_t const st =
    rmm_deallocate_async(static_cast<rmm_resource_t>(ctx), ptr, bytes, stream);
  if (st != RMM_STATUS_SUCCESS) { rmm_callback_set_error_message(rmm_last_error_message()); }
  return st;
}
void vt_destroy(void* ctx) { (void)rmm_resource_release(static_cast<rmm_resource_t>(ctx)); }

void log_sink(char const*, std::size_t, void* arg)
{
  static_cast<std::atomic<std::size_t>*>(arg)->fetch_add(1);
}
bool never_retry(std::size_t, void*) { return false; }

// ---- a worker ---------------------------------------------------------------------------

struct resource {
  unsigned kind;
  rmm_resource_t handle;
  std::size_t max_bytes;  // largest request that is expected to succeed (0: any)
  bool private_state;     // this thread's alone: bad calls and state checks allowed
};

struct live {
  std::size_t res;
  void* ptr;
  std::size_t bytes;
  rmm_stream_t stream;
  unsigned char pattern;
};

// A freed range whose bytes were copied into the staging buffer, to be checked.
struct pending_check {
  std::size_t slot;
  std::size_t bytes;  // bytes copied into the slot
  unsigned kind;
  unsigned char pattern;
};

// Ranges up to twice this are checked whole, larger ones at their first and last bytes.
constexpr std::size_t check_bytes = 4096;

// Counters of one thread's private resources, compared around every bad call.
struct snapshot {
  rmm_statistics_counters stats{};
  std::size_t tracked_bytes{};
  std::size_t tracked_count{};
  std::size_t limited_bytes{};
  rmm_pool_stats pool{};
  rmm_vmm_pool_stats vmm{};
  bool operator==(snapshot const& o) const
  {
    return std::memcmp(&stats, &o.stats, sizeof stats) == 0 && tracked_bytes == o.tracked_bytes &&
           tracked_count == o.tracked_count && limited_bytes == o.limited_bytes &&
           pool.pool_size == o.pool.pool_size && pool.free_block_count == o.pool.free_block_count &&
           vmm.pool_size == o.vmm.pool_size && vmm.bytes_free == o.vmm.bytes_free &&
           vmm.free_block_count == o.vmm.free_block_count;
  }
};

struct shared_resources {
  std::vector<resource> list;
  rmm_resource_t pool{};  // the upstream of the vtable callback resource
  rmm_resource_t vmm{};   // nullptr where the runtime has no vmm
};

class worker {
 public:
  worker(unsigned id, std::uint64_t seed, shared_resources const& shared)
    : id_{id}, rng_{seed}, shared_vmm_{shared.vmm}, slot_{g_slots[id]}
  {
    make_private_resources(shared.pool);
    for (auto const& r : shared.list) {
      if (g_opt.enabled[r.kind]) { resources_.push_back(r); }
    }
    for (int i = 0; i < 3; ++i) {
      rmm_stream_t s{};
      check_ok(rmm_stream_create(i == 2 ? RMM_STREAM_NON_BLOCKING : 0u, &s), "stream_create");
      streams_.push_back(s);
    }
    streams_.push_back(RMM_STREAM_DEFAULT);
    streams_.push_back(RMM_STREAM_PER_THREAD);
    dirty_.assign(streams_.size(), false);
    // The staging buffer the checks copy into: pinned host memory where the runtime has it
    // (copies into it are asynchronous), else pageable.
    std::size_t const slots = g_opt.check_batch == 0 ? 1 : g_opt.check_batch;
    staging_bytes_          = slots * 2 * check_bytes;
    if (pinned_ == nullptr ||
        rmm_allocate(pinned_, staging_bytes_, &staging_) != RMM_STATUS_SUCCESS) {
      staging_fallback_.resize(staging_bytes_);
      staging_ = staging_fallback_.data();
    }
    // A small device buffer for the bad calls that need a valid device pointer.
    check_ok(rmm_allocate(cuda_, 4096, &scratch_), "allocate scratch");
  }

  worker(worker const&)            = delete;
  worker& operator=(worker const&) = delete;

  ~worker()
  {
    while (!live_.empty()) {
      free_one(live_.size() - 1);
    }
    flush_checks();
    if (staging_fallback_.empty() && staging_ != nullptr) {
      check_ok(rmm_deallocate(pinned_, staging_, staging_bytes_), "free staging");
    }
    if (scratch_ != nullptr) { check_ok(rmm_deallocate(cuda_, scratch_, 4096), "free scratch"); }
    for (std::size_t i = 0; i < 3; ++i) {
      check_ok(rmm_stream_destroy(streams_[i]), "stream_destroy");
    }
    // Adaptors before their upstreams.
    for (auto it = owned_.rbegin(); it != owned_.rend(); ++it) {
      check_ok(rmm_resource_release(*it), "resource_release");
    }
    slot_.ops.store(ops_, std::memory_order_relaxed);
    slot_.bad_calls.store(bad_calls_, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(g_print);
    for (unsigned k = 0; k < K_COUNT; ++k) {
      g_kinds[k] += counts_[k];
    }
    for (auto const& r : resources_) {
      g_kind_seen[r.kind] = true;
    }
    for (auto const& u : unsupported_) {
      g_unsupported.insert(u);
    }
    for (auto const& u : out_of_memory_) {
      g_out_of_memory.insert(u);
    }
  }

  void step()
  {
    ++step_;
    ++ops_;
    if ((ops_ & 63) == 0) {
      slot_.ops.store(ops_, std::memory_order_relaxed);
      slot_.bad_calls.store(bad_calls_, std::memory_order_relaxed);
    }
    auto const roll = pick(1000);
    if (roll < 100) {
      bad_call();
    } else if (roll < 125) {
      vmm_op();
    } else if (roll < 126) {
      vmm_churn();
    } else if (roll < 560 || live_.empty()) {
      if (live_.size() < 48) { allocate(); }
    } else {
      free_one(pick(live_.size()));
    }
  }

 private:
  std::size_t pick(std::size_t n)
  {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }

  char const* name(std::size_t res) const { return kind_names[resources_[res].kind]; }

  void fail(unsigned kind, std::string const& what)
  {
    if (kind < K_COUNT) { ++counts_[kind].defects; }
    defect(id_, step_, what);
  }

  // `what` and `name` make the message only when the call failed.
  bool check_ok(rmm_status_t st,
                char const* what,
                char const* name = nullptr,
                unsigned kind    = K_NONE)
  {
    if (st != RMM_STATUS_SUCCESS) {
      std::string m{what};
      if (name != nullptr) { m += std::string{" on "} + name; }
      fail(kind, m + " failed: " + rmm_status_string(st));
      return false;
    }
    return true;
  }

  // `h` by reference: it is read after the create call (argument order is unspecified).
  rmm_resource_t own(rmm_status_t st, rmm_resource_t const& h, unsigned kind)
  {
    if (st == RMM_STATUS_UNSUPPORTED) {
      unsupported_.insert(kind_names[kind]);
      return nullptr;
    }
    if (st == RMM_STATUS_OUT_OF_MEMORY || st == RMM_STATUS_BAD_ALLOC) {
      // A device too small for every thread's set (a valid answer): left out here.
      ++counts_[kind].refused;
      g_refused.fetch_add(1, std::memory_order_relaxed);
      out_of_memory_.insert(kind_names[kind]);
      return nullptr;
    }
    if (!check_ok(st, "create", kind_names[kind], kind)) { return nullptr; }
    owned_.push_back(h);
    return h;
  }

  void add(unsigned kind, rmm_resource_t h, std::size_t max_bytes = 0)
  {
    if (h != nullptr && g_opt.enabled[kind]) { resources_.push_back({kind, h, max_bytes, true}); }
  }

  static rmm_vmm_pool_options vmm_options(std::size_t reserve,
                                          std::size_t maximum,
                                          std::size_t threshold)
  {
    rmm_vmm_pool_options o{};
    (void)rmm_vmm_pool_options_init(&o);
    o.reserved_size     = reserve;
    o.maximum_pool_size = maximum;
    o.release_threshold = threshold;
    return o;
  }

  void make_private_resources(rmm_resource_t shared_pool)
  {
    rmm_resource_t h{};
    cuda_ = own(rmm_cuda_create(&h), h, K_CUDA);
    add(K_CUDA, cuda_);
    managed_ = own(rmm_managed_create(&h), h, K_MANAGED);
    add(K_MANAGED, managed_);
    pinned_ = own(rmm_pinned_host_create(&h), h, K_PINNED);
    add(K_PINNED, pinned_);
    add(K_SYSTEM, own(rmm_system_create(&h), h, K_SYSTEM));
    add(K_SAM_HEADROOM, own(rmm_sam_headroom_create(std::size_t{1} << 30, &h), h, K_SAM_HEADROOM));
    // Nothing reserved up front: by default a pool reserves half of the free memory
    // (RMM 25.02), and the fuzzer's threads creating theirs at once would leave the other
    // resources of this set too little to be created (the default is tested elsewhere).
    std::size_t const threshold = 0, initial = 0;
    add(K_ASYNC, own(rmm_async_create(&initial, &threshold, 0, &h), h, K_ASYNC));
    add(K_ASYNC_MANAGED, own(rmm_async_managed_create(&h), h, K_ASYNC_MANAGED));
    {
      void* default_pool    = nullptr;
      rmm_status_t const st = rmm_device_default_mem_pool(0, &default_pool);
      if (st == RMM_STATUS_UNSUPPORTED) {
        unsupported_.insert(kind_names[K_ASYNC_VIEW]);
      } else if (check_ok(st, "device_default_mem_pool", nullptr, K_ASYNC_VIEW)) {
        add(K_ASYNC_VIEW, own(rmm_async_view_create(default_pool, &h), h, K_ASYNC_VIEW));
      }
    }
    // Device memory through the thread's cuda resource, so the callback resource's ranges
    // are device memory on every runtime (the fuzzer fills and checks them on the device).
    callback_ctx_.upstream = cuda_;
    if (cuda_ != nullptr) {
      add(K_CALLBACK,
          own(rmm_callback_create(cb_allocate, cb_deallocate, &callback_ctx_, &callback_ctx_, &h),
              h,
              K_CALLBACK));
    }
    // Stream-ordered: through the pool shared by all threads (a retained handle).
    if (shared_pool != nullptr && check_ok(rmm_resource_retain(shared_pool), "retain")) {
      rmm_callback_vtable const vt{vt_allocate, vt_deallocate, vt_destroy};
      // destroy() runs (releasing the retained handle) even when the creation fails.
      add(K_CALLBACK_VTABLE,
          own(rmm_callback_create_with_vtable(&vt, shared_pool, &h), h, K_CALLBACK_VTABLE),
          16 << 20);
    }
    if (cuda_ != nullptr) {
      pool_ = own(rmm_pool_create(cuda_, 4 << 20, 64 << 20, &h), h, K_POOL);
      add(K_POOL, pool_, 16 << 20);
    }
    // The vmm pools: a modest reservation each, so that every thread's can coexist.
    {
      auto const o = vmm_options(g_opt.vmm_reserve, 128 << 20, SIZE_MAX);
      vmm_         = own(rmm_vmm_pool_create(&o, &h), h, K_VMM_POOL);
      add(K_VMM_POOL, vmm_, 16 << 20);
      vmm_max_     = o.maximum_pool_size;
      auto const t = vmm_options(g_opt.vmm_reserve, 64 << 20, 8 << 20);
      vmm_trim_    = own(rmm_vmm_pool_create(&t, &h), h, K_VMM_POOL_TRIM);
      add(K_VMM_POOL_TRIM, vmm_trim_, 16 << 20);
    }
    if (cuda_ != nullptr) {
      arena_ = own(rmm_arena_create(cuda_, 64 << 20, false, &h), h, K_ARENA);
      add(K_ARENA, arena_, 4 << 20);
      add(K_FIXED_SIZE,
          own(rmm_fixed_size_create(cuda_, 64 << 10, 4, &h), h, K_FIXED_SIZE),
          64 << 10);
      add(K_ALIGNED, own(rmm_aligned_adaptor_create(cuda_, 4096, 1024, &h), h, K_ALIGNED));
    }
    if (pool_ != nullptr) {
      add(K_BINNING, own(rmm_binning_create(pool_, 8, 16, &h), h, K_BINNING), 16 << 20);
      limiting_ = own(rmm_limiting_adaptor_create(pool_, 8 << 20, 256, &h), h, K_LIMITING);
      add(K_LIMITING, limiting_, 8 << 20);
      add(K_LOGGING,
          own(rmm_logging_create_with_callback(pool_, log_sink, &log_lines_, 0, &h), h, K_LOGGING),
          16 << 20);
      stats_ = own(rmm_statistics_adaptor_create(pool_, &h), h, K_STATISTICS);
      add(K_STATISTICS, stats_, 16 << 20);
      tracking_ = own(rmm_tracking_adaptor_create(pool_, false, &h), h, K_TRACKING);
      add(K_TRACKING, tracking_, 16 << 20);
      add(
        K_THREAD_SAFE, own(rmm_thread_safe_adaptor_create(pool_, &h), h, K_THREAD_SAFE), 16 << 20);
      add(K_FAILURE_CALLBACK,
          own(rmm_failure_callback_adaptor_create(pool_, never_retry, nullptr, &h),
              h,
              K_FAILURE_CALLBACK),
          16 << 20);
    }
    if (managed_ != nullptr) {
      add(K_PREFETCH, own(rmm_prefetch_adaptor_create(managed_, &h), h, K_PREFETCH));
    }
  }

  std::size_t random_size(std::size_t max_bytes)
  {
    std::size_t n = 0;
    switch (pick(8)) {
      case 0:
        n = 0;
        break;
      case 1:
        n = 1 + pick(16);
        break;
      case 2:
        n = 1 + pick(64 << 10);
        break;
      case 3:
        n = 1 + pick(4 << 20);
        break;
      default:
        n = 1 + pick(4096);
        break;
    }
    if (max_bytes != 0 && n > max_bytes) { n = max_bytes; }
    return n;
  }

  void allocate()
  {
    if (resources_.empty()) { return; }
    std::size_t const ri  = pick(resources_.size());
    auto const& r         = resources_[ri];
    auto& c               = counts_[r.kind];
    std::size_t const n   = random_size(r.max_bytes);
    std::size_t const si  = pick(streams_.size());
    rmm_stream_t const s  = streams_[si];
    void* p               = nullptr;
    t_upstream_refused    = false;
    rmm_status_t const st = rmm_allocate_async(r.handle, n, s, &p);
    bool const callback   = r.kind == K_CALLBACK || r.kind == K_CALLBACK_VTABLE;
    if (st == RMM_STATUS_OUT_OF_MEMORY || st == RMM_STATUS_BAD_ALLOC ||
        (callback && t_upstream_refused && st == RMM_STATUS_CALLBACK_FAILED)) {
      ++c.refused;
      g_refused.fetch_add(1, std::memory_order_relaxed);  // limits (limiting, pool maximum, arena)
      return;
    }
    if (!check_ok(st, "allocate_async", kind_names[r.kind], r.kind)) { return; }
    ++c.allocs;
    if (n == 0) {
      if (p != nullptr) { fail(r.kind, std::string{name(ri)} + ": 0 bytes gave non-null"); }
      return;
    }
    if (p == nullptr || reinterpret_cast<std::uintptr_t>(p) % 256 != 0) {
      fail(r.kind, std::string{name(ri)} + ": null or unaligned pointer");
      return;
    }
    auto const pattern = static_cast<unsigned char>(1 + pick(254));
    check_ok(rmm_memset_async(p, pattern, n, s), "memset_async", kind_names[r.kind], r.kind);
    live_.push_back({ri, p, n, s, pattern});
  }

  std::size_t stream_index(rmm_stream_t s) const
  {
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      if (streams_[i] == s) { return i; }
    }
    return 0;
  }

  // Copies the range `l` (up to 2 * check_bytes), or its first and last check_bytes, into
  // staging slot `slot` on the range's stream.
  pending_check stage(live const& l, std::size_t slot)
  {
    auto* dst           = static_cast<unsigned char*>(staging_) + slot * 2 * check_bytes;
    unsigned const kind = resources_[l.res].kind;
    if (l.bytes <= 2 * check_bytes) {
      check_ok(rmm_memcpy_async(dst, l.ptr, l.bytes, l.stream),
               "memcpy_async (check)",
               kind_names[kind],
               kind);
      return {slot, l.bytes, kind, l.pattern};
    }
    auto const* tail = static_cast<char const*>(l.ptr) + (l.bytes - check_bytes);
    check_ok(rmm_memcpy_async(dst, l.ptr, check_bytes, l.stream),
             "memcpy_async (check)",
             kind_names[kind],
             kind);
    check_ok(rmm_memcpy_async(dst + check_bytes, tail, check_bytes, l.stream),
             "memcpy_async (check)",
             kind_names[kind],
             kind);
    return {slot, 2 * check_bytes, kind, l.pattern};
  }

  void check(pending_check const& p)
  {
    auto const* b = static_cast<unsigned char const*>(staging_) + p.slot * 2 * check_bytes;
    bool ok       = true;
    for (std::size_t i = 0; i < p.bytes; ++i) {
      ok &= b[i] == p.pattern;
    }
    if (!ok) {
      fail(p.kind, std::string{"pattern overwritten in a live range of "} + kind_names[p.kind]);
    }
  }

  // Synchronizes the streams the pending checks copied on, then checks them.
  void flush_checks()
  {
    if (pending_.empty()) { return; }
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      if (dirty_[i]) {
        check_ok(rmm_stream_synchronize(streams_[i]), "stream_synchronize");
        dirty_[i] = false;
      }
    }
    for (auto const& p : pending_) {
      check(p);
    }
    pending_.clear();
  }

  void free_one(std::size_t i)
  {
    live const l = live_[i];
    live_[i]     = live_.back();
    live_.pop_back();
    unsigned const kind = resources_[l.res].kind;
    auto const failures = g_callback_failures.load(std::memory_order_relaxed);
    if (g_opt.check_batch == 0) {
      // Checked before the free.
      pending_check const p = stage(l, 0);
      check_ok(rmm_stream_synchronize(l.stream), "stream_synchronize");
      check(p);
    } else {
      // The copies are ordered before the stream-ordered free: the resource must not hand
      // the range out again (to any stream) before they have run.
      pending_.push_back(stage(l, pending_.size()));
      dirty_[stream_index(l.stream)] = true;
    }
    check_ok(rmm_deallocate_async(resources_[l.res].handle, l.ptr, l.bytes, l.stream),
             "deallocate_async",
             kind_names[kind],
             kind);
    ++counts_[kind].frees;
    if ((kind == K_CALLBACK || kind == K_CALLBACK_VTABLE) &&
        g_callback_failures.load(std::memory_order_relaxed) != failures) {
      fail(kind, "the callback's deallocate failed upstream");
    }
    if (pending_.size() >= g_opt.check_batch) { flush_checks(); }
  }

  // ---- the vmm pools ----------------------------------------------------------------------

  std::size_t live_bytes_of(rmm_resource_t h) const
  {
    std::size_t sum = 0;
    for (auto const& l : live_) {
      if (resources_[l.res].handle == h) { sum += l.bytes; }
    }
    return sum;
  }

  // Checks what rmm_vmm_pool_get_stats says of `h`; `quiet`: this thread alone uses it, so
  // the fields agree with each other and with the live ranges.
  bool vmm_stats(
    rmm_resource_t h, unsigned kind, bool quiet, std::size_t maximum, rmm_vmm_pool_stats& s)
  {
    ++counts_[kind].stats_calls;
    if (!check_ok(rmm_vmm_pool_get_stats(h, &s), "vmm_pool_get_stats", kind_names[kind], kind)) {
      return false;
    }
    char const* bad = nullptr;
    if (s.granularity == 0 || s.reserved_size % s.granularity != 0) {
      bad = "granularity does not divide the reservation";
    } else if (s.reserved_size < g_opt.vmm_reserve && kind != K_SHARED_VMM_POOL) {
      bad = "reserved less than asked";
    } else if (maximum != 0 && s.maximum_pool_size != maximum / s.granularity * s.granularity) {
      bad = "maximum_pool_size is not the one asked (rounded down to the granularity)";
    } else if (!(s.fragmentation >= 0.0 && s.fragmentation <= 1.0)) {
      bad = "fragmentation outside [0, 1]";
    } else if (quiet) {
      if (s.pool_size % s.granularity != 0) {
        bad = "pool size not a multiple of the granularity";
      } else if (s.pool_size > s.reserved_size ||
                 (s.maximum_pool_size != 0 && s.pool_size > s.maximum_pool_size)) {
        bad = "pool size beyond the maximum or the reservation";
      } else if (s.bytes_free > s.pool_size || s.largest_free_block > s.bytes_free) {
        bad = "free bytes beyond the pool size, or largest block beyond the free bytes";
      } else if ((s.bytes_free == 0) != (s.free_block_count == 0) ||
                 (s.bytes_free == 0) != (s.largest_free_block == 0)) {
        bad = "free bytes, free blocks and largest free block disagree";
      } else if (s.pool_size - s.bytes_free < live_bytes_of(h)) {
        bad = "fewer bytes allocated than the live ranges hold";
      }
    }
    if (bad != nullptr) {
      char buf[256];
      std::snprintf(buf,
                    sizeof buf,
                    " (pool %zu, max %zu, reserved %zu, granule %zu, free %zu in %zu blocks, "
                    "largest %zu, fragmentation %g)",
                    s.pool_size,
                    s.maximum_pool_size,
                    s.reserved_size,
                    s.granularity,
                    s.bytes_free,
                    s.free_block_count,
                    s.largest_free_block,
                    s.fragmentation);
      fail(kind, std::string{kind_names[kind]} + ": vmm_pool_get_stats: " + bad + buf);
      return false;
    }
    return true;
  }

  void vmm_release(rmm_resource_t h, unsigned kind, bool quiet, std::size_t maximum)
  {
    rmm_vmm_pool_stats before{}, after{};
    if (quiet && !vmm_stats(h, kind, true, maximum, before)) { return; }
    std::size_t released = 0;
    bool const reported  = pick(4) != 0;  // else `released` NULL (nullable)
    rmm_status_t const st =
      reported ? rmm_vmm_pool_release(h, &released) : rmm_vmm_pool_release(h, nullptr);
    if (!check_ok(st, "vmm_pool_release", kind_names[kind], kind)) { return; }
    ++counts_[kind].releases;
    counts_[kind].released_bytes += released;
    if (!quiet) { return; }
    if (!vmm_stats(h, kind, true, maximum, after)) { return; }
    if (released % after.granularity != 0 || released > before.pool_size) {
      fail(kind,
           std::string{kind_names[kind]} + ": vmm_pool_release reported " +
             std::to_string(released) + " bytes (not whole granules of the pool)");
    } else if (reported ? after.pool_size != before.pool_size - released
                        : after.pool_size > before.pool_size) {
      fail(kind,
           std::string{kind_names[kind]} + ": vmm_pool_release reported " +
             std::to_string(released) + " bytes, the pool went from " +
             std::to_string(before.pool_size) + " to " + std::to_string(after.pool_size));
    }
  }

  // rmm_vmm_pool_release and rmm_vmm_pool_get_stats on one of the vmm pools.
  void vmm_op()
  {
    struct choice {
      rmm_resource_t h;
      unsigned kind;
      bool quiet;
      std::size_t maximum;
    };
    std::array<choice, 3> const all{{{vmm_, K_VMM_POOL, true, vmm_max_},
                                     {vmm_trim_, K_VMM_POOL_TRIM, true, 64 << 20},
                                     {shared_vmm_, K_SHARED_VMM_POOL, false, 0}}};
    auto const& c = all[pick(all.size())];
    if (c.h == nullptr) { return; }
    if (pick(2) == 0) {
      rmm_vmm_pool_stats s{};
      (void)vmm_stats(c.h, c.kind, c.quiet, c.maximum, s);
    } else {
      vmm_release(c.h, c.kind, c.quiet, c.maximum);
    }
  }

  // A short-lived vmm pool: random valid options, a few ranges filled and checked, a
  // release, then dropped with nothing outstanding.
  void vmm_churn()
  {
    if (vmm_ == nullptr) { return; }
    rmm_vmm_pool_stats ref{};
    if (rmm_vmm_pool_get_stats(vmm_, &ref) != RMM_STATUS_SUCCESS) { return; }
    std::size_t const g = ref.granularity;
    rmm_vmm_pool_options o{};
    check_ok(rmm_vmm_pool_options_init(&o), "vmm_pool_options_init");
    o.reserved_size     = 16 * g + pick(3) * g / 2;  // not always a multiple of the granule
    o.initial_pool_size = pick(3) * g;
    o.maximum_pool_size = pick(2) == 0 ? 0 : 8 * g;
    o.granularity       = pick(2) == 0 ? 0 : g;
    o.release_threshold = pick(2) == 0 ? SIZE_MAX : pick(3) * g;
    rmm_resource_t h{};
    rmm_status_t const st = rmm_vmm_pool_create(&o, &h);
    if (st == RMM_STATUS_UNSUPPORTED) { return; }
    if (st == RMM_STATUS_OUT_OF_MEMORY || st == RMM_STATUS_BAD_ALLOC) {
      ++counts_[K_VMM_POOL].refused;  // the initial mapping did not fit: a valid answer
      g_refused.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (!check_ok(st, "vmm_pool_create (short-lived)", nullptr, K_VMM_POOL)) { return; }
    ++counts_[K_VMM_POOL].churns;
    rmm_stream_t const s = streams_[pick(streams_.size())];
    std::array<void*, 4> p{};
    std::array<std::size_t, 4> n{};
    for (std::size_t i = 0; i < p.size(); ++i) {
      n[i]                 = 1 + pick(2 * g);
      rmm_status_t const a = rmm_allocate_async(h, n[i], s, &p[i]);
      if (a == RMM_STATUS_OUT_OF_MEMORY || a == RMM_STATUS_BAD_ALLOC) {
        p[i] = nullptr;
        continue;
      }
      if (!check_ok(a, "allocate_async (short-lived vmm pool)", nullptr, K_VMM_POOL)) {
        p[i] = nullptr;
        continue;
      }
      check_ok(rmm_memset_async(p[i], 0x5a, n[i], s), "memset_async (short-lived vmm pool)");
    }
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (p[i] != nullptr) {
        check_ok(rmm_deallocate_async(h, p[i], n[i], s),
                 "deallocate_async (short-lived vmm pool)",
                 nullptr,
                 K_VMM_POOL);
      }
    }
    std::size_t released = 0;
    check_ok(
      rmm_vmm_pool_release(h, &released), "vmm_pool_release (short-lived)", nullptr, K_VMM_POOL);
    rmm_vmm_pool_stats after{};
    if (check_ok(rmm_vmm_pool_get_stats(h, &after), "vmm_pool_get_stats (short-lived)") &&
        (after.pool_size != 0 || after.bytes_free != 0)) {
      fail(K_VMM_POOL,
           "short-lived vmm pool: memory still mapped after everything was freed "
           "and released (pool " +
             std::to_string(after.pool_size) + " bytes)");
    }
    check_ok(rmm_resource_release(h), "release (short-lived vmm pool)");
  }

  // ---- bad calls ---------------------------------------------------------------------------

  snapshot take()
  {
    snapshot s;
    (void)rmm_statistics_adaptor_get_counters(stats_, &s.stats);
    (void)rmm_tracking_adaptor_get_allocated_bytes(tracking_, &s.tracked_bytes);
    (void)rmm_tracking_adaptor_get_outstanding_count(tracking_, &s.tracked_count);
    (void)rmm_limiting_adaptor_get_allocated_bytes(limiting_, &s.limited_bytes);
    (void)rmm_pool_get_stats(pool_, &s.pool);
    if (vmm_ != nullptr) { (void)rmm_vmm_pool_get_stats(vmm_, &s.vmm); }
    return s;
  }

  // One live range of a private resource that detects bad frees (the adaptors that track
  // their allocations, and the pools), or none.
  live* tracked_live()
  {
    std::size_t const start = live_.empty() ? 0 : pick(live_.size());
    for (std::size_t j = 0; j < live_.size(); ++j) {
      std::size_t const k = (start + j) % live_.size();
      auto const h        = resources_[live_[k].res].handle;
      if (h == tracking_ || h == stats_ || h == pool_ || (h == vmm_ && h != nullptr)) {
        return &live_[k];
      }
    }
    return nullptr;
  }

  void expect_error(rmm_status_t st, char const* what)
  {
    ++bad_calls_;
    if (st == RMM_STATUS_SUCCESS) {
      defect(id_, step_, std::string{"bad call succeeded: "} + what);
    } else if (st == RMM_STATUS_PANIC) {
      defect(id_, step_, std::string{"bad call panicked: "} + what);
    }
  }

  void bad_vmm_call()
  {
    rmm_vmm_pool_stats s{};
    std::size_t released = 0;
    rmm_resource_t h{};
    int local     = 0;
    auto* foreign = reinterpret_cast<rmm_resource_t>(&local);
    // Wrong handles: NULL, foreign, other kinds.
    expect_error(rmm_vmm_pool_get_stats(nullptr, &s), "vmm_pool_get_stats(NULL handle)");
    expect_error(rmm_vmm_pool_get_stats(foreign, &s), "vmm_pool_get_stats(foreign handle)");
    expect_error(rmm_vmm_pool_get_stats(pool_, &s), "vmm_pool_get_stats on a pool");
    expect_error(rmm_vmm_pool_get_stats(cuda_, &s), "vmm_pool_get_stats on cuda");
    expect_error(rmm_vmm_pool_get_stats(tracking_, &s), "vmm_pool_get_stats on tracking");
    expect_error(rmm_vmm_pool_release(nullptr, &released), "vmm_pool_release(NULL handle)");
    expect_error(rmm_vmm_pool_release(pool_, &released), "vmm_pool_release on a pool");
    expect_error(rmm_vmm_pool_release(arena_, nullptr), "vmm_pool_release on an arena");
    expect_error(rmm_vmm_pool_options_init(nullptr), "vmm_pool_options_init(NULL)");
    if (vmm_ == nullptr) { return; }
    expect_error(rmm_vmm_pool_get_stats(vmm_, nullptr), "vmm_pool_get_stats(NULL stats)");
    {
      // Other kinds' accessors on a vmm pool.
      rmm_pool_stats ps{};
      rmm_statistics_counters c{};
      std::size_t n = 0;
      expect_error(rmm_pool_get_stats(vmm_, &ps), "pool_get_stats on a vmm pool");
      expect_error(rmm_statistics_adaptor_get_counters(vmm_, &c), "statistics on a vmm pool");
      expect_error(rmm_limiting_adaptor_get_allocated_bytes(vmm_, &n), "limiting on a vmm pool");
      expect_error(rmm_binning_add_bin(vmm_, 4096, nullptr), "add_bin to a vmm pool");
    }
    // A released vmm pool.
    {
      auto o = vmm_options(std::size_t{64} << 20, 0, SIZE_MAX);
      rmm_resource_t r{};
      if (rmm_vmm_pool_create(&o, &r) == RMM_STATUS_SUCCESS) {
        (void)rmm_resource_release(r);
        expect_error(rmm_vmm_pool_get_stats(r, &s), "vmm_pool_get_stats on a released pool");
        expect_error(rmm_vmm_pool_release(r, &released), "vmm_pool_release on a released pool");
      }
    }
    // Bad options.
    rmm_vmm_pool_stats ref{};
    if (rmm_vmm_pool_get_stats(vmm_, &ref) != RMM_STATUS_SUCCESS || ref.granularity == 0) {
      return;
    }
    std::size_t const g    = ref.granularity;
    rmm_vmm_pool_options o = vmm_options(16 * g, 0, SIZE_MAX);
    expect_error(rmm_vmm_pool_create(&o, nullptr), "vmm_pool_create(NULL out)");
    auto bad = [&](char const* what, auto&& change) {
      rmm_vmm_pool_options b = vmm_options(16 * g, 0, SIZE_MAX);
      change(b);
      rmm_resource_t r{};
      rmm_status_t const st = rmm_vmm_pool_create(&b, &r);
      if (st == RMM_STATUS_SUCCESS) { (void)rmm_resource_release(r); }
      expect_error(st, what);
    };
    bad("vmm granularity not a multiple of the device's",
        [&](rmm_vmm_pool_options& b) { b.granularity = g + 256; });
    bad("vmm initial above the maximum", [&](rmm_vmm_pool_options& b) {
      b.initial_pool_size = 4 * g;
      b.maximum_pool_size = 2 * g;
    });
    bad("vmm maximum below one granule",
        [&](rmm_vmm_pool_options& b) { b.maximum_pool_size = g / 2; });
    bad("vmm maximum above the reservation",
        [&](rmm_vmm_pool_options& b) { b.maximum_pool_size = 32 * g; });
    bad("vmm initial above the reservation",
        [&](rmm_vmm_pool_options& b) { b.initial_pool_size = 17 * g; });
    bad("vmm reservation that overflows when rounded",
        [&](rmm_vmm_pool_options& b) { b.reserved_size = SIZE_MAX - 1; });
    bad("vmm peer_devices NULL with a count", [&](rmm_vmm_pool_options& b) {
      b.peer_devices      = nullptr;
      b.peer_device_count = 1;
    });
    static std::int32_t const no_such_device[] = {1 << 20};
    bad("vmm peer device that does not exist", [&](rmm_vmm_pool_options& b) {
      b.peer_devices      = no_such_device;
      b.peer_device_count = 1;
    });
    static std::int32_t const negative_device[] = {-3};
    bad("vmm negative peer device", [&](rmm_vmm_pool_options& b) {
      b.peer_devices      = negative_device;
      b.peer_device_count = 1;
    });
    // Requests the pool cannot serve.
    void* p = nullptr;
    expect_error(rmm_allocate(vmm_, std::size_t{1} << 50, &p), "absurd size (vmm pool)");
    expect_error(rmm_allocate(vmm_, vmm_max_ + 1, &p), "beyond the vmm pool's maximum");
    (void)h;
  }

  void bad_call()
  {
    snapshot before = take();
    void* p         = nullptr;
    int local       = 0;
    auto* foreign   = static_cast<void*>(&local);
    rmm_resource_t h{};
    char const* what = "";
    switch (pick(21)) {
      case 0:
        what = "allocate on a NULL resource";
        expect_error(rmm_allocate(nullptr, 64, &p), what);
        break;
      case 1:
        what = "allocate with a NULL out-pointer";
        if (resources_.empty()) { break; }
        {
          std::size_t const ri = pick(resources_.size());
          expect_error(rmm_allocate(resources_[ri].handle, 64, nullptr),
                       (std::string{"allocate with a NULL out-pointer on "} + name(ri)).c_str());
        }
        break;
      case 2: {
        what = "use of a released handle";
        if (rmm_cuda_create(&h) != RMM_STATUS_SUCCESS) { break; }
        (void)rmm_resource_release(h);
        expect_error(rmm_allocate(h, 64, &p), what);
        expect_error(rmm_resource_retain(h), "retain of a released handle");
        expect_error(rmm_resource_release(h), "double release");
        break;
      }
      case 3:
        what = "allocate on a foreign handle";
        expect_error(rmm_allocate(reinterpret_cast<rmm_resource_t>(foreign), 64, &p), what);
        break;
      case 4: {
        what    = "double free";
        void* q = nullptr;
        if (rmm_allocate(tracking_, 512, &q) != RMM_STATUS_SUCCESS) { break; }
        (void)rmm_deallocate(tracking_, q, 512);
        before = take();  // the valid allocation and free above may move the pool's blocks
        expect_error(rmm_deallocate(tracking_, q, 512), what);
        if (vmm_ != nullptr && rmm_allocate(vmm_, 512, &q) == RMM_STATUS_SUCCESS) {
          (void)rmm_deallocate(vmm_, q, 512);
          before = take();
          expect_error(rmm_deallocate(vmm_, q, 512), "double free (vmm pool)");
        }
        break;
      }
      case 5:
        what = "free of a foreign pointer";
        expect_error(rmm_deallocate(tracking_, foreign, 64), what);
        expect_error(rmm_deallocate(stats_, foreign, 64), "free of a foreign pointer (stats)");
        expect_error(rmm_deallocate(pool_, foreign, 64), "free of a foreign pointer (pool)");
        if (vmm_ != nullptr) {
          expect_error(rmm_deallocate(vmm_, foreign, 64), "free of a foreign pointer (vmm pool)");
          expect_error(rmm_deallocate(vmm_, scratch_, 4096), "free of a cuda pointer (vmm pool)");
        }
        break;
      case 6: {
        what    = "free of an interior pointer";
        live* l = tracked_live();
        if (l == nullptr || l->bytes < 1024) { break; }
        expect_error(
          rmm_deallocate_async(
            resources_[l->res].handle, static_cast<char*>(l->ptr) + 256, l->bytes - 256, l->stream),
          what);
        break;
      }
      case 7: {
        what    = "free with a wrong size";
        live* l = tracked_live();
        if (l == nullptr) { break; }
        expect_error(
          rmm_deallocate_async(resources_[l->res].handle, l->ptr, l->bytes + 4096, l->stream),
          what);
        break;
      }
      case 8:
        what = "absurd size";
        if (!resources_.empty()) {
          std::size_t const ri = pick(resources_.size());
          expect_error(rmm_allocate(resources_[ri].handle, SIZE_MAX - 1000, &p),
                       (std::string{"absurd size on "} + name(ri)).c_str());
        }
        expect_error(rmm_allocate(pool_, std::size_t{1} << 50, &p), "absurd size (pool)");
        break;
      case 9:
        what = "pool geometry";
        expect_error(rmm_pool_create(cuda_, 1000, 0, &h), "pool size not a multiple of 256");
        expect_error(rmm_pool_create(cuda_, 1 << 20, 1 << 19, &h), "pool maximum < initial");
        expect_error(rmm_pool_create(nullptr, 1 << 20, 0, &h), "pool over NULL");
        break;
      case 10:
        what = "arena/binning/fixed/aligned geometry";
        expect_error(rmm_arena_create(cuda_, 1000, false, &h), "arena size not a multiple of 256");
        expect_error(rmm_binning_create(pool_, 20, 10, &h), "binning min > max");
        expect_error(rmm_binning_create(pool_, 8, 200, &h), "binning exponent out of range");
        expect_error(rmm_binning_add_bin(pool_, 4096, nullptr), "add_bin to a pool");
        expect_error(rmm_aligned_adaptor_create(cuda_, 100, 0, &h), "alignment not a power of 2");
        expect_error(rmm_fixed_size_create(nullptr, 4096, 1, &h), "fixed_size over NULL");
        break;
      case 11: {
        what = "destroyed stream";
        rmm_stream_t s{};
        if (rmm_stream_create(0, &s) != RMM_STATUS_SUCCESS) { break; }
        (void)rmm_stream_destroy(s);
        bool done = false;
        expect_error(rmm_stream_synchronize(s), "synchronize a destroyed stream");
        expect_error(rmm_stream_query(s, &done), "query a destroyed stream");
        // A valid device pointer: only the stream is wrong.
        expect_error(rmm_memset_async(scratch_, 0, 64, s), "memset on a destroyed stream");
        expect_error(rmm_stream_destroy(s), "destroy a stream twice");
        break;
      }
      case 12: {
        what = "destroyed event";
        rmm_event_t e{};
        if (rmm_event_create(&e) != RMM_STATUS_SUCCESS) { break; }
        (void)rmm_event_destroy(e);
        expect_error(rmm_event_record(e, RMM_STREAM_DEFAULT), "record a destroyed event");
        expect_error(rmm_event_synchronize(e), "synchronize a destroyed event");
        expect_error(rmm_event_destroy(e), "destroy an event twice");
        break;
      }
      case 13: {
        what = "pop statistics never pushed";
        rmm_statistics_counters c{};
        expect_error(rmm_statistics_adaptor_pop_counters(stats_, &c), what);
        break;
      }
      case 14:
        what = "NULL out-pointers";
        expect_error(rmm_pool_get_stats(pool_, nullptr), "pool_get_stats(NULL)");
        expect_error(rmm_tracking_adaptor_get_allocated_bytes(tracking_, nullptr),
                     "tracking(NULL)");
        expect_error(rmm_stream_query(streams_[0], nullptr), "stream_query(NULL)");
        expect_error(rmm_cuda_create(nullptr), "cuda_create(NULL)");
        expect_error(rmm_resource_id(cuda_, nullptr), "resource_id(NULL)");
        {
          std::uint64_t id = 0;
          expect_error(rmm_resource_id(nullptr, &id), "resource_id of a NULL handle");
          char name[8];
          expect_error(rmm_device_get_name(nullptr, sizeof name, 0), "device_get_name(NULL)");
          expect_error(rmm_device_get_name(name, 0, 0), "device_get_name with no room");
          expect_error(rmm_device_get_name(name, sizeof name, 1 << 20),
                       "device_get_name(bad device)");
          // A good call with a random room: NUL-terminated within it (a host buffer: the
          // name is host data).
          std::size_t const room = 1 + pick(sizeof name);
          std::memset(name, 'x', sizeof name);
          if (rmm_device_get_name(name, room, 0) != RMM_STATUS_SUCCESS ||
              std::memchr(name, 0, room) == nullptr) {
            defect(id_, step_, "device_get_name: not NUL-terminated within the room given");
          }
        }
        break;
      case 15: {
        what = "wrong resource kind";
        rmm_pool_stats ps{};
        rmm_statistics_counters c{};
        std::size_t n = 0;
        expect_error(rmm_pool_get_stats(cuda_, &ps), "pool_get_stats on cuda");
        expect_error(rmm_statistics_adaptor_get_counters(pool_, &c), "statistics on a pool");
        expect_error(rmm_tracking_adaptor_get_allocated_bytes(stats_, &n), "tracking on stats");
        expect_error(rmm_limiting_adaptor_get_allocated_bytes(pool_, &n), "limiting on a pool");
        break;
      }
      case 16:
        what = "beyond the limiting adaptor's limit";
        expect_error(rmm_allocate(limiting_, (8 << 20) + 1, &p), what);
        break;
      case 17:
        what = "NULL copy and fill pointers";
        expect_error(rmm_memcpy_async(nullptr, scratch_, 4, RMM_STREAM_DEFAULT), "memcpy to NULL");
        expect_error(rmm_memcpy_async(scratch_, nullptr, 4, RMM_STREAM_DEFAULT),
                     "memcpy from NULL");
        expect_error(rmm_memset_async(nullptr, 0, 4, RMM_STREAM_DEFAULT), "memset NULL");
        break;
      case 18:
        what = "unknown stream flags";
        {
          rmm_stream_t s{};
          expect_error(rmm_stream_create(0x80, &s), what);
        }
        break;
      case 19:
        what = "vmm pool: wrong handles, NULL stats, bad options";
        bad_vmm_call();
        break;
      default:
        // An unrelated sub-allocator (the arena sits on cuda_, not on the pool). Adaptors
        // over the pool would pass the free on to it, which knows the pointer: the tracking
        // adaptor does so on purpose, as RMM's (it observes, it does not own).
        what = "free on a resource that did not allocate it";
        for (auto& l : live_) {
          auto const hl = resources_[l.res].handle;
          if (hl == pool_) {
            expect_error(rmm_deallocate_async(arena_, l.ptr, l.bytes, l.stream), what);
            if (vmm_ != nullptr) {
              expect_error(rmm_deallocate_async(vmm_, l.ptr, l.bytes, l.stream),
                           "free of a pool's range on the vmm pool");
            }
            break;
          }
          if (hl == vmm_ && hl != nullptr) {
            expect_error(rmm_deallocate_async(pool_, l.ptr, l.bytes, l.stream),
                         "free of a vmm pool's range on the pool");
            break;
          }
        }
        break;
    }
    if (!(take() == before)) {
      defect(id_, step_, std::string{"a bad call changed the counters: "} + what);
    }
  }

  unsigned id_;
  std::mt19937_64 rng_;
  rmm_resource_t shared_vmm_;
  thread_slot& slot_;
  std::uint64_t step_{0}, ops_{0}, bad_calls_{0};
  std::vector<resource> resources_;
  std::vector<rmm_resource_t> owned_;
  std::vector<rmm_stream_t> streams_;
  std::vector<bool> dirty_;
  std::vector<live> live_;
  std::vector<pending_check> pending_;
  void* staging_{};
  std::size_t staging_bytes_{};
  std::vector<unsigned char> staging_fallback_;
  void* scratch_{};
  callback_ctx callback_ctx_{};
  std::atomic<std::size_t> log_lines_{0};
  std::array<kind_counts, K_COUNT> counts_{};
  std::set<std::string> unsupported_, out_of_memory_;
  std::size_t vmm_max_{};
  rmm_resource_t cuda_{}, managed_{}, pinned_{}, pool_{}, arena_{}, limiting_{}, stats_{},
    tracking_{}, vmm_{}, vmm_trim_{};
};

std::uint64_t total_ops(unsigned threads)
{
  std::uint64_t n = 0;
  for (unsigned t = 0; t < threads; ++t) {
    n += g_slots[t].ops.load(std::memory_order_relaxed);
  }
  return n;
}

std::uint64_t total_bad_calls(unsigned threads)
{
  std::uint64_t n = 0;
  for (unsigned t = 0; t < threads; ++t) {
    n += g_slots[t].bad_calls.load(std::memory_order_relaxed);
  }
  return n;
}

bool parse_kinds(std::string const& list)
{
  g_opt.enabled.fill(false);
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t const end = std::min(list.find(',', start), list.size());
    std::string const k   = list.substr(start, end - start);
    if (!k.empty()) {
      auto const it =
        std::find_if(kind_names.begin(), kind_names.end(), [&](char const* n) { return k == n; });
      if (it == kind_names.end()) {
        std::fprintf(stderr, "unknown kind %s; kinds:", k.c_str());
        for (auto const* n : kind_names) {
          std::fprintf(stderr, " %s", n);
        }
        std::fprintf(stderr, "\n");
        return false;
      }
      g_opt.enabled[static_cast<std::size_t>(it - kind_names.begin())] = true;
    }
    start = end + 1;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv)
{
  g_opt.enabled.fill(true);
  for (int i = 1; i < argc; ++i) {
    std::string const a = argv[i];
    auto next           = [&](char const* flag) -> char const* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", flag);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--seconds") {
      g_opt.seconds = std::strtod(next("--seconds"), nullptr);
    } else if (a == "--ops") {
      g_opt.max_ops = std::strtoull(next("--ops"), nullptr, 0);
    } else if (a == "--seed") {
      g_opt.seed = std::strtoull(next("--seed"), nullptr, 0);
    } else if (a == "--threads") {
      g_opt.threads = static_cast<unsigned>(std::strtoul(next("--threads"), nullptr, 0));
    } else if (a == "--forever") {
      g_opt.forever = true;
    } else if (a == "--kinds") {
      if (!parse_kinds(next("--kinds"))) { return 2; }
    } else if (a == "--check-batch") {
      g_opt.check_batch = std::strtoull(next("--check-batch"), nullptr, 0);
    } else if (a == "--vmm-reserve-mib") {
      g_opt.vmm_reserve = std::size_t{std::strtoull(next("--vmm-reserve-mib"), nullptr, 0)} << 20;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--seconds N] [--ops N] [--seed S] [--threads T] [--forever]\n"
                   "          [--kinds LIST] [--check-batch N] [--vmm-reserve-mib N]\n",
                   argv[0]);
      return 2;
    }
  }
  unsigned const threads = g_opt.threads == 0 ? 1 : g_opt.threads;
  if (g_opt.check_batch > 1024) { g_opt.check_batch = 1024; }
  if (g_opt.vmm_reserve == 0) { g_opt.vmm_reserve = std::size_t{1} << 30; }
  g_slots.reset(new thread_slot[threads]);
  // The logging adaptor warns on the debug log about every refused absurd size: keep quiet.
  (void)rmm_set_debug_log_level(6);
  char const* runtime     = "?";
  char const* description = "?";
  rmm_status_t const rt   = rmm_runtime_name(&runtime);
  (void)rmm_runtime_description(&description);
  char device[256] = "?";
  (void)rmm_device_get_name(device, sizeof device, 0);
  bool pageable = false;
  (void)rmm_device_supports_pageable_memory(0, &pageable);
  std::string budget =
    g_opt.forever ? std::string{"until killed"} : std::to_string(g_opt.seconds) + " s";
  if (g_opt.max_ops != 0) { budget += ", at most " + std::to_string(g_opt.max_ops) + " ops"; }
  std::printf("rmm_fuzz_c_abi: seed %" PRIu64 ", %u threads, %s, check batch %zu\n",
              g_opt.seed,
              threads,
              budget.c_str(),
              g_opt.check_batch);
  std::printf("rmm_fuzz_c_abi: runtime %s (%s); device 0: %s, pageable memory access: %s\n",
              runtime,
              description,
              device,
              pageable ? "yes" : "no");
  std::fflush(stdout);
  if (rt != RMM_STATUS_SUCCESS) {
    std::fprintf(stderr, "no runtime: %s\n", rmm_last_error_message());
    return 1;
  }

  // Resources shared by all threads: concurrency on one pool, vmm pool, arena and binning.
  shared_resources shared;
  rmm_resource_t cuda{}, pool{}, arena{}, binning{}, safe{}, vmm{};
  if (rmm_cuda_create(&cuda) != RMM_STATUS_SUCCESS ||
      rmm_pool_create(cuda, 8 << 20, 256 << 20, &pool) != RMM_STATUS_SUCCESS ||
      rmm_arena_create(cuda, 128 << 20, false, &arena) != RMM_STATUS_SUCCESS ||
      rmm_binning_create(pool, 8, 18, &binning) != RMM_STATUS_SUCCESS ||
      rmm_thread_safe_adaptor_create(pool, &safe) != RMM_STATUS_SUCCESS) {
    std::fprintf(stderr, "cannot create the shared resources: %s\n", rmm_last_error_message());
    return 1;
  }
  {
    rmm_vmm_pool_options o{};
    (void)rmm_vmm_pool_options_init(&o);
    o.reserved_size       = 4 * g_opt.vmm_reserve;
    o.maximum_pool_size   = std::size_t{1} << 30;
    rmm_status_t const st = rmm_vmm_pool_create(&o, &vmm);
    if (st == RMM_STATUS_UNSUPPORTED) {
      vmm = nullptr;
      g_unsupported.insert("shared_vmm_pool");
    } else if (st != RMM_STATUS_SUCCESS) {
      std::fprintf(stderr, "cannot create the shared vmm pool: %s\n", rmm_last_error_message());
      return 1;
    }
  }
  auto share = [&](unsigned kind, rmm_resource_t h, std::size_t max_bytes) {
    if (h != nullptr && g_opt.enabled[kind]) {
      shared.list.push_back({kind, h, max_bytes, false});
      g_kind_seen[kind] = true;
    }
  };
  share(K_SHARED_POOL, pool, 16 << 20);
  share(K_SHARED_VMM_POOL, vmm, 16 << 20);
  share(K_SHARED_ARENA, arena, 4 << 20);
  share(K_SHARED_BINNING, binning, 16 << 20);
  share(K_SHARED_THREAD_SAFE, safe, 16 << 20);
  shared.pool = pool;
  shared.vmm  = vmm;

  auto const start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool_of_threads;
  for (unsigned t = 0; t < threads; ++t) {
    pool_of_threads.emplace_back([t, &shared] {
      worker w{t, g_opt.seed * 1000003u + t, shared};
      while (!g_stop.load(std::memory_order_relaxed)) {
        w.step();
      }
    });
  }
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  double next_report = 10;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    double const e = elapsed();
    if (!g_opt.forever && e >= g_opt.seconds) { break; }
    if (g_opt.max_ops != 0 && total_ops(threads) >= g_opt.max_ops) { break; }
    if (g_opt.forever && e >= next_report) {
      next_report += 10;
      std::printf("  %.0f s: %" PRIu64 " ops, %" PRIu64 " bad calls, %" PRIu64 " defects\n",
                  e,
                  total_ops(threads),
                  total_bad_calls(threads),
                  g_defects.load());
      std::fflush(stdout);
    }
  }
  g_stop = true;
  for (auto& t : pool_of_threads) {
    t.join();
  }
  double const seconds = elapsed();
  for (auto h : {safe, binning, arena, vmm, pool, cuda}) {
    if (h != nullptr && rmm_resource_release(h) != RMM_STATUS_SUCCESS) {
      defect(0, 0, "release of a shared resource failed");
    }
  }

  std::uint64_t const ops = total_ops(threads);
  std::printf(
    "rmm_fuzz_c_abi: per kind (allocs, frees, refused by limits, defects; vmm pools: "
    "releases, bytes released, get_stats calls, short-lived pools)\n");
  for (unsigned k = 0; k < K_COUNT; ++k) {
    auto const& c = g_kinds[k];
    if (!g_kind_seen[k] && c.allocs == 0 && c.churns == 0) { continue; }
    std::printf("  %-20s %10" PRIu64 " %10" PRIu64 " %8" PRIu64 " %6" PRIu64,
                kind_names[k],
                c.allocs,
                c.frees,
                c.refused,
                c.defects);
    if (is_vmm(k)) {
      std::printf("  %8" PRIu64 " releases %12" PRIu64 " B %8" PRIu64 " stats %6" PRIu64 " pools",
                  c.releases,
                  c.released_bytes,
                  c.stats_calls,
                  c.churns);
    }
    std::printf("\n");
  }
  std::string skipped;
  for (unsigned k = 0; k < K_COUNT; ++k) {
    if (!g_opt.enabled[k]) { skipped += std::string{" "} + kind_names[k]; }
  }
  if (!skipped.empty()) { std::printf("  not selected (--kinds):%s\n", skipped.c_str()); }
  if (!g_unsupported.empty()) {
    std::string u;
    for (auto const& k : g_unsupported) {
      u += " " + k;
    }
    std::printf("  unsupported on this runtime (RMM_STATUS_UNSUPPORTED):%s\n", u.c_str());
  }
  if (!g_out_of_memory.empty()) {
    std::string u;
    for (auto const& k : g_out_of_memory) {
      u += " " + k;
    }
    std::printf("  not created by some threads (out of memory):%s\n", u.c_str());
  }
  std::printf("rmm_fuzz_c_abi: %" PRIu64 " operations, %" PRIu64 " bad calls, %" PRIu64
              " refused (limits), %" PRIu64 " defects (%.0f ops/s, runtime %s)\n",
              ops,
              total_bad_calls(threads),
              g_refused.load(),
              g_defects.load(),
              seconds > 0 ? static_cast<double>(ops) / seconds : 0.0,
              runtime);
  return g_defects.load() == 0 ? 0 : 1;
}
