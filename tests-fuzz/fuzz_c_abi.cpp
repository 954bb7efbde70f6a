// A seeded random driver of librmm's C ABI (only <rmm/rmm.h>), meant to run under
// AddressSanitizer and UndefinedBehaviorSanitizer.
//
// Several threads allocate and free through many resource kinds (pool, binning, arena,
// fixed_size, every adaptor, managed, pinned, system/async where the runtime has them, a
// callback resource) on several streams, keeping a model of their live ranges: every
// allocation is filled with a byte pattern in stream order and checked before it is freed.
// Between valid calls they make bad ones (null/released/foreign handles, null out-pointers,
// double frees, foreign and interior pointers, wrong sizes, absurd sizes, bad geometry,
// destroyed streams and events, popping statistics never pushed): each must return an error
// status and leave the resource's counters unchanged.
//
// Usage: rmm_fuzz_c_abi [--seconds N] [--seed S] [--threads T] [--forever]
// Prints operations, bad calls and defects; exits non-zero on any defect.
#include <rmm/rmm.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

std::atomic<std::uint64_t> g_ops{0};
std::atomic<std::uint64_t> g_bad_calls{0};
std::atomic<std::uint64_t> g_refused{0};
std::atomic<std::uint64_t> g_defects{0};
std::atomic<bool> g_stop{false};
std::mutex g_print;

void defect(unsigned thread, std::uint64_t step, std::string const& what)
{
  g_defects.fetch_add(1);
  std::lock_guard<std::mutex> lock(g_print);
  std::fprintf(stderr,
               "DEFECT thread %u step %" PRIu64 ": %s (last error: %s)\n",
               thread,
               step,
               what.c_str(),
               rmm_last_error_message());
}

// The callback resource: 256-byte aligned host memory.
void* cb_allocate(std::size_t bytes, rmm_stream_t, void*)
{
  if (bytes > (std::size_t{1} << 40)) { return nullptr; }  // absurd sizes: refuse
  return std::aligned_alloc(256, (bytes + 255) / 256 * 256);
}
void cb_deallocate(void* ptr, std::size_t, rmm_stream_t, void*) { std::free(ptr); }
void log_sink(char const*, std::size_t, void* arg)
{
  static_cast<std::atomic<std::size_t>*>(arg)->fetch_add(1);
}
bool never_retry(std::size_t, void*) { return false; }

struct resource {
  char const* name;
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

// Counters of one thread's private adaptors, compared around every bad call.
struct snapshot {
  rmm_statistics_counters stats{};
  std::size_t tracked_bytes{};
  std::size_t tracked_count{};
  std::size_t limited_bytes{};
  rmm_pool_stats pool{};
  bool operator==(snapshot const& o) const
  {
    return std::memcmp(&stats, &o.stats, sizeof stats) == 0 &&
           tracked_bytes == o.tracked_bytes && tracked_count == o.tracked_count &&
           limited_bytes == o.limited_bytes && pool.pool_size == o.pool.pool_size &&
           pool.free_block_count == o.pool.free_block_count;
  }
};

class worker {
 public:
  worker(unsigned id, std::uint64_t seed, std::vector<resource> const& shared)
    : id_{id}, rng_{seed}
  {
    make_private_resources();
    for (auto const& r : shared) {
      resources_.push_back(r);
    }
    for (int i = 0; i < 3; ++i) {
      rmm_stream_t s{};
      check_ok(rmm_stream_create(i == 2 ? RMM_STREAM_NON_BLOCKING : 0u, &s), "stream_create");
      streams_.push_back(s);
    }
    streams_.push_back(RMM_STREAM_DEFAULT);
    streams_.push_back(RMM_STREAM_PER_THREAD);
  }

  ~worker()
  {
    while (!live_.empty()) {
      free_one(live_.size() - 1);
    }
    for (std::size_t i = 0; i < 3; ++i) {
      check_ok(rmm_stream_destroy(streams_[i]), "stream_destroy");
    }
    for (auto h : owned_) {
      check_ok(rmm_resource_release(h), "resource_release");
    }
  }

