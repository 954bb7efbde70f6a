// Errors: status -> exception mapping, messages, and exceptions thrown by user resources
// travelling through the Rust layer and back.
#include "test_resources.hpp"

#include <rmm/detail/check.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/detail/handle_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>

#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <string>

namespace {

/// Whether `haystack` contains `needle`, with both shown on failure.
::testing::AssertionResult contains(std::string const& haystack, std::string const& needle)
{
  if (haystack.find(needle) != std::string::npos) { return ::testing::AssertionSuccess(); }
  return ::testing::AssertionFailure()
         << '"' << haystack << "\" does not contain \"" << needle << '"';
}

TEST(Errors, AbsurdSizeIsOutOfMemoryNamingTheSize)
{
  rmm::mr::cuda_memory_resource mr;
  std::size_t const absurd = std::size_t{1} << 60;
  try {
    (void)mr.allocate(absurd);
    FAIL() << "allocating 2^60 bytes succeeded";
  } catch (rmm::out_of_memory const& e) {
    EXPECT_NE(std::string{e.what()}.find("1152921504606846976"), std::string::npos) << e.what();
  }
  // out_of_memory is a bad_alloc (and a std::bad_alloc).
  EXPECT_THROW((void)mr.allocate(absurd), rmm::bad_alloc);
  EXPECT_THROW((void)mr.allocate(absurd), std::bad_alloc);
  // The resource is still usable.
  void* p = mr.allocate(256);
  EXPECT_NE(p, nullptr);
  mr.deallocate(p, 256);
}

TEST(Errors, CheckMapsEveryStatus)
{
  EXPECT_NO_THROW(rmm::detail::check(RMM_STATUS_SUCCESS));
  EXPECT_THROW(rmm::detail::check(RMM_STATUS_INVALID_ARGUMENT), rmm::logic_error);
  EXPECT_THROW(rmm::detail::check(RMM_STATUS_UNSUPPORTED), rmm::logic_error);
  EXPECT_THROW(rmm::detail::check(RMM_STATUS_PANIC), rmm::logic_error);
  EXPECT_THROW(rmm::detail::check(RMM_STATUS_OUT_OF_MEMORY), rmm::out_of_memory);
  EXPECT_THROW(rmm::detail::check(RMM_STATUS_RUNTIME_ERROR), rmm::cuda_error);
  EXPECT_THROW(rmm::detail::check(RMM_STATUS_NO_RUNTIME), rmm::cuda_error);
  // BAD_ALLOC and CALLBACK_FAILED are bad_alloc but not out_of_memory.
  for (auto status : {RMM_STATUS_BAD_ALLOC, RMM_STATUS_CALLBACK_FAILED}) {
    try {
      rmm::detail::check(status);
      FAIL() << "no exception for status " << status;
    } catch (rmm::out_of_memory const&) {
      FAIL() << "status " << status << " became out_of_memory";
    } catch (rmm::bad_alloc const& e) {
      EXPECT_TRUE(contains(std::string{e.what()}, "std::bad_alloc"));
    }
  }
}

TEST(Errors, InvalidArgumentMessageComesFromTheLibrary)
{
  try {
    rmm::detail::check(rmm_allocate(nullptr, 16, nullptr));
    FAIL() << "rmm_allocate(NULL) succeeded";
  } catch (rmm::logic_error const& e) {
    EXPECT_FALSE(std::string{e.what()}.empty());
  }
}

TEST(Errors, ExpectsAndFailMacros)
{
  EXPECT_NO_THROW(RMM_EXPECTS(1 + 1 == 2, "math works"));
  try {
    RMM_EXPECTS(1 + 1 == 3, "math is broken");
    FAIL() << "RMM_EXPECTS did not throw";
  } catch (rmm::logic_error const& e) {
    EXPECT_TRUE(contains(std::string{e.what()}, "math is broken"));
    EXPECT_TRUE(contains(std::string{e.what()}, "error_tests.cpp"));
  }
  EXPECT_THROW(RMM_EXPECTS(false, "oom", rmm::out_of_memory), rmm::out_of_memory);
  EXPECT_THROW(RMM_FAIL("always"), rmm::logic_error);
  EXPECT_THROW(RMM_FAIL("always", rmm::cuda_error), rmm::cuda_error);
}

/// Sets `thrower_mr` as the current resource and allocates through the C handle obtained
/// from the registry, wrapped back into a C++ resource: the exception crosses C++ -> Rust
/// (as a status and message) -> C++ (as an exception).
void allocate_through_rust(rmm::mr::device_memory_resource* thrower_mr)
{
  auto* previous        = rmm::mr::set_current_device_resource(thrower_mr);
  rmm_resource_t handle = nullptr;
  rmm_status_t status   = rmm_get_current_device_resource(&handle);
  rmm::mr::set_current_device_resource(previous);
  rmm::detail::check(status);
  rmm::mr::detail::handle_resource through_rust{rmm::mr::detail::adopt_handle, handle};
  (void)through_rust.allocate(1024);
}

TEST(Errors, UserOutOfMemoryComesBackAsOutOfMemory)
{
  rmm_test::throwing_resource mr{[] { throw rmm::out_of_memory{"user pool exhausted"}; }};
  try {
    allocate_through_rust(&mr);
    FAIL() << "no exception";
  } catch (rmm::out_of_memory const& e) {
    EXPECT_TRUE(contains(std::string{e.what()}, "user pool exhausted"));
  }
}

TEST(Errors, UserRuntimeErrorComesBackAsBadAlloc)
{
  rmm_test::throwing_resource mr{[] { throw std::runtime_error{"disk on fire"}; }};
  try {
    allocate_through_rust(&mr);
    FAIL() << "no exception";
  } catch (rmm::out_of_memory const&) {
    FAIL() << "a runtime_error must not become out_of_memory";
  } catch (rmm::bad_alloc const& e) {
    EXPECT_TRUE(contains(std::string{e.what()}, "disk on fire"));
  }
}

TEST(Errors, UserStdBadAllocComesBackAsBadAlloc)
{
  rmm_test::throwing_resource mr{[] { throw std::bad_alloc{}; }};
  EXPECT_THROW(allocate_through_rust(&mr), rmm::bad_alloc);
}

TEST(Errors, UserNonStandardExceptionIsContained)
{
  rmm_test::throwing_resource mr{[] { throw 42; }};
  EXPECT_THROW(allocate_through_rust(&mr), rmm::bad_alloc);
}

TEST(Errors, StatusFromCHandleOfThrowingUserResource)
{
  rmm_test::throwing_resource mr{[] { throw rmm::out_of_memory{"no room"}; }};
  rmm_resource_t handle = rmm::mr::detail::to_handle(&mr);
  void* ptr             = nullptr;
  EXPECT_EQ(rmm_allocate(handle, 64, &ptr), RMM_STATUS_OUT_OF_MEMORY);
  EXPECT_TRUE(contains(std::string{rmm_last_error_message()}, "no room"));
  EXPECT_EQ(ptr, nullptr);
  EXPECT_EQ(rmm_resource_release(handle), RMM_STATUS_SUCCESS);
}

TEST(Errors, CallbackReturningNull)
{
  rmm::mr::callback_memory_resource mr{
    [](std::size_t, rmm::cuda_stream_view, void*) -> void* { return nullptr; },
    [](void*, std::size_t, rmm::cuda_stream_view, void*) {}};
  // As in RMM, the C++ resource returns what the callback returns.
  EXPECT_EQ(mr.allocate(128), nullptr);
  // Through the C ABI handle a null for a non-zero size is a failed allocation.
  void* p = nullptr;
  EXPECT_NE(rmm_allocate(mr.handle(), 128, &p), RMM_STATUS_SUCCESS);
}

TEST(Errors, ReleasedHandleIsRejected)
{
  rmm_resource_t handle = nullptr;
  ASSERT_EQ(rmm_cuda_create(&handle), RMM_STATUS_SUCCESS);
  ASSERT_EQ(rmm_resource_release(handle), RMM_STATUS_SUCCESS);
  EXPECT_THROW(rmm::detail::check(rmm_resource_release(handle)), rmm::logic_error);
}

}  // namespace
