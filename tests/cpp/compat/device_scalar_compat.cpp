// rmm/device_scalar.hpp: the copy-with-stream constructors, with resource pointers and refs.
#include <rmm/cuda_stream.hpp>
#include <rmm/device_scalar.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/mr/device/statistics_resource_adaptor.hpp>
#include <rmm/resource_ref.hpp>

#include <gtest/gtest.h>

#include <cstdint>

TEST(DeviceScalarCompat, CopyWithStreamAndRef)
{
  rmm::cuda_stream stream;
  rmm::mr::cuda_memory_resource cuda;
  rmm::mr::statistics_resource_adaptor<rmm::mr::cuda_memory_resource> stats{&cuda};
  rmm::device_async_resource_ref ref{stats};

  rmm::device_scalar<std::int64_t> const original{int64_t{42}, stream, ref};
  rmm::device_scalar<std::int64_t> copy_default_mr{original, stream};
  rmm::device_scalar<std::int64_t> copy_ref{original, stream, ref};
  rmm::device_scalar<std::int64_t> copy_current{
    original, stream, rmm::mr::get_current_device_resource_ref()};

  EXPECT_EQ(copy_default_mr.value(stream), 42);
  EXPECT_EQ(copy_ref.value(stream), 42);
  EXPECT_EQ(copy_current.value(stream), 42);
  EXPECT_EQ(stats.get_allocations_counter().value, 2);
  EXPECT_NE(copy_ref.data(), original.data());
}

TEST(DeviceScalarCompat, StreamAndRefConstructors)
{
  rmm::cuda_stream_view stream = rmm::cuda_stream_per_thread;
  rmm::device_scalar<float> s{stream, rmm::mr::get_current_device_resource_ref()};
  s.set_value_to_zero_async(stream);
  EXPECT_EQ(s.value(stream), 0.0F);
  EXPECT_EQ(s.size(), 1U);
  EXPECT_EQ(s.stream(), stream);
}
