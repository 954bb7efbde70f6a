// Utilities beyond utility_tests.cpp: cuda_device.hpp, aligned.hpp, prefetch.hpp,
// process_is_exiting.hpp and the error macros of detail/error.hpp.
#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/device/managed_memory_resource.hpp>
#include <rmm/prefetch.hpp>
#include <rmm/process_is_exiting.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace {

bool contains(std::string const& haystack, std::string const& needle)
{
  return haystack.find(needle) != std::string::npos;
}

TEST(DeviceId, ConstexprAndComparisons)
{
  constexpr rmm::cuda_device_id a{1};
  constexpr rmm::cuda_device_id b{2};
  static_assert(a.value() == 1);
  static_assert(a == rmm::cuda_device_id{1});
  static_assert(a != b);
  static_assert(a < b && a <= b && b > a && b >= a && a <= a && a >= a);
  // RMM 25.02: the default-constructed id is the current device.
  EXPECT_EQ(rmm::cuda_device_id{}.value(), rmm::get_current_cuda_device().value());
  static_assert(std::is_same_v<rmm::cuda_device_id::value_type, int>);
  static_assert(!std::is_convertible_v<int, rmm::cuda_device_id>);
}

TEST(DeviceId, QueriesAreConsistent)
{
  auto const count = rmm::get_num_cuda_devices();
  ASSERT_GE(count, 1);
  EXPECT_LT(rmm::get_current_cuda_device().value(), count);
  auto const [free_bytes, total_bytes] = rmm::available_device_memory();
  EXPECT_LE(free_bytes, total_bytes);
  auto const all = rmm::percent_of_free_device_memory(100);
  EXPECT_TRUE(rmm::is_aligned(all, rmm::CUDA_ALLOCATION_ALIGNMENT));
  // Not against `free_bytes`: free memory is queried again, and other tests (ctest runs the
  // GPU suites in parallel) or processes may have freed memory in between (seen on the H100:
  // 12 MiB more).
  EXPECT_LE(all, total_bytes);
  EXPECT_THROW((void)rmm::percent_of_free_device_memory(101), rmm::logic_error);
  EXPECT_THROW((void)rmm::percent_of_free_device_memory(-1), rmm::logic_error);
}

TEST(DeviceId, SetDeviceRaiiSwitchesAndRestores)
{
  auto const count  = rmm::get_num_cuda_devices();
  auto const before = rmm::get_current_cuda_device();
  {
    // Same device: nothing to switch.
    rmm::cuda_set_device_raii same{before};
    EXPECT_EQ(rmm::get_current_cuda_device(), before);
  }
  EXPECT_EQ(rmm::get_current_cuda_device(), before);
  rmm::cuda_device_id const other{count > 1 ? (before.value() + 1) % count : before.value()};
  {
    rmm::cuda_set_device_raii guard{other};
    EXPECT_EQ(rmm::get_current_cuda_device(), other);
    {
      rmm::cuda_set_device_raii nested{before};
      EXPECT_EQ(rmm::get_current_cuda_device(), before);
    }
    EXPECT_EQ(rmm::get_current_cuda_device(), other);
  }
  EXPECT_EQ(rmm::get_current_cuda_device(), before);
  // rmm-rs reports the bad id as rmm::logic_error (RMM gets cudaErrorInvalidDevice, cuda_error).
  EXPECT_ANY_THROW(rmm::cuda_set_device_raii{rmm::cuda_device_id{count + 5}})
    << "switching to a device that does not exist must fail";
  EXPECT_EQ(rmm::get_current_cuda_device(), before);
}

TEST(AlignedMore, Helpers)
{
  static_assert(rmm::align_up(0, 64) == 0);
  static_assert(rmm::align_up(65, 64) == 128);
  static_assert(rmm::align_down(127, 64) == 64);
  static_assert(rmm::is_aligned(std::size_t{0}, 256));
  static_assert(rmm::is_aligned(4096, 4096));
  static_assert(!rmm::is_aligned(4097, 4096));
  static_assert(rmm::is_pow2(std::size_t{1} << 40));
  static_assert(!rmm::is_pow2(3));
  static_assert(rmm::is_supported_alignment(256));
  static_assert(!rmm::is_supported_alignment(0));
  static_assert(rmm::RMM_DEFAULT_HOST_ALIGNMENT == alignof(std::max_align_t));
  EXPECT_TRUE(rmm::is_aligned(0, 8));  // a literal 0 picks the integer form
  alignas(64) static char buffer[128];
  EXPECT_TRUE(rmm::is_aligned(static_cast<void*>(buffer), 64));
  EXPECT_TRUE(rmm::is_aligned(buffer, 64));
  EXPECT_FALSE(rmm::is_aligned(buffer + 1, 2));
  EXPECT_TRUE(rmm::is_pointer_aligned(buffer, 64));
  EXPECT_FALSE(rmm::is_pointer_aligned(buffer + 8, 64));
}

