// RMM 26.06's API: the non-template pool, built from a cuda_memory_resource passed by value,
// called through cuda::mr::any_resource and through device_async_resource_ref (how 26.06
// code holds resources: containers and the per-device map keep any_resource).
#include "churn.hpp"

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

static_assert(RMM_API_GENERATION == 2606);

namespace {
constexpr std::size_t alignment = 256;
}

double churn_26_06_any(churn::plan const& p, std::size_t live, std::size_t pool_bytes)
{
  cuda::mr::any_resource<cuda::mr::device_accessible> mr{
    rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, pool_bytes}};
  cuda::stream_ref stream{rmm::cuda_stream_view{}.value()};
  return churn::run(
    p,
    live,
    [&](std::size_t bytes) { return mr.allocate(stream, bytes, alignment); },
    [&](void* ptr, std::size_t bytes) { mr.deallocate(stream, ptr, bytes, alignment); });
}

double churn_26_06_ref(churn::plan const& p, std::size_t live, std::size_t pool_bytes)
{
  rmm::mr::pool_memory_resource pool{rmm::mr::cuda_memory_resource{}, pool_bytes};
  rmm::device_async_resource_ref ref{pool};
  cuda::stream_ref stream{rmm::cuda_stream_view{}.value()};
  return churn::run(
    p,
    live,
    [&](std::size_t bytes) { return ref.allocate(stream, bytes, alignment); },
    [&](void* ptr, std::size_t bytes) { ref.deallocate(stream, ptr, bytes, alignment); });
}
