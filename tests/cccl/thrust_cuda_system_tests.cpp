// rmm's Thrust layer in a unit compiled by the host C++ compiler with Thrust's CUDA device
// system (CCCL's default): as with RAPIDS RMM, whose exec_policy.cpp the host compiler builds,
// rmm::exec_policy, rmm::exec_policy_nosync, rmm::mr::thrust_allocator and rmm::device_vector
// exist whenever Thrust is on the include path. Thrust defines the CUDA system's algorithms
// only for nvcc, so this checks what such a unit does: builds the policies (their types are
// RMM's, they carry the stream, their temporary storage comes from the resource), allocates
// and frees through the allocator, and runs Thrust's host algorithms on that memory (rmm-rs's
// host runtime gives host-accessible memory), with the allocator serving the temporary storage
// of Thrust's CPP system. Built as RMM 25.10 with every CCCL release and as RMM 26.06 where
// CCCL has what 26.06 needs; runs on the host runtime.
#include <rmm/cuda_stream.hpp>
#include <rmm/device_vector.hpp>
#include <rmm/exec_policy.hpp>
#include <rmm/resource_ref.hpp>
#if RMM_API_GENERATION >= 2606
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>
#include <rmm/mr/thrust_allocator_adaptor.hpp>
#else
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/statistics_resource_adaptor.hpp>
#include <rmm/mr/device/thrust_allocator_adaptor.hpp>
#endif

#include <gtest/gtest.h>

#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/memory.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/system/cpp/execution_policy.h>

#include <cstdint>
#include <type_traits>

#if !defined(RMM_DETAIL_THRUST_CUDA)
#error "thrust_cuda_system_tests.cpp needs Thrust's CUDA device system and CUDA's runtime header"
#endif
#if defined(__CUDACC__)
#error "thrust_cuda_system_tests.cpp checks the host compiler's view of the headers"
#endif

