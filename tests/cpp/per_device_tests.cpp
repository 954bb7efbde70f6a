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
  EXPECT_THROW((void)rmm::mr::get_per_device_resource(rmm::cuda_device_id{count}),
               rmm::logic_error);
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

namespace {

rmm_pool_stats pool_stats(rmm_resource_t pool)
{
  rmm_pool_stats stats{};
  EXPECT_EQ(rmm_pool_get_stats(pool, &stats), RMM_STATUS_SUCCESS) << rmm_last_error_message();
  return stats;
}

// A pool over a new cuda resource, created through the C ABI (the caller releases it).
rmm_resource_t make_c_pool()
{
  rmm_resource_t upstream = nullptr;
  rmm_resource_t pool     = nullptr;
  EXPECT_EQ(rmm_cuda_create(&upstream), RMM_STATUS_SUCCESS);
  EXPECT_EQ(rmm_pool_create(upstream, 0, 0, &pool), RMM_STATUS_SUCCESS) << rmm_last_error_message();
  EXPECT_EQ(rmm_resource_release(upstream), RMM_STATUS_SUCCESS);
  return pool;
}

}  // namespace

// A resource set from C (or Python) is an untagged registry entry: C++ must see it as itself,
// not as the device's initial cuda_memory_resource.
TEST_F(per_device, PoolSetFromCIsNotTakenForTheInitialResource)
{
  rmm_resource_t upstream = nullptr;
  rmm_resource_t pool     = nullptr;
  ASSERT_EQ(rmm_cuda_create(&upstream), RMM_STATUS_SUCCESS);
  ASSERT_EQ(rmm_pool_create(upstream, 0, 0, &pool), RMM_STATUS_SUCCESS) << rmm_last_error_message();
  ASSERT_EQ(rmm_set_current_device_resource(pool, nullptr), RMM_STATUS_SUCCESS);

  auto* mr = rmm::mr::get_current_device_resource();
  ASSERT_NE(mr, nullptr);
  EXPECT_EQ(dynamic_cast<rmm::mr::cuda_memory_resource*>(mr), nullptr);
  auto* wrapper = dynamic_cast<rmm::mr::detail::handle_resource*>(mr);
  ASSERT_NE(wrapper, nullptr);
  EXPECT_EQ(wrapper->resource_name(), "pool_memory_resource");
  EXPECT_EQ(rmm::mr::get_current_device_resource(), mr) << "the same object every time";
  EXPECT_EQ(rmm::mr::get_per_device_resource(rmm::get_current_cuda_device()), mr);
  EXPECT_EQ(rmm::mr::get_current_device_resource_ref(), rmm::device_async_resource_ref{mr});

  // Allocations go through the pool.
  EXPECT_EQ(pool_stats(pool).pool_size, 0U);
  void* p = mr->allocate(4096);
  ASSERT_NE(p, nullptr);
  EXPECT_GE(pool_stats(pool).pool_size, 4096U);
  auto const free_while_held = pool_stats(pool).bytes_free;
  mr->deallocate(p, 4096);
  EXPECT_EQ(pool_stats(pool).bytes_free, free_while_held + 4096);

  // Resetting hands back the wrapper, and the genuine initial cuda_memory_resource after it.
  EXPECT_EQ(rmm::mr::reset_current_device_resource(), mr);
  auto* initial      = rmm::mr::get_current_device_resource();
  auto* initial_cuda = dynamic_cast<rmm::mr::cuda_memory_resource*>(initial);
  ASSERT_NE(initial_cuda, nullptr);
  EXPECT_NE(initial, mr);
  EXPECT_EQ(rmm::mr::detail::initial_resource(), initial);
  EXPECT_EQ(initial_cuda->resource_name(), "cuda_memory_resource");
  auto const before = pool_stats(pool);
  void* q           = initial->allocate(1 << 20);
  ASSERT_NE(q, nullptr);
  auto const during = pool_stats(pool);
  EXPECT_EQ(during.pool_size, before.pool_size) << "the initial resource is not the pool";
  EXPECT_EQ(during.bytes_free, before.bytes_free);
  initial->deallocate(q, 1 << 20);
  EXPECT_FALSE(initial->is_equal(*mr));

  ASSERT_EQ(rmm_resource_release(pool), RMM_STATUS_SUCCESS);
  ASSERT_EQ(rmm_resource_release(upstream), RMM_STATUS_SUCCESS);
}

