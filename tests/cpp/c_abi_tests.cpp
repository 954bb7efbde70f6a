// C ABI functions called from C++ as C calls them: resource identity (rmm_resource_id),
// rmm_prefetch (and rmm::prefetch over it), runtime/driver versions and device attributes by
// CUDA's numbers, and the runtime error code of the last failure. Runs unchanged on the host
// emulation and on a GPU; checks that only the host emulation can make exactly are marked.
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>
#include <rmm/prefetch.hpp>
#include <rmm/rmm.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace {

#define RMM_OK(call) ASSERT_EQ((call), RMM_STATUS_SUCCESS) << rmm_last_error_message()

bool on_host_runtime()
{
  char const* name = nullptr;
  return rmm_runtime_name(&name) == RMM_STATUS_SUCCESS && std::string{name} == "host";
}

std::uint64_t id_of(rmm_resource_t r)
{
  std::uint64_t id = 0;
  EXPECT_EQ(rmm_resource_id(r, &id), RMM_STATUS_SUCCESS) << rmm_last_error_message();
  return id;
}

bool contains(std::string const& haystack, std::string const& needle)
{
  return haystack.find(needle) != std::string::npos;
}

TEST(ResourceId, EqualForEveryHandleOfOneResource)
{
  rmm_resource_t cuda = nullptr;
  RMM_OK(rmm_cuda_create(&cuda));
  std::uint64_t const id = id_of(cuda);
  EXPECT_NE(id, 0u);
  RMM_OK(rmm_resource_retain(cuda));
  EXPECT_EQ(id_of(cuda), id);
  RMM_OK(rmm_resource_release(cuda));

  // Through the registry: the getter makes a new handle to the same resource.
  rmm_resource_t previous = nullptr;
  RMM_OK(rmm_set_current_device_resource(cuda, &previous));
  rmm_resource_t got = nullptr;
  RMM_OK(rmm_get_current_device_resource(&got));
  EXPECT_NE(got, cuda);  // handles are not identities
  EXPECT_EQ(id_of(got), id);
  RMM_OK(rmm_resource_release(got));
  RMM_OK(rmm_set_current_device_resource(previous, nullptr));
  RMM_OK(rmm_resource_release(previous));

  // An adaptor's upstream handle names the same resource as well.
  rmm_resource_t stats = nullptr;
  RMM_OK(rmm_statistics_adaptor_create(cuda, &stats));
  rmm_resource_t upstream = nullptr;
  RMM_OK(rmm_resource_get_upstream(stats, &upstream));
  EXPECT_EQ(id_of(upstream), id);
  EXPECT_NE(id_of(stats), id);
  RMM_OK(rmm_resource_release(upstream));
  RMM_OK(rmm_resource_release(stats));
  RMM_OK(rmm_resource_release(cuda));
}

TEST(ResourceId, DistinctForEqualTwins)
{
  rmm_resource_t cuda = nullptr;
  RMM_OK(rmm_cuda_create(&cuda));
  rmm_resource_t a = nullptr;
  rmm_resource_t b = nullptr;
  RMM_OK(rmm_statistics_adaptor_create(cuda, &a));
  RMM_OK(rmm_statistics_adaptor_create(cuda, &b));
  bool equal = false;
  RMM_OK(rmm_resource_is_equal(a, b, &equal));
  EXPECT_TRUE(equal);             // same kind over the same upstream: interchangeable memory...
  EXPECT_NE(id_of(a), id_of(b));  // ...but two objects

  rmm_resource_t other_cuda = nullptr;
  RMM_OK(rmm_cuda_create(&other_cuda));
  EXPECT_NE(id_of(other_cuda), id_of(cuda));
  for (auto r : {a, b, cuda, other_cuda}) {
    RMM_OK(rmm_resource_release(r));
  }
}

