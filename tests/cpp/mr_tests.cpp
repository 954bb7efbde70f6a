// One value-parameterized suite run over every device memory resource.
#include "test_resources.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using factory_fn = std::shared_ptr<rmm::mr::device_memory_resource> (*)();

struct mr_factory {
  std::string name;
  factory_fn make;
  /// Largest request the resource serves (fixed_size refuses more than a block); the
  /// suite leaves larger sizes out for it.
  std::size_t max_request = SIZE_MAX;
};

/// A stream created through the C ABI, destroyed at scope exit.
class owned_stream {
 public:
  owned_stream() { rmm::detail::check(rmm_stream_create(RMM_STREAM_NON_BLOCKING, &stream_)); }
  ~owned_stream() { (void)rmm_stream_destroy(stream_); }
  owned_stream(owned_stream const&)            = delete;
  owned_stream& operator=(owned_stream const&) = delete;
  [[nodiscard]] rmm::cuda_stream_view view() const
  {
    return rmm::cuda_stream_view{rmm::detail::from_c_stream(stream_)};
  }

 private:
  rmm_stream_t stream_{nullptr};
};

class mr_test : public ::testing::TestWithParam<mr_factory> {
 protected:
  void SetUp() override
  {
    mr_ = GetParam().make();
    if (!mr_) { GTEST_SKIP() << GetParam().name << " is not supported on this device"; }
  }
  std::shared_ptr<rmm::mr::device_memory_resource> mr_;
};

bool aligned256(void* ptr) { return rmm::is_pointer_aligned(ptr, rmm::CUDA_ALLOCATION_ALIGNMENT); }

TEST_P(mr_test, ZeroBytesGivesNull)
{
  void* ptr = mr_->allocate(0);
  EXPECT_EQ(ptr, nullptr);
  mr_->deallocate(ptr, 0);
}

TEST_P(mr_test, ManySizesAreAlignedAndDistinct)
{
  std::vector<std::size_t> const sizes{
    1, 7, 255, 256, 257, 1000, 4096, 65537, 1 << 20, (10 << 20) + 3};
  std::vector<void*> ptrs;
  std::vector<std::size_t> served;
  for (auto size : sizes) {
    if (size > GetParam().max_request) { continue; }
    served.push_back(size);
    void* ptr = mr_->allocate(size);
    ASSERT_NE(ptr, nullptr) << size;
    EXPECT_TRUE(aligned256(ptr)) << ptr << " for " << size;
    ptrs.push_back(ptr);
  }
  EXPECT_EQ(std::set<void*>(ptrs.begin(), ptrs.end()).size(), ptrs.size());
  for (std::size_t i = 0; i < served.size(); ++i) {
    mr_->deallocate(ptrs[i], served[i]);
  }
}

TEST_P(mr_test, AlignmentOverloads)
{
  void* ptr = mr_->allocate(100, std::size_t{64});
  ASSERT_NE(ptr, nullptr);
  EXPECT_TRUE(aligned256(ptr));
  mr_->deallocate(ptr, 100, std::size_t{64});
  EXPECT_THROW((void)mr_->allocate(100, std::size_t{3}), rmm::logic_error);
}

TEST_P(mr_test, MemsetAndMemcpyRoundTrip)
{
  owned_stream stream;
  std::size_t const bytes = 3 * 4096 + 17;
  auto* ptr               = static_cast<unsigned char*>(mr_->allocate_async(bytes, stream.view()));
  ASSERT_NE(ptr, nullptr);

  rmm::detail::check(
    rmm_memset_async(ptr, 0xAB, bytes, rmm::detail::to_c_stream(stream.view().value())));
  std::vector<unsigned char> host(bytes, 0);
  rmm_test::copy_to_host(host.data(), ptr, bytes, stream.view());
  EXPECT_TRUE(std::all_of(host.begin(), host.end(), [](unsigned char c) { return c == 0xAB; }));

  std::vector<unsigned char> pattern(bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    pattern[i] = static_cast<unsigned char>((i * 31 + 7) % 251);
  }
  rmm::detail::check(
    rmm_memcpy_async(ptr, pattern.data(), bytes, rmm::detail::to_c_stream(stream.view().value())));
  std::vector<unsigned char> back(bytes, 0);
  rmm_test::copy_to_host(back.data(), ptr, bytes, stream.view());
  EXPECT_EQ(back, pattern);

  mr_->deallocate_async(ptr, bytes, stream.view());
  stream.view().synchronize();
}

TEST_P(mr_test, RandomSequenceHasNoOverlap)
{
  struct block {
    unsigned char* ptr;
    std::size_t bytes;
    unsigned char value;
  };
  std::mt19937 rng{12345};
  std::uniform_int_distribution<std::size_t> size_dist{1, 64 * 1024};
  std::vector<block> live;
  auto check_and_free = [&](std::size_t index) {
    block b = live[index];
    std::vector<unsigned char> host(b.bytes);
    rmm_test::copy_to_host(host.data(), b.ptr, b.bytes, rmm::cuda_stream_view{});
    EXPECT_TRUE(
      std::all_of(host.begin(), host.end(), [&](unsigned char c) { return c == b.value; }))
      << "block of " << b.bytes << " bytes was overwritten";
    mr_->deallocate(b.ptr, b.bytes);
    live.erase(live.begin() + static_cast<std::ptrdiff_t>(index));
  };
  for (int step = 0; step < 300; ++step) {
    if (!live.empty() && (rng() % 3 == 0)) {
      check_and_free(rng() % live.size());
    } else {
      block b{nullptr, size_dist(rng), static_cast<unsigned char>(step % 251)};
      b.ptr = static_cast<unsigned char*>(mr_->allocate(b.bytes));
      ASSERT_NE(b.ptr, nullptr);
      ASSERT_TRUE(aligned256(b.ptr));
      rmm::detail::check(rmm_memset_async(b.ptr, b.value, b.bytes, RMM_STREAM_DEFAULT));
      live.push_back(b);
    }
  }
  while (!live.empty()) {
    check_and_free(live.size() - 1);
  }
}