// The pool set from C, then replaced from C++: set returns the pool's wrapper (the same one
// get returned), and the C++-set object comes back as itself.
TEST_F(per_device, CppSetAfterCSetReturnsThePoolWrapper)
{
  rmm_resource_t pool = make_c_pool();
  ASSERT_NE(pool, nullptr);
  ASSERT_EQ(rmm_set_current_device_resource(pool, nullptr), RMM_STATUS_SUCCESS);
  auto* wrapper = rmm::mr::get_current_device_resource();
  rmm::mr::cuda_memory_resource mine;
  EXPECT_EQ(rmm::mr::set_current_device_resource(&mine), wrapper);
  EXPECT_EQ(rmm::mr::get_current_device_resource(), &mine);
  // The wrapper can be set again from C++ and comes back as itself.
  EXPECT_EQ(rmm::mr::set_current_device_resource(wrapper), &mine);
  EXPECT_EQ(rmm::mr::get_current_device_resource(), wrapper);
  rmm_resource_t handle = nullptr;
  ASSERT_EQ(rmm_get_current_device_resource(&handle), RMM_STATUS_SUCCESS);
  bool equal = false;
  ASSERT_EQ(rmm_resource_is_equal(handle, pool, &equal), RMM_STATUS_SUCCESS);
  EXPECT_TRUE(equal);
  EXPECT_EQ(rmm_resource_release(handle), RMM_STATUS_SUCCESS);
  rmm::mr::reset_current_device_resource();
  EXPECT_NE(dynamic_cast<rmm::mr::cuda_memory_resource*>(rmm::mr::get_current_device_resource()),
            nullptr);
  ASSERT_EQ(rmm_resource_release(pool), RMM_STATUS_SUCCESS);
}

// Many threads resolving the same C-set entry agree on one object.
TEST_F(per_device, ConcurrentFirstUseOfCSetEntryAgreesOnOneObject)
{
  rmm_resource_t pool = make_c_pool();
  ASSERT_NE(pool, nullptr);
  ASSERT_EQ(rmm_set_current_device_resource(pool, nullptr), RMM_STATUS_SUCCESS);
  std::vector<rmm::mr::device_memory_resource*> seen(8, nullptr);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] { seen[i] = rmm::mr::get_current_device_resource(); });
  }
  for (auto& t : threads) {
    t.join();
  }
  EXPECT_EQ(std::set<rmm::mr::device_memory_resource*>(seen.begin(), seen.end()).size(), 1U);
  EXPECT_EQ(dynamic_cast<rmm::mr::cuda_memory_resource*>(seen[0]), nullptr);
  rmm::mr::reset_current_device_resource();
  ASSERT_EQ(rmm_resource_release(pool), RMM_STATUS_SUCCESS);
}

// The initial resource set back from C (untagged) is still the initial object.
TEST_F(per_device, InitialSetFromCIsStillTheInitialObject)
{
  auto* initial         = rmm::mr::get_current_device_resource();
  rmm_resource_t handle = nullptr;
  ASSERT_EQ(rmm_get_current_device_resource(&handle), RMM_STATUS_SUCCESS);
  rmm::mr::cuda_memory_resource mine;
  rmm::mr::set_current_device_resource(&mine);
  ASSERT_EQ(rmm_set_current_device_resource(handle, nullptr), RMM_STATUS_SUCCESS);
  EXPECT_EQ(rmm::mr::get_current_device_resource(), initial);
  ASSERT_EQ(rmm_resource_release(handle), RMM_STATUS_SUCCESS);
}