TEST(ResourceId, BadArgumentsAreInvalid)
{
  std::uint64_t id = 7;
  EXPECT_EQ(rmm_resource_id(nullptr, &id), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(rmm_last_error_message(), "NULL")) << rmm_last_error_message();
  EXPECT_EQ(id, 7u);
  rmm_resource_t cuda = nullptr;
  RMM_OK(rmm_cuda_create(&cuda));
  EXPECT_EQ(rmm_resource_id(cuda, nullptr), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(rmm_last_error_message(), "`id` is NULL")) << rmm_last_error_message();
  RMM_OK(rmm_resource_release(cuda));
  EXPECT_EQ(rmm_resource_id(cuda, &id), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(rmm_last_error_message(), "already released")) << rmm_last_error_message();
  EXPECT_EQ(id, 7u);
  EXPECT_EQ(rmm_last_error_runtime_code(), 0);  // not a runtime failure
}

TEST(Prefetch, ManagedDeviceAndHostMemoryAreHints)
{
  int device = 0;
  RMM_OK(rmm_get_current_device(&device));
  rmm_stream_t stream = nullptr;
  RMM_OK(rmm_stream_create(0, &stream));

  rmm_resource_t managed = nullptr;
  RMM_OK(rmm_managed_create(&managed));
  void* p = nullptr;
  RMM_OK(rmm_allocate_async(managed, 1 << 16, stream, &p));
  RMM_OK(rmm_prefetch(p, 1 << 16, device, stream));
  RMM_OK(rmm_prefetch(p, 1 << 16, -1, stream));  // to the host (cudaCpuDeviceId)
  RMM_OK(rmm_prefetch(p, 1 << 16, device, RMM_STREAM_DEFAULT));
  RMM_OK(rmm_stream_synchronize(stream));
  RMM_OK(rmm_deallocate_async(managed, p, 1 << 16, stream));

  // Device memory and pageable host memory are not managed: a no-op, as in RMM.
  rmm_resource_t cuda = nullptr;
  RMM_OK(rmm_cuda_create(&cuda));
  void* d = nullptr;
  RMM_OK(rmm_allocate(cuda, 4096, &d));
  RMM_OK(rmm_prefetch(d, 4096, device, stream));
  RMM_OK(rmm_deallocate(cuda, d, 4096));
  int host_value = 0;
  RMM_OK(rmm_prefetch(&host_value, sizeof(host_value), device, stream));
  RMM_OK(rmm_prefetch(nullptr, 0, device, stream));
  RMM_OK(rmm_prefetch(nullptr, 4096, device, stream));

  RMM_OK(rmm_stream_destroy(stream));
  RMM_OK(rmm_resource_release(cuda));
  RMM_OK(rmm_resource_release(managed));
}

TEST(Prefetch, BadDeviceAndStream)
{
  rmm_resource_t managed = nullptr;
  RMM_OK(rmm_managed_create(&managed));
  void* p = nullptr;
  RMM_OK(rmm_allocate(managed, 4096, &p));
  EXPECT_EQ(rmm_prefetch(p, 4096, -2, RMM_STREAM_DEFAULT), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(rmm_last_error_message(), "rmm_prefetch")) << rmm_last_error_message();
  EXPECT_THROW(rmm::prefetch(p, 4096, rmm::cuda_device_id{-2}, rmm::cuda_stream_view{}),
               rmm::logic_error);
  if (on_host_runtime()) {
    // The runtime's own errors, exactly as the host emulation reports them (CUDA's codes).
    int count = 0;
    RMM_OK(rmm_get_device_count(&count));
    EXPECT_EQ(rmm_prefetch(p, 4096, count, RMM_STREAM_DEFAULT), RMM_STATUS_RUNTIME_ERROR);
    EXPECT_EQ(rmm_last_error_runtime_code(), 101);  // cudaErrorInvalidDevice
    EXPECT_THROW(rmm::prefetch(p, 4096, rmm::cuda_device_id{count}, rmm::cuda_stream_view{}),
                 rmm::cuda_error);
    rmm_stream_t stream = nullptr;
    RMM_OK(rmm_stream_create(0, &stream));
    RMM_OK(rmm_stream_destroy(stream));
    EXPECT_EQ(rmm_prefetch(p, 4096, 0, stream), RMM_STATUS_RUNTIME_ERROR);
    EXPECT_EQ(rmm_last_error_runtime_code(), 400);  // cudaErrorInvalidResourceHandle
  }
  RMM_OK(rmm_deallocate(managed, p, 4096));
  RMM_OK(rmm_resource_release(managed));
}

