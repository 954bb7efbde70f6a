// Host-runtime fidelity: behaviours of the GPU runtime that code relies on, checked through
// the C ABI only, so that the same binary runs unchanged on the host emulation (CI) and on a
// GPU (RMM_RUNTIME=cuda on the H100). docs/host-runtime-fidelity.md lists one test per item.
//
// Stream work is made "long" by repeated memsets of a 64 MiB buffer, calibrated at run time
// so that it lasts about as long on a GPU as on the host emulation. Tests that check that
// something does NOT wait are timing-based: they retry with longer work before failing.
#include <rmm/rmm.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

namespace {

#define RMM_OK(call) ASSERT_EQ((call), RMM_STATUS_SUCCESS) << rmm_last_error_message()

using clock_type = std::chrono::steady_clock;

constexpr std::size_t busy_bytes = std::size_t{64} << 20;

class fidelity : public ::testing::Test {
 protected:
  void SetUp() override
  {
    ASSERT_EQ(rmm_cuda_create(&mr_), RMM_STATUS_SUCCESS) << rmm_last_error_message();
    ASSERT_EQ(rmm_allocate(mr_, busy_bytes, &busy_buf_), RMM_STATUS_SUCCESS)
      << rmm_last_error_message();
  }
  void TearDown() override
  {
    (void)rmm_device_synchronize();
    for (auto [p, n] : allocations_) {
      EXPECT_EQ(rmm_deallocate(mr_, p, n), RMM_STATUS_SUCCESS) << rmm_last_error_message();
    }
    for (auto s : streams_) {
      EXPECT_EQ(rmm_stream_destroy(s), RMM_STATUS_SUCCESS) << rmm_last_error_message();
    }
    if (busy_buf_ != nullptr) { EXPECT_EQ(rmm_deallocate(mr_, busy_buf_, busy_bytes), 0); }
    if (mr_ != nullptr) { EXPECT_EQ(rmm_resource_release(mr_), RMM_STATUS_SUCCESS); }
  }

  void* device(std::size_t bytes)
  {
    void* p = nullptr;
    EXPECT_EQ(rmm_allocate(mr_, bytes, &p), RMM_STATUS_SUCCESS) << rmm_last_error_message();
    allocations_.emplace_back(p, bytes);
    return p;
  }

  rmm_stream_t stream(std::uint32_t flags = 0)
  {
    rmm_stream_t s{};
    EXPECT_EQ(rmm_stream_create(flags, &s), RMM_STATUS_SUCCESS) << rmm_last_error_message();
    streams_.push_back(s);
    return s;
  }

  // Memsets of the busy buffer per millisecond of work (measured once per test).
  double memsets_per_ms()
  {
    if (rate_ > 0) { return rate_; }
    rmm_stream_t const s = stream();
    (void)rmm_memset_async(busy_buf_, 1, busy_bytes, s);  // first touch on the host
    (void)rmm_stream_synchronize(s);
    int n      = 1;
    auto start = clock_type::now();
    for (;;) {
      for (int i = 0; i < n; ++i) {
        (void)rmm_memset_async(busy_buf_, i, busy_bytes, s);
      }
      (void)rmm_stream_synchronize(s);
      double const ms =
        std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
      if (ms >= 5.0) {
        rate_ = n / ms;
        return rate_;
      }
      n *= 2;
      start = clock_type::now();
    }
  }

  // Enqueues about `ms` milliseconds of work on `s`.
  void busy(rmm_stream_t s, double ms)
  {
    int const n = std::max(1, static_cast<int>(memsets_per_ms() * ms));
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(rmm_memset_async(busy_buf_, i & 0xff, busy_bytes, s), RMM_STATUS_SUCCESS);
    }
  }

  static bool complete(rmm_stream_t s)
  {
    bool done = false;
    EXPECT_EQ(rmm_stream_query(s, &done), RMM_STATUS_SUCCESS) << rmm_last_error_message();
    return done;
  }

  static std::vector<std::uint8_t> to_host(void const* p, std::size_t n, rmm_stream_t s)
  {
    std::vector<std::uint8_t> out(n);
    EXPECT_EQ(rmm_memcpy_async(out.data(), p, n, s), RMM_STATUS_SUCCESS);
    EXPECT_EQ(rmm_stream_synchronize(s), RMM_STATUS_SUCCESS);
    return out;
  }

  static bool all_equal(std::vector<std::uint8_t> const& v, std::uint8_t b)
  {
    return std::all_of(v.begin(), v.end(), [b](std::uint8_t x) { return x == b; });
  }

