// Only rmm/device_buffer.hpp: per-device resources and resource_ref come with it, as in RMM.
#include <rmm/device_buffer.hpp>

#include <gtest/gtest.h>

TEST(TransitiveIncludes, DeviceBuffer)
{
  rmm::device_async_resource_ref mr = rmm::mr::get_current_device_resource_ref();
  rmm::device_buffer buffer{100, rmm::cuda_stream_view{}, mr};
  EXPECT_EQ(buffer.size(), 100U);
  EXPECT_EQ(buffer.memory_resource(), mr);
  EXPECT_THROW(throw rmm::logic_error{"x"}, std::logic_error);  // <stdexcept>, rmm/error.hpp
  EXPECT_EQ(rmm::get_current_cuda_device(), rmm::cuda_device_id{});
  RMM_EXPECTS(buffer.size() == 100, "detail/error.hpp macros are there");
}