TEST(Prefetch, CppWrapperGoesThroughTheCAbi)
{
  rmm_resource_t managed = nullptr;
  RMM_OK(rmm_managed_create(&managed));
  void* p = nullptr;
  RMM_OK(rmm_allocate(managed, 4096, &p));
  EXPECT_NO_THROW(rmm::prefetch(p, 4096, rmm::get_current_cuda_device(), rmm::cuda_stream_view{}));
  EXPECT_NO_THROW(rmm::prefetch(p, 4096, rmm::cuda_device_id{-1}, rmm::cuda_stream_view{}));
  RMM_OK(rmm_deallocate(managed, p, 4096));
  RMM_OK(rmm_resource_release(managed));
}

TEST(Versions, RuntimeAndDriver)
{
  int runtime = 0;
  int driver  = 0;
  RMM_OK(rmm_runtime_get_version(&runtime));
  RMM_OK(rmm_driver_get_version(&driver));
  EXPECT_GT(runtime, 0);
  EXPECT_GE(driver, 0);
  if (on_host_runtime()) {
    EXPECT_EQ(runtime, 13000);
    EXPECT_EQ(driver, 13000);
  }
  EXPECT_EQ(rmm_runtime_get_version(nullptr), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(rmm_driver_get_version(nullptr), RMM_STATUS_INVALID_ARGUMENT);
}

TEST(DeviceAttributes, ByCudaNumber)
{
  int device = 0;
  RMM_OK(rmm_get_current_device(&device));
  int warp = 0;
  RMM_OK(rmm_device_get_attribute(&warp, 10, device));  // cudaDevAttrWarpSize
  EXPECT_TRUE(warp == 32 || warp == 64) << warp;
  int sms = 0;
  RMM_OK(rmm_device_get_attribute(&sms, 16, device));  // cudaDevAttrMultiProcessorCount
  EXPECT_GE(sms, 1);
  int major = 0;
  RMM_OK(rmm_device_get_attribute(&major, 75, device));  // cudaDevAttrComputeCapabilityMajor
  EXPECT_GE(major, 1);
  // The typed queries agree with the numbered ones.
  int pageable = -1;
  RMM_OK(rmm_device_get_attribute(&pageable, 88, device));  // cudaDevAttrPageableMemoryAccess
  bool supported = false;
  RMM_OK(rmm_device_supports_pageable_memory(device, &supported));
  EXPECT_EQ(pageable == 1, supported);
  int pools = -1;
  RMM_OK(rmm_device_get_attribute(&pools, 115, device));  // cudaDevAttrMemoryPoolsSupported
  RMM_OK(rmm_device_supports_async_pools(device, &supported));
  EXPECT_EQ(pools == 1, supported);
  if (on_host_runtime()) {
    EXPECT_EQ(warp, 32);
    EXPECT_EQ(major, 9);
    int minor = -1;
    RMM_OK(rmm_device_get_attribute(&minor, 76, device));
    EXPECT_EQ(minor, 0);
  }
}

TEST(DeviceAttributes, BadArguments)
{
  int count = 0;
  RMM_OK(rmm_get_device_count(&count));
  int value = 1234;
  EXPECT_EQ(rmm_device_get_attribute(nullptr, 10, 0), RMM_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(rmm_last_error_runtime_code(), 0);
  EXPECT_EQ(rmm_device_get_attribute(&value, 10, count), RMM_STATUS_RUNTIME_ERROR);
  EXPECT_EQ(rmm_last_error_runtime_code(), 101);  // cudaErrorInvalidDevice
  EXPECT_TRUE(contains(rmm_last_error_message(), "rmm_device_get_attribute"))
    << rmm_last_error_message();
  EXPECT_EQ(rmm_device_get_attribute(&value, 0, 0), RMM_STATUS_RUNTIME_ERROR);
  EXPECT_EQ(rmm_last_error_runtime_code(), 1);  // cudaErrorInvalidValue: no attribute 0
  EXPECT_EQ(value, 1234);
}

}  // namespace
