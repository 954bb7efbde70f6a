// The hipMM / RMM README examples, written out as tests (RMM_HOST_DEVICES=2 for this
// executable; kernels are replaced by host copies through the C ABI).
#include "sync_free_resource.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/device_scalar.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/mr/device/pool_memory_resource.hpp>
#include <rmm/rmm.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace {

class readme : public ::testing::Test {
 protected:
  // The default resource frees like hipFree (synchronizing): see sync_free_resource.hpp.
  void SetUp() override { rmm::mr::set_current_device_resource(&sync_free_); }
  rmm_test::sync_free_resource sync_free_{};
  void TearDown() override
  {
    int n = rmm::get_num_cuda_devices();
    for (int i = 0; i < n; ++i) {
      rmm::mr::reset_per_device_resource(rmm::cuda_device_id{i});
    }
    (void)rmm_set_current_device(0);
  }
};

// "device_buffer": allocate on a stream from the current resource, resize, shrink.
TEST_F(readme, DeviceBuffer)
{
  rmm::cuda_stream stream;
  rmm::cuda_stream_view s{stream};
  rmm::device_buffer b{100, s};  // 100 bytes from the current device resource
  void* p = b.data();
  EXPECT_NE(p, nullptr);

  rmm_test::sync_free_resource custom;
  rmm::mr::device_memory_resource* mr = &custom;
  rmm::device_buffer b2{100, s, mr};
  EXPECT_EQ(b2.memory_resource(), mr);

  b.resize(200, s);  // larger than capacity: reallocates and copies
  EXPECT_EQ(b.size(), 200U);
  EXPECT_EQ(b.capacity(), 200U);
  b.resize(100, s);  // within capacity: no reallocation
  EXPECT_EQ(b.size(), 100U);
  EXPECT_EQ(b.capacity(), 200U);
  b.shrink_to_fit(s);  // capacity back to size
  EXPECT_EQ(b.capacity(), 100U);
  s.synchronize();
}

// "device_uvector": typed, uninitialized; the README fills it with a kernel.
TEST_F(readme, DeviceUvector)
{
  rmm::cuda_stream stream;
  rmm::cuda_stream_view s{stream};
  rmm::device_uvector<std::int32_t> v(100, s);
  // Stand-in for thrust::uninitialized_fill(..., v.begin(), v.end(), int32_t{0}).
  ASSERT_EQ(rmm_memset_async(v.begin(),
                             0,
                             static_cast<std::size_t>(v.end() - v.begin()) * sizeof(std::int32_t),
                             rmm::detail::to_c_stream(s.value())),
            RMM_STATUS_SUCCESS);
  EXPECT_EQ(v.element(0, s), 0);
  EXPECT_EQ(v.element(99, s), 0);

  rmm_test::sync_free_resource custom;
  rmm::mr::device_memory_resource* mr = &custom;
  rmm::device_uvector<std::int32_t> v2{100, s, mr};
  EXPECT_EQ(v2.memory_resource(), mr);
}

// "device_scalar": a value written on the device and read back on the host.
TEST_F(readme, DeviceScalar)
{
  rmm::cuda_stream stream;
  rmm::cuda_stream_view s{stream};
  rmm::device_scalar<std::int32_t> a{s};
  // Stand-in for kernel<<<..., s.value()>>>(a.data()) writing 42.
  std::int32_t const written = 42;
  ASSERT_EQ(
    rmm_memcpy_async(a.data(), &written, sizeof(written), rmm::detail::to_c_stream(s.value())),
    RMM_STATUS_SUCCESS);
  std::int32_t v = a.value(s);  // copies to the host and synchronizes s
  EXPECT_EQ(v, 42);
}

// "Using a pool of 50% of free device memory as the current resource".
TEST_F(readme, PoolAsCurrentResource)
{
  rmm::mr::cuda_memory_resource cuda_mr;
  // Construct a resource that uses a coalescing best-fit pool allocator.
  // With the pool initially half of available device memory.
  auto initial_size = rmm::percent_of_free_device_memory(50);
  EXPECT_GT(initial_size, 0U);
  EXPECT_EQ(initial_size % 256, 0U);
  rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource> pool_mr{&cuda_mr, initial_size};
  rmm::mr::set_current_device_resource(&pool_mr);  // Updates the current device resource
  rmm::mr::device_memory_resource* mr = rmm::mr::get_current_device_resource();
  EXPECT_EQ(mr, &pool_mr);
  {
    rmm::device_buffer b{1 << 20, rmm::cuda_stream_default};  // comes from the pool
    EXPECT_EQ(b.memory_resource(), &pool_mr);
    rmm::device_uvector<double> v(1000, rmm::cuda_stream_default);
    EXPECT_EQ(v.memory_resource(), &pool_mr);
    rmm::device_scalar<int> sc{7, rmm::cuda_stream_default};
    EXPECT_EQ(sc.value(rmm::cuda_stream_default), 7);
  }
  rmm::mr::reset_current_device_resource();
}

// "Multiple devices": one pool per device, each created with its device current, and
// buffers freed on the device that was current at their creation.
TEST_F(readme, PerDevicePools)
{
  int const N = rmm::get_num_cuda_devices();
  if (N < 2) { GTEST_SKIP() << "needs 2 devices (RMM_HOST_DEVICES=2)"; }
  using pool_mr = rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource>;
  rmm::mr::cuda_memory_resource upstream;
  std::vector<std::unique_ptr<pool_mr>> per_device_pools;
  for (int i = 0; i < N; ++i) {
    ASSERT_EQ(rmm_set_current_device(i), RMM_STATUS_SUCCESS);  // cudaSetDevice(i)
    auto const initial_size = rmm::percent_of_free_device_memory(10);
    // Use a vector of unique_ptr to maintain the lifetime of the MRs.
    per_device_pools.push_back(std::make_unique<pool_mr>(&upstream, initial_size));
    // Set the per-device resource for device i.
    rmm::mr::set_per_device_resource(rmm::cuda_device_id{i}, per_device_pools.back().get());
  }
  for (int i = 0; i < N; ++i) {
    EXPECT_EQ(rmm::mr::get_per_device_resource(rmm::cuda_device_id{i}),
              per_device_pools[static_cast<std::size_t>(i)].get());
  }

  // "device_buffer is freed on the device it was created on".
  {
    ASSERT_EQ(rmm_set_current_device(0), RMM_STATUS_SUCCESS);
    rmm::device_buffer buf(16, rmm::cuda_stream_default);
    EXPECT_EQ(buf.memory_resource(), per_device_pools[0].get());
    ASSERT_EQ(rmm_set_current_device(1), RMM_STATUS_SUCCESS);
    rmm::device_buffer buf1(16, rmm::cuda_stream_default);
    EXPECT_EQ(buf1.memory_resource(), per_device_pools[1].get());
  }  // buf freed with device 0 current, buf1 with device 1
  EXPECT_EQ(rmm::get_current_cuda_device(), rmm::cuda_device_id{1});

  for (int i = 0; i < N; ++i) {
    rmm::mr::reset_per_device_resource(rmm::cuda_device_id{i});
  }
}

}  // namespace