  void step()
  {
    ++step_;
    g_ops.fetch_add(1);
    auto const roll = pick(100);
    if (roll < 10) {
      bad_call();
    } else if (roll < 55 || live_.empty()) {
      if (live_.size() < 48) { allocate(); }
    } else {
      free_one(pick(live_.size()));
    }
  }

 private:
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }

  bool check_ok(rmm_status_t st, char const* what)
  {
    if (st != RMM_STATUS_SUCCESS) {
      defect(id_, step_, std::string{what} + " failed: " + rmm_status_string(st));
      return false;
    }
    return true;
  }

  // `h` by reference: it is read after the create call (argument order is unspecified).
  rmm_resource_t own(rmm_status_t st, rmm_resource_t const& h, char const* what)
  {
    if (st == RMM_STATUS_UNSUPPORTED) { return nullptr; }
    if (!check_ok(st, what)) { return nullptr; }
    owned_.push_back(h);
    return h;
  }

  void add(char const* name, rmm_resource_t h, std::size_t max_bytes = 0, bool priv = true)
  {
    if (h != nullptr) { resources_.push_back({name, h, max_bytes, priv}); }
  }

  void make_private_resources()
  {
    rmm_resource_t h{};
    cuda_ = own(rmm_cuda_create(&h), h, "cuda_create");
    add("cuda", cuda_);
    managed_ = own(rmm_managed_create(&h), h, "managed_create");
    add("managed", managed_);
    add("pinned_host", own(rmm_pinned_host_create(&h), h, "pinned_host_create"));
    add("system", own(rmm_system_create(&h), h, "system_create"));
    // Nothing reserved up front: by default a pool reserves half of the free memory
    // (RMM 25.02), and the fuzzer's threads creating theirs at once would leave the other
    // resources of this set too little to be created (the default is tested elsewhere).
    std::size_t const threshold = 0, initial = 0;
    add("async", own(rmm_async_create(&initial, &threshold, 0, &h), h, "async_create"));
    add("callback",
        own(rmm_callback_create(cb_allocate, cb_deallocate, nullptr, nullptr, &h), h, "callback"));
    pool_ = own(rmm_pool_create(cuda_, 4 << 20, 64 << 20, &h), h, "pool_create");
    add("pool", pool_, 16 << 20);
    add("binning", own(rmm_binning_create(pool_, 8, 16, &h), h, "binning_create"), 16 << 20);
    arena_ = own(rmm_arena_create(cuda_, 64 << 20, false, &h), h, "arena_create");
    add("arena", arena_, 4 << 20);
    add("fixed_size", own(rmm_fixed_size_create(cuda_, 64 << 10, 4, &h), h, "fixed"), 64 << 10);
    add("aligned", own(rmm_aligned_adaptor_create(cuda_, 4096, 1024, &h), h, "aligned"));
    limiting_ = own(rmm_limiting_adaptor_create(pool_, 8 << 20, 256, &h), h, "limiting");
    add("limiting", limiting_, 8 << 20);
    add("logging",
        own(rmm_logging_create_with_callback(pool_, log_sink, &log_lines_, 0, &h), h, "logging"),
        16 << 20);
    stats_ = own(rmm_statistics_adaptor_create(pool_, &h), h, "statistics");
    add("statistics", stats_, 16 << 20);
    tracking_ = own(rmm_tracking_adaptor_create(pool_, false, &h), h, "tracking");
    add("tracking", tracking_, 16 << 20);
    add("thread_safe", own(rmm_thread_safe_adaptor_create(pool_, &h), h, "thread_safe"), 16 << 20);
    add("prefetch", own(rmm_prefetch_adaptor_create(managed_, &h), h, "prefetch"));
    add("failure_callback",
        own(rmm_failure_callback_adaptor_create(pool_, never_retry, nullptr, &h), h, "failcb"),
        16 << 20);
  }

  std::size_t random_size(std::size_t max_bytes)
  {
    std::size_t n = 0;
    switch (pick(8)) {
      case 0: n = 0; break;
      case 1: n = 1 + pick(16); break;
      case 2: n = 1 + pick(64 << 10); break;
      case 3: n = 1 + pick(4 << 20); break;
      default: n = 1 + pick(4096); break;
    }
    if (max_bytes != 0 && n > max_bytes) { n = max_bytes; }
    return n;
  }

