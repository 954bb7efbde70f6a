// rmm/detail/runtime_async_alloc.hpp and rmm::mr::detail::is_system_memory_supported.
#include <rmm/cuda_device.hpp>
#include <rmm/detail/runtime_async_alloc.hpp>
#include <rmm/mr/device/cuda_async_memory_resource.hpp>
#include <rmm/mr/device/system_memory_resource.hpp>

#include <gtest/gtest.h>

using handle_type = rmm::mr::cuda_async_memory_resource::allocation_handle_type;

TEST(RuntimeAsyncAllocCompat, SupportMatchesTheResource)
{
  // The way downstream code picks a resource: async where supported. Default-constructed,
  // it reserves half of the free memory (RMM 25.02), so ctest runs this test alone.
  if (rmm::detail::runtime_async_alloc::is_supported()) {
    EXPECT_NO_THROW(rmm::mr::cuda_async_memory_resource{});
  } else {
    EXPECT_ANY_THROW(rmm::mr::cuda_async_memory_resource{});
  }
}

TEST(RuntimeAsyncAllocCompat, ExportHandleTypes)
{
  EXPECT_TRUE(rmm::detail::runtime_async_alloc::is_export_handle_type_supported(handle_type::none));
  bool const fd = rmm::detail::runtime_async_alloc::is_export_handle_type_supported(
    handle_type::posix_file_descriptor);
  if (fd) {
    EXPECT_NO_THROW(rmm::mr::cuda_async_memory_resource(
      std::size_t{0}, std::nullopt, handle_type::posix_file_descriptor));
  } else {
    EXPECT_ANY_THROW(rmm::mr::cuda_async_memory_resource(
      std::size_t{0}, std::nullopt, handle_type::posix_file_descriptor));
  }
}

TEST(RuntimeAsyncAllocCompat, SystemMemorySupport)
{
  bool const sam = rmm::mr::detail::is_system_memory_supported(rmm::get_current_cuda_device());
  if (sam) {
    EXPECT_NO_THROW(rmm::mr::system_memory_resource{});
  } else {
    EXPECT_ANY_THROW(rmm::mr::system_memory_resource{});
  }
  EXPECT_ANY_THROW(rmm::mr::detail::is_system_memory_supported(rmm::cuda_device_id{1 << 20}));
}
