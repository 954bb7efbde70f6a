// RMM 25.02's API: the pool template over a cuda_memory_resource, called directly.
#include "churn.hpp"

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/pool_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

static_assert(RMM_API_GENERATION == 2502);

double churn_25_02(churn::plan const& p, std::size_t live, std::size_t pool_bytes)
{
  rmm::mr::cuda_memory_resource cuda;
  rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource> pool{&cuda, pool_bytes};
  rmm::cuda_stream_view stream{};
  return churn::run(
    p,
    live,
    [&](std::size_t bytes) { return pool.allocate(bytes, stream); },
    [&](void* ptr, std::size_t bytes) { pool.deallocate(ptr, bytes, stream); });
}

// How 25.02's containers and per-device API reach a resource: a device_async_resource_ref.
double churn_25_02_ref(churn::plan const& p, std::size_t live, std::size_t pool_bytes)
{
  rmm::mr::cuda_memory_resource cuda;
  rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource> pool{&cuda, pool_bytes};
  rmm::device_async_resource_ref ref{pool};
  rmm::cuda_stream_view stream{};
  return churn::run(
    p,
    live,
    [&](std::size_t bytes) { return ref.allocate_async(bytes, stream); },
    [&](void* ptr, std::size_t bytes) { ref.deallocate_async(ptr, bytes, stream); });
}