  rmm_resource_t mr_{};
  void* busy_buf_{};
  double rate_{0};
  std::vector<std::pair<void*, std::size_t>> allocations_;
  std::vector<rmm_stream_t> streams_;
};

// 1. A pageable host source is read before cudaMemcpyAsync returns (issue #14). Retried with
//    longer work when the stream drained before the check (a loaded machine).
TEST_F(fidelity, PageableSourceIsReadBeforeMemcpyAsyncReturns)
{
  rmm_stream_t const s = stream();
  auto* dst            = device(256);
  bool meaningful      = false;
  for (double ms = 50; ms <= 400 && !meaningful; ms *= 2) {
    busy(s, ms);
    std::uint32_t x = 0x11111111;
    RMM_OK(rmm_memcpy_async(dst, &x, sizeof x, s));
    x                 = 0x22222222;
    meaningful        = !complete(s);
    std::uint32_t got = 0;
    RMM_OK(rmm_memcpy_async(&got, dst, sizeof got, s));
    RMM_OK(rmm_stream_synchronize(s));
    EXPECT_EQ(got, 0x11111111U);
  }
  EXPECT_TRUE(meaningful) << "the stream always finished too early for the test to mean anything";
}

// 2. A pinned host source is read in stream order (after the earlier work), not at the call.
TEST_F(fidelity, PinnedSourceIsReadInStreamOrder)
{
  constexpr std::size_t n = 1 << 20;
  rmm_stream_t const s    = stream();
  auto* dst               = device(n);
  void* pinned            = nullptr;
  RMM_OK(rmm_pinned_host_allocate(n, 256, &pinned));
  bool meaningful = false;
  for (double ms = 50; ms <= 400 && !meaningful; ms *= 2) {
    std::memset(pinned, 1, n);
    busy(s, ms);
    RMM_OK(rmm_memcpy_async(dst, pinned, n, s));
    std::memset(pinned, 2, n);
    meaningful     = !complete(s);
    auto const got = to_host(dst, n, s);
    if (meaningful) { EXPECT_TRUE(all_equal(got, 2)); }
  }
  EXPECT_TRUE(meaningful) << "the stream always finished too early for the test to mean anything";
  RMM_OK(rmm_pinned_host_deallocate(pinned, n, 256));
}

// 3. A device-to-host copy into pageable memory returns only when the copy is done.
TEST_F(fidelity, CopyIntoPageableMemoryIsSynchronous)
{
  constexpr std::size_t n = 1 << 20;
  rmm_stream_t const s    = stream();
  auto* src               = device(n);
  busy(s, 50);
  RMM_OK(rmm_memset_async(src, 0x5a, n, s));
  std::vector<std::uint8_t> out(n);
  RMM_OK(rmm_memcpy_async(out.data(), src, n, s));
  EXPECT_TRUE(all_equal(out, 0x5a));
  EXPECT_TRUE(complete(s));
}

// 4. A copy between two pageable host buffers is synchronous too.
TEST_F(fidelity, HostToHostCopyIsSynchronous)
{
  rmm_stream_t const s = stream();
  busy(s, 20);
  std::vector<std::uint8_t> from(4096, 7);
  std::vector<std::uint8_t> to(4096, 0);
  RMM_OK(rmm_memcpy_async(to.data(), from.data(), from.size(), s));
  EXPECT_EQ(to, from);
  RMM_OK(rmm_stream_synchronize(s));
}

// 5. Device-to-device copies and memsets are asynchronous and run in stream order.
TEST_F(fidelity, DeviceCopiesAndMemsetsAreAsynchronousAndOrdered)
{
  constexpr std::size_t n = 1 << 20;
  rmm_stream_t const s    = stream();
  auto* a                 = device(n);
  auto* b                 = device(n);
  bool asynchronous       = false;
  for (double ms = 50; ms <= 400 && !asynchronous; ms *= 2) {
    busy(s, ms);
    RMM_OK(rmm_memset_async(a, 1, n, s));
    RMM_OK(rmm_memcpy_async(b, a, n, s));
    RMM_OK(rmm_memset_async(a, 2, n, s));
    asynchronous = !complete(s);
    EXPECT_TRUE(all_equal(to_host(b, n, s), 1));
    EXPECT_TRUE(all_equal(to_host(a, n, s), 2));
  }
  EXPECT_TRUE(asynchronous) << "the calls returned only after the stream had drained";
}