  void allocate()
  {
    std::size_t const ri = pick(resources_.size());
    auto const& r        = resources_[ri];
    std::size_t const n  = random_size(r.max_bytes);
    rmm_stream_t const s = streams_[pick(streams_.size())];
    void* p              = nullptr;
    rmm_status_t const st = rmm_allocate_async(r.handle, n, s, &p);
    if (st == RMM_STATUS_OUT_OF_MEMORY || st == RMM_STATUS_BAD_ALLOC) {
      g_refused.fetch_add(1);  // limits (limiting adaptor, pool maximum, arena) are valid
      return;
    }
    if (!check_ok(st, (std::string{"allocate_async on "} + r.name).c_str())) { return; }
    if (n == 0) {
      if (p != nullptr) { defect(id_, step_, std::string{r.name} + ": 0 bytes gave non-null"); }
      return;
    }
    if (p == nullptr || reinterpret_cast<std::uintptr_t>(p) % 256 != 0) {
      defect(id_, step_, std::string{r.name} + ": null or unaligned pointer");
      return;
    }
    auto const pattern = static_cast<unsigned char>(1 + pick(254));
    check_ok(rmm_memset_async(p, pattern, n, s), "memset_async");
    live_.push_back({ri, p, n, s, pattern});
  }

  // Checks the first and last 4 KiB of a live range against its pattern.
  void verify(live const& l)
  {
    std::size_t const head = l.bytes < 4096 ? l.bytes : 4096;
    std::vector<unsigned char> buf(head);
    check_ok(rmm_memcpy_async(buf.data(), l.ptr, head, l.stream), "memcpy_async (check)");
    check_ok(rmm_stream_synchronize(l.stream), "stream_synchronize");
    bool ok = true;
    for (auto b : buf) {
      ok = ok && b == l.pattern;
    }
    if (l.bytes > head) {
      auto const* tail = static_cast<char const*>(l.ptr) + (l.bytes - head);
      check_ok(rmm_memcpy_async(buf.data(), tail, head, l.stream), "memcpy_async (check)");
      for (auto b : buf) {
        ok = ok && b == l.pattern;
      }
    }
    if (!ok) {
      defect(id_, step_, std::string{"pattern overwritten in a live range of "} +
                           resources_[l.res].name);
    }
  }

  void free_one(std::size_t i)
  {
    live const l = live_[i];
    live_[i]     = live_.back();
    live_.pop_back();
    verify(l);
    check_ok(rmm_deallocate_async(resources_[l.res].handle, l.ptr, l.bytes, l.stream),
             (std::string{"deallocate_async on "} + resources_[l.res].name).c_str());
  }

  snapshot take()
  {
    snapshot s;
    (void)rmm_statistics_adaptor_get_counters(stats_, &s.stats);
    (void)rmm_tracking_adaptor_get_allocated_bytes(tracking_, &s.tracked_bytes);
    (void)rmm_tracking_adaptor_get_outstanding_count(tracking_, &s.tracked_count);
    (void)rmm_limiting_adaptor_get_allocated_bytes(limiting_, &s.limited_bytes);
    (void)rmm_pool_get_stats(pool_, &s.pool);
    return s;
  }

  // One live range of a private resource that detects bad frees (the adaptors that track
  // their allocations), or none.
  live* tracked_live()
  {
    for (std::size_t k = 0; k < live_.size(); ++k) {
      auto const h = resources_[live_[k].res].handle;
      if (h == tracking_ || h == stats_ || h == pool_) { return &live_[k]; }
    }
    return nullptr;
  }

  void expect_error(rmm_status_t st, char const* what)
  {
    g_bad_calls.fetch_add(1);
    if (st == RMM_STATUS_SUCCESS) {
      defect(id_, step_, std::string{"bad call succeeded: "} + what);
    } else if (st == RMM_STATUS_PANIC) {
      defect(id_, step_, std::string{"bad call panicked: "} + what);
    }
  }