namespace {

// The types RAPIDS RMM's exec_policy.hpp declares.
static_assert(
  std::is_same_v<rmm::thrust_exec_policy_t,
                 thrust::detail::execute_with_allocator<rmm::mr::thrust_allocator<char>,
                                                        thrust::cuda_cub::execute_on_stream_base>>);
static_assert(
  std::is_same_v<
    rmm::thrust_exec_policy_nosync_t,
    thrust::detail::execute_with_allocator<rmm::mr::thrust_allocator<char>,
                                           thrust::cuda_cub::execute_on_stream_nosync_base>>);
static_assert(std::is_base_of_v<rmm::thrust_exec_policy_t, rmm::exec_policy>);
static_assert(std::is_base_of_v<rmm::thrust_exec_policy_nosync_t, rmm::exec_policy_nosync>);
static_assert(std::is_same_v<rmm::device_vector<int>,
                             thrust::device_vector<int, rmm::mr::thrust_allocator<int>>>);

/// A resource that counts the bytes and allocations outstanding through it, in the form the
/// generation's policies and allocator take.
#if RMM_API_GENERATION >= 2606
struct counted_resource {
  rmm::mr::statistics_resource_adaptor stats{rmm::mr::cuda_memory_resource{}};
  [[nodiscard]] rmm::mr::statistics_resource_adaptor arg() const { return stats; }
  [[nodiscard]] std::int64_t bytes() const { return stats.get_bytes_counter().value; }
  [[nodiscard]] std::int64_t allocations() const { return stats.get_allocations_counter().total; }
};
#else
struct counted_resource {
  rmm::mr::cuda_memory_resource cuda;
  rmm::mr::statistics_resource_adaptor<rmm::mr::cuda_memory_resource> stats{&cuda};
  [[nodiscard]] rmm::device_async_resource_ref arg()
  {
    return rmm::device_async_resource_ref{stats};
  }
  [[nodiscard]] std::int64_t bytes() const { return stats.get_bytes_counter().value; }
  [[nodiscard]] std::int64_t allocations() const { return stats.get_allocations_counter().total; }
};
#endif

TEST(ThrustCudaSystemHostCompiler, ExecPolicyCarriesTheStreamAndTheResource)
{
  counted_resource mr;
  rmm::cuda_stream stream;
  rmm::exec_policy policy{stream.view(), mr.arg()};
  EXPECT_EQ(thrust::cuda_cub::stream(policy), stream.value());
  EXPECT_EQ(policy.get_allocator().stream(), stream.view());

  // Thrust's algorithms (compiled by nvcc) take their temporary storage this way.
  auto const buffer = thrust::get_temporary_buffer<int>(policy, 100);
  ASSERT_NE(thrust::raw_pointer_cast(buffer.first), nullptr);
  EXPECT_EQ(buffer.second, 100);
  EXPECT_EQ(mr.bytes(), 100 * static_cast<std::int64_t>(sizeof(int)));
  thrust::return_temporary_buffer(policy, buffer.first, buffer.second);
  EXPECT_EQ(mr.bytes(), 0);
}

TEST(ThrustCudaSystemHostCompiler, ExecPolicyNosyncAndDefaults)
{
  counted_resource mr;
  rmm::cuda_stream stream;
  rmm::exec_policy_nosync nosync{stream.view(), mr.arg()};
  EXPECT_EQ(thrust::cuda_cub::stream(nosync), stream.value());
  auto const buffer = thrust::get_temporary_buffer<char>(nosync, 64);
  EXPECT_EQ(mr.bytes(), 64);
  thrust::return_temporary_buffer(nosync, buffer.first, buffer.second);
  EXPECT_EQ(mr.bytes(), 0);

  // The defaults: the default stream and the current device resource.
  rmm::exec_policy defaults{};
  EXPECT_EQ(thrust::cuda_cub::stream(defaults), rmm::cuda_stream_default.value());
  EXPECT_EQ(defaults.get_allocator().get_upstream_resource(),
            rmm::mr::get_current_device_resource_ref());
}

TEST(ThrustCudaSystemHostCompiler, AllocatorMemoryWithHostAlgorithms)
{
  counted_resource mr;
  rmm::cuda_stream stream;
  rmm::mr::thrust_allocator<int> alloc{stream.view(), mr.arg()};
  EXPECT_EQ(alloc.stream(), stream.view());
  auto ptr = alloc.allocate(100);
  EXPECT_EQ(mr.bytes(), 100 * static_cast<std::int64_t>(sizeof(int)));
  int* raw = thrust::raw_pointer_cast(ptr);
  ASSERT_NE(raw, nullptr);
  // The host runtime's device memory is host memory: Thrust's host system runs on it.
  thrust::sequence(thrust::host, raw, raw + 100);
  EXPECT_EQ(thrust::reduce(thrust::host, raw, raw + 100), 4950);

  // Thrust's CPP system with rmm's allocator: the sort's temporary storage comes from rmm.
  rmm::mr::thrust_allocator<char> temporaries{alloc};
  auto const before = mr.allocations();
  thrust::sort(thrust::cpp::par(temporaries), raw, raw + 100, thrust::greater<int>());
  EXPECT_EQ(raw[0], 99);
  EXPECT_EQ(raw[99], 0);
  EXPECT_GT(mr.allocations(), before);
  alloc.deallocate(ptr, 100);
  EXPECT_EQ(mr.bytes(), 0);
}

TEST(ThrustCudaSystemHostCompiler, EmptyDeviceVectorWithTheAllocator)
{
  counted_resource mr;
  rmm::cuda_stream stream;
  rmm::mr::thrust_allocator<int> alloc{stream.view(), mr.arg()};
  // Filling a device_vector runs the CUDA system's algorithms (nvcc only); an empty one is
  // made, kept and destroyed by the host compiler.
  rmm::device_vector<int> vec{alloc};
  EXPECT_TRUE(vec.empty());
  EXPECT_EQ(vec.get_allocator().stream(), stream.view());
  EXPECT_EQ(mr.bytes(), 0);
}

}  // namespace