// 6. cudaMemsetAsync writes the low byte of its int value.
TEST_F(fidelity, MemsetWritesTheLowByte)
{
  rmm_stream_t const s = stream();
  auto* a              = device(4096);
  RMM_OK(rmm_memset_async(a, 0x1ab, 4096, s));
  EXPECT_TRUE(all_equal(to_host(a, 4096, s), 0xab));
}

// 7. The legacy default stream waits for blocking streams, and they wait for it.
TEST_F(fidelity, LegacyStreamSynchronizesWithBlockingStreams)
{
  constexpr std::size_t n = 1 << 20;
  rmm_stream_t const s    = stream();  // blocking
  auto* x                 = device(n);
  auto* y                 = device(n);
  busy(s, 30);
  RMM_OK(rmm_memset_async(x, 1, n, s));
  RMM_OK(rmm_memcpy_async(y, x, n, RMM_STREAM_LEGACY));  // waits for s
  RMM_OK(rmm_stream_synchronize(RMM_STREAM_LEGACY));
  EXPECT_TRUE(complete(s));
  EXPECT_TRUE(all_equal(to_host(y, n, s), 1));

  busy(RMM_STREAM_LEGACY, 30);
  RMM_OK(rmm_memset_async(x, 3, n, RMM_STREAM_LEGACY));
  RMM_OK(rmm_memcpy_async(y, x, n, s));  // waits for the legacy stream
  RMM_OK(rmm_stream_synchronize(s));
  EXPECT_TRUE(complete(RMM_STREAM_LEGACY));
  EXPECT_TRUE(all_equal(to_host(y, n, s), 3));
}

// Whether an event recorded on `fast` completes while `slow` still has work queued before it;
// retried with longer work so that a slow machine is not mistaken for a wrong wait.
template <class Busy>
bool overtakes(Busy&& make_busy, rmm_stream_t slow, rmm_stream_t fast)
{
  rmm_event_t e{};
  EXPECT_EQ(rmm_event_create(&e), RMM_STATUS_SUCCESS);
  bool ok = false;
  for (double ms = 50; ms <= 400 && !ok; ms *= 2) {
    make_busy(slow, ms);
    EXPECT_EQ(rmm_event_record(e, fast), RMM_STATUS_SUCCESS) << rmm_last_error_message();
    EXPECT_EQ(rmm_event_synchronize(e), RMM_STATUS_SUCCESS);
    bool done = true;
    EXPECT_EQ(rmm_stream_query(slow, &done), RMM_STATUS_SUCCESS);
    ok = !done;
    EXPECT_EQ(rmm_stream_synchronize(slow), RMM_STATUS_SUCCESS);
  }
  EXPECT_EQ(rmm_event_destroy(e), RMM_STATUS_SUCCESS);
  return ok;
}

// 8. Non-blocking streams neither wait for the legacy stream nor make it wait.
TEST_F(fidelity, NonBlockingStreamsIgnoreTheLegacyStream)
{
  rmm_stream_t const nb = stream(RMM_STREAM_NON_BLOCKING);
  auto work             = [this](rmm_stream_t s, double ms) { busy(s, ms); };
  EXPECT_TRUE(overtakes(work, RMM_STREAM_LEGACY, nb));
  EXPECT_TRUE(overtakes(work, nb, RMM_STREAM_LEGACY));
  // A blocking stream, by contrast, may not overtake the legacy stream (item 7).
}

// 9. The per-thread default stream synchronizes with the legacy stream, but the per-thread
//    streams of two threads are independent.
TEST_F(fidelity, PerThreadDefaultStreamSemantics)
{
  constexpr std::size_t n = 1 << 20;
  auto* x                 = device(n);
  auto* y                 = device(n);
  busy(RMM_STREAM_PER_THREAD, 30);
  RMM_OK(rmm_memset_async(x, 4, n, RMM_STREAM_PER_THREAD));
  RMM_OK(rmm_memcpy_async(y, x, n, RMM_STREAM_LEGACY));
  RMM_OK(rmm_stream_synchronize(RMM_STREAM_LEGACY));
  EXPECT_TRUE(complete(RMM_STREAM_PER_THREAD));
  EXPECT_TRUE(all_equal(to_host(y, n, RMM_STREAM_LEGACY), 4));

  bool independent = false;
  for (double ms = 50; ms <= 400 && !independent; ms *= 2) {
    busy(RMM_STREAM_PER_THREAD, ms);
    rmm_status_t other = RMM_STATUS_SUCCESS;
    std::thread([&other] {
      rmm_event_t e{};
      other = rmm_event_create(&e);
      if (other == RMM_STATUS_SUCCESS) { other = rmm_event_record(e, RMM_STREAM_PER_THREAD); }
      if (other == RMM_STATUS_SUCCESS) { other = rmm_event_synchronize(e); }
      (void)rmm_event_destroy(e);
    }).join();
    EXPECT_EQ(other, RMM_STATUS_SUCCESS) << rmm_last_error_message();
    independent = !complete(RMM_STREAM_PER_THREAD);
    RMM_OK(rmm_stream_synchronize(RMM_STREAM_PER_THREAD));
  }
  EXPECT_TRUE(independent);
}

