// rmm/mr/device/per_device_resource.hpp: rmm::mr::detail::initial_resource() and the _ref forms.
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <gtest/gtest.h>

TEST(PerDeviceCompat, InitialResourceIsTheDefault)
{
  auto* initial = rmm::mr::detail::initial_resource();
  ASSERT_NE(initial, nullptr);
  EXPECT_EQ(initial, rmm::mr::detail::initial_resource());
  EXPECT_EQ(initial, rmm::mr::get_current_device_resource());
  EXPECT_TRUE(initial->is_equal(rmm::mr::cuda_memory_resource{}));
  void* p = initial->allocate(1000);
  EXPECT_NE(p, nullptr);
  initial->deallocate(p, 1000);
}

TEST(PerDeviceCompat, ResetGoesBackToTheInitialResource)
{
  rmm::mr::cuda_memory_resource other;
  auto const old = rmm::mr::set_current_device_resource_ref(other);
  EXPECT_EQ(old, rmm::device_async_resource_ref{rmm::mr::detail::initial_resource()});
  EXPECT_EQ(rmm::mr::get_current_device_resource(), &other);
  rmm::mr::reset_current_device_resource_ref();
  EXPECT_EQ(rmm::mr::get_current_device_resource(), rmm::mr::detail::initial_resource());
}
