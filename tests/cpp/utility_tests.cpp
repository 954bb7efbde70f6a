// aligned.hpp, cuda_stream_view.hpp and cuda_device.hpp.
#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>

#include <gtest/gtest.h>

#include <sstream>
#include <type_traits>

namespace {

TEST(Aligned, Helpers)
{
  static_assert(rmm::CUDA_ALLOCATION_ALIGNMENT == 256);
  static_assert(rmm::align_up(1, 256) == 256);
  static_assert(rmm::align_up(256, 256) == 256);
  static_assert(rmm::align_up(257, 256) == 512);
  static_assert(rmm::align_down(511, 256) == 256);
  static_assert(rmm::align_down(255, 256) == 0);
  EXPECT_TRUE(rmm::is_aligned(1024, 256));
  EXPECT_FALSE(rmm::is_aligned(1000, 256));
  EXPECT_TRUE(rmm::is_pow2(1));
  EXPECT_TRUE(rmm::is_pow2(4096));
  EXPECT_FALSE(rmm::is_pow2(0));
  EXPECT_FALSE(rmm::is_pow2(96));
  EXPECT_TRUE(rmm::is_supported_alignment(64));
  EXPECT_FALSE(rmm::is_supported_alignment(3));
  EXPECT_TRUE(rmm::is_pointer_aligned(reinterpret_cast<void*>(std::uintptr_t{4096})));
  EXPECT_FALSE(rmm::is_pointer_aligned(reinterpret_cast<void*>(std::uintptr_t{4097})));
}

TEST(StreamView, Constants)
{
  rmm::cuda_stream_view def{};
  EXPECT_TRUE(def.is_default());
  EXPECT_FALSE(def.is_per_thread_default());
  EXPECT_EQ(def.value(), nullptr);
  EXPECT_TRUE(rmm::cuda_stream_legacy.is_default());
  EXPECT_TRUE(rmm::cuda_stream_per_thread.is_per_thread_default());
  EXPECT_FALSE(rmm::cuda_stream_per_thread.is_default());
  EXPECT_EQ(rmm::cuda_stream_default, def);
  EXPECT_NE(rmm::cuda_stream_legacy, rmm::cuda_stream_per_thread);
  EXPECT_EQ(rmm::detail::to_c_stream(rmm::cuda_stream_per_thread.value()), RMM_STREAM_PER_THREAD);
}

TEST(StreamView, FromZeroAndNullptr)
{
  rmm::cuda_stream_view from_zero = 0;
  rmm::cuda_stream_view from_null = nullptr;
  EXPECT_TRUE(from_zero.is_default());
  EXPECT_TRUE(from_null.is_default());
  static_assert(std::is_nothrow_constructible_v<rmm::cuda_stream_view, rmm::detail::stream_type>);
  std::ostringstream os;
  os << rmm::cuda_stream_per_thread;
  EXPECT_FALSE(os.str().empty());
}

TEST(StreamView, SynchronizeCreatedStream)
{
  rmm_stream_t raw = nullptr;
  ASSERT_EQ(rmm_stream_create(0, &raw), RMM_STATUS_SUCCESS) << rmm_last_error_message();
  rmm::cuda_stream_view view{rmm::detail::from_c_stream(raw)};
  EXPECT_FALSE(view.is_default());
  EXPECT_NO_THROW(view.synchronize());
  view.synchronize_no_throw();
  EXPECT_NO_THROW(rmm::cuda_stream_view{}.synchronize());
  EXPECT_NO_THROW(rmm::cuda_stream_per_thread.synchronize());
  EXPECT_EQ(rmm_stream_destroy(raw), RMM_STATUS_SUCCESS);
}

TEST(Device, Queries)
{
  int const count = rmm::get_num_cuda_devices();
  ASSERT_GE(count, 1);
  auto const current = rmm::get_current_cuda_device();
  EXPECT_GE(current.value(), 0);
  EXPECT_LT(current.value(), count);
  auto const [free_bytes, total_bytes] = rmm::available_device_memory();
  EXPECT_GT(total_bytes, 0U);
  EXPECT_LE(free_bytes, total_bytes);
  auto const half = rmm::percent_of_free_device_memory(50);
  EXPECT_TRUE(rmm::is_aligned(half, 256));
  // Free memory is queried again, and parallel tests change it: compare with the total.
  EXPECT_LE(half, total_bytes / 2);
  EXPECT_GT(half, 0U);
  EXPECT_EQ(rmm::percent_of_free_device_memory(0), 0U);
}

TEST(Device, SetDeviceRaiiRestores)
{
  auto const before = rmm::get_current_cuda_device();
  {
    rmm::cuda_set_device_raii guard{rmm::cuda_device_id{0}};
    EXPECT_EQ(rmm::get_current_cuda_device(), rmm::cuda_device_id{0});
  }
  EXPECT_EQ(rmm::get_current_cuda_device(), before);
}

TEST(Device, IdComparisons)
{
  EXPECT_EQ(rmm::cuda_device_id{}.value(), 0);
  EXPECT_TRUE(rmm::cuda_device_id{1} == rmm::cuda_device_id{1});
  EXPECT_TRUE(rmm::cuda_device_id{1} != rmm::cuda_device_id{2});
  EXPECT_TRUE(rmm::cuda_device_id{1} < rmm::cuda_device_id{2});
}

}  // namespace