// 10. Events: an unrecorded event is complete; cudaStreamWaitEvent waits for the record made
//     before the call, not a later one.
TEST_F(fidelity, EventsAndStreamWaitEvent)
{
  constexpr std::size_t n = 1 << 20;
  rmm_stream_t const a    = stream(RMM_STREAM_NON_BLOCKING);
  rmm_stream_t const b    = stream(RMM_STREAM_NON_BLOCKING);
  rmm_stream_t const c    = stream(RMM_STREAM_NON_BLOCKING);
  auto* x                 = device(n);
  auto* y                 = device(n);
  rmm_event_t e{};
  RMM_OK(rmm_event_create(&e));
  bool done = false;
  RMM_OK(rmm_event_query(e, &done));
  EXPECT_TRUE(done);
  RMM_OK(rmm_event_synchronize(e));
  RMM_OK(rmm_stream_wait_event(b, e));  // never recorded: no dependency

  // Retried with longer work when a's work drained before the checks (a loaded machine).
  bool meaningful = false;
  int value       = 5;
  for (double ms = 150; ms <= 1200 && !meaningful; ms *= 2, ++value) {
    busy(a, ms);
    RMM_OK(rmm_memset_async(x, value, n, a));
    RMM_OK(rmm_event_record(e, a));
    RMM_OK(rmm_event_query(e, &done));
    bool const pending = !done;
    RMM_OK(rmm_stream_wait_event(b, e));
    RMM_OK(rmm_memcpy_async(y, x, n, b));
    RMM_OK(rmm_event_record(e, c));  // a later record on an idle stream
    RMM_OK(rmm_event_synchronize(e));
    bool const b_done = complete(b);
    // a still busy after b was looked at: b was looked at while its wait could not be over.
    if (pending && !complete(a)) {
      meaningful = true;
      EXPECT_FALSE(b_done) << "b must still wait for the first record (a's work)";
    }
    RMM_OK(rmm_stream_synchronize(b));
    EXPECT_TRUE(all_equal(to_host(y, n, b), static_cast<std::uint8_t>(value)));
  }
  EXPECT_TRUE(meaningful) << "a's work always finished too early for the test to mean anything";
  RMM_OK(rmm_event_destroy(e));
}

// 11. cudaFree and cudaFreeHost wait for the device's work.
TEST_F(fidelity, FreeWaitsForTheDevice)
{
  rmm_stream_t const s = stream(RMM_STREAM_NON_BLOCKING);
  void* p              = nullptr;
  RMM_OK(rmm_allocate(mr_, 4096, &p));
  busy(s, 50);
  RMM_OK(rmm_deallocate(mr_, p, 4096));
  EXPECT_TRUE(complete(s));

  void* h = nullptr;
  RMM_OK(rmm_pinned_host_allocate(4096, 256, &h));
  busy(s, 50);
  RMM_OK(rmm_pinned_host_deallocate(h, 4096, 256));
  EXPECT_TRUE(complete(s));
}

// 12. Stream-ordered pools: memory freed in stream order is usable again after a
//     synchronize, and a release threshold of 0 gives it back to the device then.
TEST_F(fidelity, StreamOrderedPoolReleasesAtSynchronize)
{
  rmm_stream_t const s    = stream();
  std::size_t const zero  = 0;
  rmm_resource_t pool     = nullptr;
  rmm_status_t const made = rmm_async_create(nullptr, &zero, 0, &pool);
  if (made == RMM_STATUS_UNSUPPORTED) { GTEST_SKIP() << rmm_last_error_message(); }
  RMM_OK(made);
  constexpr std::size_t n = std::size_t{256} << 20;
  std::size_t free0 = 0, free1 = 0, free2 = 0, total = 0;
  RMM_OK(rmm_device_synchronize());
  RMM_OK(rmm_available_device_memory(&free0, &total));
  void* p = nullptr;
  RMM_OK(rmm_allocate_async(pool, n, s, &p));
  RMM_OK(rmm_memset_async(p, 9, n, s));
  RMM_OK(rmm_available_device_memory(&free1, &total));
  EXPECT_LE(free1 + n, free0 + (std::size_t{8} << 20));
  RMM_OK(rmm_deallocate_async(pool, p, n, s));
  RMM_OK(rmm_stream_synchronize(s));
  RMM_OK(rmm_available_device_memory(&free2, &total));
  EXPECT_GE(free2 + (std::size_t{8} << 20), free0);
  EXPECT_EQ(rmm_resource_release(pool), RMM_STATUS_SUCCESS);
}