TEST_P(mr_test, MultiThreadedAllocation)
{
  constexpr int threads_count = 4;
  constexpr int per_thread    = 200;
  std::vector<std::vector<std::pair<void*, std::size_t>>> results(threads_count);
  std::vector<std::thread> threads;
  for (int t = 0; t < threads_count; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng{static_cast<unsigned>(t + 1)};
      for (int i = 0; i < per_thread; ++i) {
        std::size_t bytes = 1 + rng() % 8192;
        results[t].emplace_back(mr_->allocate(bytes), bytes);
        if (i % 3 == 2) {
          auto [p, b] = results[t].back();
          results[t].pop_back();
          mr_->deallocate(p, b);
        }
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  std::set<void*> all;
  std::size_t count = 0;
  for (auto& per : results) {
    for (auto [p, b] : per) {
      EXPECT_NE(p, nullptr);
      EXPECT_TRUE(aligned256(p));
      all.insert(p);
      ++count;
    }
  }
  EXPECT_EQ(all.size(), count) << "two live allocations share an address";
  for (auto& per : results) {
    for (auto [p, b] : per) {
      mr_->deallocate(p, b);
    }
  }
}

TEST_P(mr_test, IsEqual)
{
  EXPECT_TRUE(mr_->is_equal(*mr_));
  EXPECT_TRUE(*mr_ == *mr_);
  EXPECT_FALSE(*mr_ != *mr_);
  rmm_test::counting_resource other{mr_.get()};
  EXPECT_FALSE(mr_->is_equal(other));
  EXPECT_TRUE(*mr_ != other);
}

TEST_P(mr_test, UsableAsCurrentDeviceResourceFromC)
{
  // The resource reached through the C ABI handle serves allocations too.
  rmm_resource_t handle = rmm::mr::detail::to_handle(mr_.get());
  void* ptr             = nullptr;
  ASSERT_EQ(rmm_allocate(handle, 4096, &ptr), RMM_STATUS_SUCCESS) << rmm_last_error_message();
  EXPECT_NE(ptr, nullptr);
  EXPECT_TRUE(aligned256(ptr));
  EXPECT_EQ(rmm_deallocate(handle, ptr, 4096), RMM_STATUS_SUCCESS);
  EXPECT_EQ(rmm_resource_release(handle), RMM_STATUS_SUCCESS);
}

std::vector<mr_factory> all_factories()
{
  return {{"cuda", &rmm_test::make_cuda},
          {"managed", &rmm_test::make_managed},
          {"pinned_host", &rmm_test::make_pinned_host},
          {"system", &rmm_test::make_system},
          {"callback", &rmm_test::make_callback},
          {"user_subclass", &rmm_test::make_user_subclass},
          {"old_api_subclass", &rmm_test::make_old_api_subclass},
          {"pool_initial_0", &rmm_test::make_pool<0>},
          {"pool_initial_64MiB", &rmm_test::make_pool<std::size_t{64} << 20>},
          {"fixed_size_1MiB", &rmm_test::make_fixed_size, std::size_t{1} << 20},
          {"binning_10_20_over_pool", &rmm_test::make_binning},
          {"arena_256MiB", &rmm_test::make_arena},
          {"logging_over_cuda", &rmm_test::make_logging},
          {"statistics_over_cuda", &rmm_test::make_statistics},
          {"limiting_1GiB_over_cuda", &rmm_test::make_limiting},
          {"aligned_4096_over_cuda", &rmm_test::make_aligned},
          {"tracking_over_pool", &rmm_test::make_tracking},
          {"thread_safe_over_pool", &rmm_test::make_thread_safe},
          {"cuda_async_initial_0", &rmm_test::make_cuda_async},
          {"cuda_async_view_default_pool", &rmm_test::make_cuda_async_view}};
}

INSTANTIATE_TEST_SUITE_P(AllResources,
                         mr_test,
                         ::testing::ValuesIn(all_factories()),
                         [](auto const& info) { return info.param.name; });

TEST(OldApi, VirtualsStillOverridable)
{
  rmm_test::old_api_resource mr;
  rmm::mr::device_memory_resource& base = mr;
  EXPECT_TRUE(base.supports_streams());
  EXPECT_TRUE(base.supports_get_mem_info());
  EXPECT_EQ(base.get_mem_info(rmm::cuda_stream_view{}),
            (std::pair<std::size_t, std::size_t>{1, 2}));
}

TEST(HandleResource, CopiesShareTheHandle)
{
  rmm::mr::cuda_memory_resource a;
  rmm::mr::cuda_memory_resource b{a};
  EXPECT_EQ(a.handle(), b.handle());
  EXPECT_TRUE(a == b);
  EXPECT_EQ(a.resource_name(), "cuda_memory_resource");
  rmm::mr::cuda_memory_resource c{std::move(b)};
  EXPECT_EQ(c.handle(), a.handle());
  EXPECT_EQ(b.handle(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty
  void* p = c.allocate(512);
  a.deallocate(p, 512);
}

}  // namespace