  void bad_call()
  {
    snapshot before = take();
    void* p               = nullptr;
    int local             = 0;
    auto* foreign         = static_cast<void*>(&local);
    rmm_resource_t h{};
    char const* what = "";
    switch (pick(20)) {
      case 0:
        what = "allocate on a NULL resource";
        expect_error(rmm_allocate(nullptr, 64, &p), what);
        break;
      case 1:
        what = "allocate with a NULL out-pointer";
        expect_error(rmm_allocate(resources_[pick(resources_.size())].handle, 64, nullptr), what);
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
        what = "double free";
        void* q = nullptr;
        if (rmm_allocate(tracking_, 512, &q) != RMM_STATUS_SUCCESS) { break; }
        (void)rmm_deallocate(tracking_, q, 512);
        before = take();  // the valid allocation and free above may move the pool's blocks
        expect_error(rmm_deallocate(tracking_, q, 512), what);
        break;
      }
      case 5:
        what = "free of a foreign pointer";
        expect_error(rmm_deallocate(tracking_, foreign, 64), what);
        expect_error(rmm_deallocate(stats_, foreign, 64), "free of a foreign pointer (stats)");
        expect_error(rmm_deallocate(pool_, foreign, 64), "free of a foreign pointer (pool)");
        break;
      case 6: {
        what    = "free of an interior pointer";
        live* l = tracked_live();
        if (l == nullptr || l->bytes < 1024) { break; }
        expect_error(rmm_deallocate_async(resources_[l->res].handle,
                                          static_cast<char*>(l->ptr) + 256,
                                          l->bytes - 256,
                                          l->stream),
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
        expect_error(rmm_allocate(resources_[pick(resources_.size())].handle,
                                  SIZE_MAX - 1000,
                                  &p),
                     what);
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
        expect_error(rmm_memset_async(foreign, 0, sizeof local, s), "memset on a destroyed stream");
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
        expect_error(rmm_tracking_adaptor_get_allocated_bytes(tracking_, nullptr), "tracking(NULL)");
        expect_error(rmm_stream_query(streams_[0], nullptr), "stream_query(NULL)");
        expect_error(rmm_cuda_create(nullptr), "cuda_create(NULL)");
        expect_error(rmm_resource_id(cuda_, nullptr), "resource_id(NULL)");
        {
          std::uint64_t id = 0;
          expect_error(rmm_resource_id(nullptr, &id), "resource_id of a NULL handle");
          char name[8];
          expect_error(rmm_device_get_name(nullptr, sizeof name, 0), "device_get_name(NULL)");
          expect_error(rmm_device_get_name(name, 0, 0), "device_get_name with no room");
          expect_error(rmm_device_get_name(name, sizeof name, 1 << 20), "device_get_name(bad device)");
          // A good call with a random room: NUL-terminated within it.
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
        expect_error(rmm_memcpy_async(nullptr, foreign, 4, RMM_STREAM_DEFAULT), "memcpy to NULL");
        expect_error(rmm_memcpy_async(foreign, nullptr, 4, RMM_STREAM_DEFAULT), "memcpy from NULL");
        expect_error(rmm_memset_async(nullptr, 0, 4, RMM_STREAM_DEFAULT), "memset NULL");
        break;
      case 18:
        what = "unknown stream flags";
        {
          rmm_stream_t s{};
          expect_error(rmm_stream_create(0x80, &s), what);
        }
        break;
      default:
        // An unrelated sub-allocator (the arena sits on cuda_, not on the pool). Adaptors
        // over the pool would pass the free on to it, which knows the pointer: the tracking
        // adaptor does so on purpose, as RMM's (it observes, it does not own).
        what = "free on a resource that did not allocate it";
        for (auto& l : live_) {
          if (resources_[l.res].handle == pool_) {
            expect_error(rmm_deallocate_async(arena_, l.ptr, l.bytes, l.stream), what);
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
  std::uint64_t step_{0};
  std::vector<resource> resources_;
  std::vector<rmm_resource_t> owned_;
  std::vector<rmm_stream_t> streams_;
  std::vector<live> live_;
  std::atomic<std::size_t> log_lines_{0};
  rmm_resource_t cuda_{}, managed_{}, pool_{}, arena_{}, limiting_{}, stats_{}, tracking_{};
};

}  // namespace

int main(int argc, char** argv)
{
  double seconds     = 30;
  std::uint64_t seed = 1;
  unsigned threads   = 4;
  bool forever       = false;
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
      seconds = std::strtod(next("--seconds"), nullptr);
    } else if (a == "--seed") {
      seed = std::strtoull(next("--seed"), nullptr, 0);
    } else if (a == "--threads") {
      threads = static_cast<unsigned>(std::strtoul(next("--threads"), nullptr, 0));
    } else if (a == "--forever") {
      forever = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--seconds N] [--seed S] [--threads T] [--forever]\n",
                   argv[0]);
      return 2;
    }
  }
  if (threads == 0) { threads = 1; }
  // The logging adaptor warns on the debug log about every refused absurd size: keep quiet.
  (void)rmm_set_debug_log_level(6);
  char const* runtime = "?";
  (void)rmm_runtime_name(&runtime);
  std::printf("rmm_fuzz_c_abi: seed %" PRIu64 ", %u threads, %s (runtime %s)\n",
              seed,
              threads,
              forever ? "until killed" : (std::to_string(seconds) + " s").c_str(),
              runtime);
  std::fflush(stdout);

  // Resources shared by all threads: concurrency on one pool, arena and binning.
  std::vector<resource> shared;
  std::vector<rmm_resource_t> shared_owned;
  rmm_resource_t cuda{}, pool{}, arena{}, binning{}, safe{};
  if (rmm_cuda_create(&cuda) != RMM_STATUS_SUCCESS ||
      rmm_pool_create(cuda, 8 << 20, 256 << 20, &pool) != RMM_STATUS_SUCCESS ||
      rmm_arena_create(cuda, 128 << 20, false, &arena) != RMM_STATUS_SUCCESS ||
      rmm_binning_create(pool, 8, 18, &binning) != RMM_STATUS_SUCCESS ||
      rmm_thread_safe_adaptor_create(pool, &safe) != RMM_STATUS_SUCCESS) {
    std::fprintf(stderr, "cannot create the shared resources: %s\n", rmm_last_error_message());
    return 1;
  }
  shared.push_back({"shared pool", pool, 16 << 20, false});
  shared.push_back({"shared arena", arena, 4 << 20, false});
  shared.push_back({"shared binning", binning, 16 << 20, false});
  shared.push_back({"shared thread_safe", safe, 16 << 20, false});

  auto const start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool_of_threads;
  for (unsigned t = 0; t < threads; ++t) {
    pool_of_threads.emplace_back([t, seed, &shared] {
      worker w{t, seed * 1000003u + t, shared};
      while (!g_stop.load(std::memory_order_relaxed)) {
        w.step();
      }
    });
  }
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    double const elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!forever && elapsed >= seconds) { break; }
    if (forever && static_cast<int>(elapsed * 10) % 100 == 0) {
      std::printf("  %.0f s: %" PRIu64 " ops, %" PRIu64 " bad calls, %" PRIu64 " defects\n",
                  elapsed,
                  g_ops.load(),
                  g_bad_calls.load(),
                  g_defects.load());
      std::fflush(stdout);
    }
  }
  g_stop = true;
  for (auto& t : pool_of_threads) {
    t.join();
  }
  for (auto h : {safe, binning, arena, pool, cuda}) {
    if (rmm_resource_release(h) != RMM_STATUS_SUCCESS) {
      defect(0, 0, "release of a shared resource failed");
    }
  }
  (void)shared_owned;
  std::printf("rmm_fuzz_c_abi: %" PRIu64 " operations, %" PRIu64 " bad calls, %" PRIu64
              " refused (limits), %" PRIu64 " defects\n",
              g_ops.load(),
              g_bad_calls.load(),
              g_refused.load(),
              g_defects.load());
  return g_defects.load() == 0 ? 0 : 1;
}