// 13. Managed memory is usable from the host after a synchronize, and by stream work after
//     host writes.
TEST_F(fidelity, ManagedMemoryIsSharedWithTheHost)
{
  constexpr std::size_t n = 1 << 20;
  rmm_resource_t managed  = nullptr;
  RMM_OK(rmm_managed_create(&managed));
  rmm_stream_t const s = stream();
  void* m              = nullptr;
  RMM_OK(rmm_allocate(managed, n, &m));
  RMM_OK(rmm_memset_async(m, 0x42, n, s));
  RMM_OK(rmm_stream_synchronize(s));
  auto const* bytes = static_cast<std::uint8_t const*>(m);
  EXPECT_TRUE(std::all_of(bytes, bytes + n, [](std::uint8_t b) { return b == 0x42; }));
  std::memset(m, 0x17, n);
  auto* d = device(n);
  RMM_OK(rmm_memcpy_async(d, m, n, s));
  EXPECT_TRUE(all_equal(to_host(d, n, s), 0x17));
  RMM_OK(rmm_deallocate(managed, m, n));
  RMM_OK(rmm_resource_release(managed));
}

// 14. Destroyed streams and events are errors, not undefined behaviour, on every runtime.
TEST_F(fidelity, DestroyedStreamsAndEventsAreErrors)
{
  rmm_stream_t s{};
  RMM_OK(rmm_stream_create(0, &s));
  rmm_event_t e{};
  RMM_OK(rmm_event_create(&e));
  RMM_OK(rmm_event_record(e, s));
  RMM_OK(rmm_stream_destroy(s));
  auto* d         = device(256);
  std::uint32_t x = 0;
  bool done       = false;
  EXPECT_EQ(rmm_stream_synchronize(s), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(rmm_stream_query(s, &done), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(rmm_memcpy_async(d, &x, sizeof x, s), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(rmm_memset_async(d, 0, 256, s), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(rmm_event_record(e, s), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(rmm_stream_wait_event(s, e), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(rmm_stream_destroy(s), RMM_STATUS_INVALID_ARGUMENT);
  RMM_OK(rmm_event_destroy(e));
  EXPECT_EQ(rmm_event_query(e, &done), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(rmm_event_synchronize(e), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(rmm_event_record(e, RMM_STREAM_LEGACY), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(rmm_event_destroy(e), RMM_STATUS_INVALID_ARGUMENT);
}

// 15. Destroying a stream with queued work returns at once; the work still completes.
TEST_F(fidelity, DestroyedStreamFinishesItsWork)
{
  constexpr std::size_t n = 1 << 20;
  auto* x                 = device(n);
  rmm_stream_t s{};
  RMM_OK(rmm_stream_create(RMM_STREAM_NON_BLOCKING, &s));
  busy(s, 30);
  RMM_OK(rmm_memset_async(x, 9, n, s));
  RMM_OK(rmm_stream_destroy(s));
  RMM_OK(rmm_device_synchronize());
  EXPECT_TRUE(all_equal(to_host(x, n, RMM_STREAM_LEGACY), 9));
}

// 16. cudaDeviceSynchronize waits for every stream, non-blocking ones included.
TEST_F(fidelity, DeviceSynchronizeWaitsForAllStreams)
{
  rmm_stream_t const nb = stream(RMM_STREAM_NON_BLOCKING);
  rmm_stream_t const bl = stream();
  busy(nb, 30);
  busy(bl, 30);
  RMM_OK(rmm_device_synchronize());
  EXPECT_TRUE(complete(nb));
  EXPECT_TRUE(complete(bl));
}

// 17. Out of memory is an error status (the runtime's cudaErrorMemoryAllocation), not a crash.
TEST_F(fidelity, OutOfMemoryIsAnError)
{
  void* p = nullptr;
  EXPECT_EQ(rmm_allocate(mr_, std::size_t{1} << 50, &p), RMM_STATUS_OUT_OF_MEMORY);
  EXPECT_EQ(p, nullptr);
  void* q = nullptr;
  RMM_OK(rmm_allocate(mr_, 4096, &q));
  RMM_OK(rmm_deallocate(mr_, q, 4096));
}

}  // namespace
