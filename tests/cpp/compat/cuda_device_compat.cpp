// rmm/cuda_device.hpp: RMM 25.02's default id is the current device; cuda_set_device_raii
// leaves the device alone for a negative id.
#include <rmm/cuda_device.hpp>

#include <gtest/gtest.h>

#include <type_traits>

static_assert(std::is_nothrow_default_constructible_v<rmm::cuda_device_id>);

TEST(CudaDeviceCompat, DefaultIsCurrentDevice)
{
  EXPECT_EQ(rmm::cuda_device_id{}, rmm::get_current_cuda_device());
  EXPECT_EQ(rmm::cuda_device_id{}.value(), rmm::get_current_cuda_device().value());
}

TEST(CudaDeviceCompat, RaiiWithNegativeIdDoesNothing)
{
  auto const before = rmm::get_current_cuda_device();
  {
    rmm::cuda_set_device_raii guard{rmm::cuda_device_id{-1}};
    EXPECT_EQ(rmm::get_current_cuda_device(), before);
  }
  EXPECT_EQ(rmm::get_current_cuda_device(), before);
}

TEST(CudaDeviceCompat, RaiiSwitchesAndRestores)
{
  if (rmm::get_num_cuda_devices() < 2) { GTEST_SKIP() << "needs two devices"; }
  {
    rmm::cuda_set_device_raii guard{rmm::cuda_device_id{1}};
    EXPECT_EQ(rmm::cuda_device_id{}.value(), 1);
  }
  EXPECT_EQ(rmm::cuda_device_id{}.value(), 0);
}
