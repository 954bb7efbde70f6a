// The per-device resource map seen from C++ (and C): same objects back, resets, bad ids.
#include "test_resources.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>

#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

namespace {

class per_device : public ::testing::Test {
 protected:
  void TearDown() override { rmm::mr::reset_current_device_resource(); }
};

TEST_F(per_device, InitialIsCudaMemoryResource)
{
  auto* mr = rmm::mr::get_current_device_resource();
  ASSERT_NE(mr, nullptr);
  EXPECT_NE(dynamic_cast<rmm::mr::cuda_memory_resource*>(mr), nullptr);
  EXPECT_EQ(rmm::mr::get_current_device_resource(), mr);
  EXPECT_EQ(rmm::mr::get_per_device_resource(rmm::get_current_cuda_device()), mr);
  void* p = mr->allocate(1024);
  EXPECT_NE(p, nullptr);
  mr->deallocate(p, 1024);
}

TEST_F(per_device, ConcurrentFirstUseAgreesOnInitialObject)
{
  std::vector<rmm::mr::device_memory_resource*> seen(8, nullptr);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] { seen[i] = rmm::mr::get_current_device_resource(); });
  }
  for (auto& t : threads) {
    t.join();
  }
  EXPECT_EQ(std::set<rmm::mr::device_memory_resource*>(seen.begin(), seen.end()).size(), 1U);
  EXPECT_NE(seen[0], nullptr);
}

TEST_F(per_device, SetReturnsPreviousAndGetReturnsSameObject)
{
  auto* initial = rmm::mr::get_current_device_resource();
  rmm::mr::cuda_memory_resource mine;
  EXPECT_EQ(rmm::mr::set_current_device_resource(&mine), initial);
  EXPECT_EQ(rmm::mr::get_current_device_resource(), &mine);
  rmm_test::counting_resource counting{&mine};
  EXPECT_EQ(rmm::mr::set_current_device_resource(&counting), &mine);
  EXPECT_EQ(rmm::mr::get_current_device_resource(), &counting);
  EXPECT_EQ(rmm::mr::set_current_device_resource(nullptr), &counting);
  EXPECT_EQ(rmm::mr::get_current_device_resource(), initial);
}

TEST_F(per_device, SetNullResetsAndNeverCrashes)
{
  auto* initial = rmm::mr::set_current_device_resource(nullptr);
  ASSERT_NE(initial, nullptr);
  EXPECT_EQ(rmm::mr::set_current_device_resource(nullptr), initial);
  EXPECT_EQ(rmm::mr::reset_current_device_resource(), initial);
  EXPECT_EQ(rmm::mr::get_current_device_resource(), initial);
}

TEST_F(per_device, PerDeviceMatchesCurrent)
{
  rmm::mr::cuda_memory_resource mine;
  auto const device = rmm::get_current_cuda_device();
  rmm::mr::set_per_device_resource(device, &mine);
  EXPECT_EQ(rmm::mr::get_current_device_resource(), &mine);
  EXPECT_EQ(rmm::mr::get_per_device_resource(device), &mine);
  EXPECT_EQ(rmm::mr::reset_per_device_resource(device), &mine);
}

TEST_F(per_device, InvalidDeviceIdThrowsLogicError)
{
  int const count = rmm::get_num_cuda_devices();
  ASSERT_GE(count, 1);
  rmm::mr::cuda_memory_resource mine;
  EXPECT_THROW((void)rmm::mr::get_per_device_resource(rmm::cuda_device_id{count}), rmm::logic_error);
  EXPECT_THROW((void)rmm::mr::get_per_device_resource(rmm::cuda_device_id{-1}), rmm::logic_error);
  EXPECT_THROW((void)rmm::mr::set_per_device_resource(rmm::cuda_device_id{count}, &mine),
               rmm::logic_error);
  // Nothing changed for the valid device.
  EXPECT_NE(rmm::mr::get_current_device_resource(), &mine);
}

TEST_F(per_device, UserSubclassServesCAllocations)
{
  rmm::mr::cuda_memory_resource upstream;
  rmm_test::counting_resource counting{&upstream};
  rmm::mr::set_current_device_resource(&counting);

  rmm_resource_t handle = nullptr;
  ASSERT_EQ(rmm_get_current_device_resource(&handle), RMM_STATUS_SUCCESS);
  void* ptr = nullptr;
  ASSERT_EQ(rmm_allocate(handle, 4096, &ptr), RMM_STATUS_SUCCESS) << rmm_last_error_message();
  EXPECT_NE(ptr, nullptr);
  EXPECT_EQ(counting.allocations.load(), 1U);
  EXPECT_EQ(counting.outstanding_bytes.load(), 4096U);
  ASSERT_EQ(rmm_deallocate(handle, ptr, 4096), RMM_STATUS_SUCCESS);
  EXPECT_EQ(counting.deallocations.load(), 1U);
  EXPECT_EQ(counting.outstanding_bytes.load(), 0U);
  EXPECT_EQ(rmm_resource_release(handle), RMM_STATUS_SUCCESS);
}

TEST_F(per_device, RustResourceSetFromCppIsTheOneCSees)
{
  rmm::mr::cuda_memory_resource mine;
  rmm::mr::set_current_device_resource(&mine);
  rmm_resource_t handle = nullptr;
  ASSERT_EQ(rmm_get_current_device_resource(&handle), RMM_STATUS_SUCCESS);
  bool equal = false;
  ASSERT_EQ(rmm_resource_is_equal(handle, mine.handle(), &equal), RMM_STATUS_SUCCESS);
  EXPECT_TRUE(equal);
  EXPECT_EQ(rmm_resource_release(handle), RMM_STATUS_SUCCESS);
}

TEST_F(per_device, ResetFromCIsSeenByCpp)
{
  auto* initial = rmm::mr::get_current_device_resource();
  rmm::mr::cuda_memory_resource mine;
  rmm::mr::set_current_device_resource(&mine);
  ASSERT_EQ(rmm_reset_current_device_resource(nullptr), RMM_STATUS_SUCCESS);
  EXPECT_EQ(rmm::mr::get_current_device_resource(), initial);
}

}  // namespace