TEST(Prefetch, ManagedAndPlainMemory)
{
  rmm::mr::managed_memory_resource mr;
  void* p = mr.allocate(4096);
  EXPECT_NO_THROW(rmm::prefetch(p, 4096, rmm::get_current_cuda_device(), rmm::cuda_stream_view{}));
  mr.deallocate(p, 4096);
  int host_value = 0;
  // Not managed memory: a no-op, not an error.
  EXPECT_NO_THROW(rmm::prefetch(
    &host_value, sizeof(host_value), rmm::get_current_cuda_device(), rmm::cuda_stream_view{}));
  EXPECT_NO_THROW(rmm::prefetch(nullptr, 0, rmm::cuda_device_id{0}, rmm::cuda_stream_view{}));
}

TEST(ProcessIsExiting, FalseWhileRunning) { EXPECT_FALSE(rmm::process_is_exiting()); }

TEST(ErrorMacros, ExpectsCarriesLocationAndType)
{
  try {
    RMM_EXPECTS(2 < 1, "two is not less than one");
    FAIL() << "did not throw";
  } catch (rmm::logic_error const& e) {
    std::string const what = e.what();
    EXPECT_TRUE(contains(what, "RMM failure at: ")) << what;
    EXPECT_TRUE(contains(what, "utility_more_tests.cpp:")) << what;
    EXPECT_TRUE(contains(what, "two is not less than one")) << what;
  }
  EXPECT_THROW(RMM_EXPECTS(false, "x", rmm::out_of_range), rmm::out_of_range);
  EXPECT_THROW(RMM_EXPECTS(false, std::string{"as std::string"}), rmm::logic_error);
  EXPECT_NO_THROW(RMM_EXPECTS(true, "never"));
}

TEST(ErrorMacros, FailCarriesLocationAndType)
{
  try {
    RMM_FAIL("unreachable");
  } catch (rmm::logic_error const& e) {
    EXPECT_TRUE(contains(e.what(), "utility_more_tests.cpp:"));
    EXPECT_TRUE(contains(e.what(), "unreachable"));
  }
  EXPECT_THROW(RMM_FAIL("oom", rmm::out_of_memory), rmm::bad_alloc);
  static_assert(std::is_base_of_v<rmm::bad_alloc, rmm::out_of_memory>);
  static_assert(std::is_base_of_v<std::bad_alloc, rmm::bad_alloc>);
  static_assert(std::is_base_of_v<std::logic_error, rmm::logic_error>);
  static_assert(std::is_base_of_v<std::runtime_error, rmm::cuda_error>);
  static_assert(std::is_base_of_v<std::out_of_range, rmm::out_of_range>);
}

#if defined(RMM_HAS_RUNTIME_ERROR_MACROS)
TEST(ErrorMacros, RuntimeMacros)
{
  EXPECT_NO_THROW(RMM_CUDA_TRY(::rmm::detail::runtime_success));
  try {
    RMM_CUDA_TRY(::rmm::detail::runtime_out_of_memory);
    FAIL() << "did not throw";
  } catch (rmm::cuda_error const& e) {
    EXPECT_TRUE(contains(e.what(), "CUDA error at: ")) << e.what();
    EXPECT_TRUE(contains(e.what(), "utility_more_tests.cpp:")) << e.what();
  }
  EXPECT_THROW(RMM_CUDA_TRY(::rmm::detail::runtime_out_of_memory, rmm::logic_error),
               rmm::logic_error);
  try {
    RMM_CUDA_TRY_ALLOC(::rmm::detail::runtime_out_of_memory, 123456789);
    FAIL() << "did not throw";
  } catch (rmm::out_of_memory const& e) {
    EXPECT_TRUE(contains(e.what(), "out_of_memory: ")) << e.what();
    EXPECT_TRUE(contains(e.what(), "123456789")) << e.what();
  }
  auto const other = static_cast<::rmm::detail::runtime_error_t>(1);  // invalid value
  try {
    RMM_CUDA_TRY_ALLOC(other, 42);
    FAIL() << "did not throw";
  } catch (rmm::out_of_memory const&) {
    FAIL() << "not an out-of-memory error";
  } catch (rmm::bad_alloc const& e) {
    EXPECT_TRUE(contains(e.what(), "42 bytes")) << e.what();
  }
  RMM_ASSERT_CUDA_SUCCESS(::rmm::detail::runtime_success);
}
#else
TEST(ErrorMacros, RuntimeMacrosNeedRuntimeHeaders)
{
  GTEST_SKIP() << "no HIP or CUDA runtime header: RMM_CUDA_TRY & co. are not defined";
}
#endif

}  // namespace
