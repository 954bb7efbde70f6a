/**
 * @file exec_policy.hpp
 * @brief `rmm::exec_policy` and `rmm::exec_policy_nosync`: Thrust execution policies whose
 * temporary memory comes from rmm (RMM's `rmm/exec_policy.hpp`).
 *
 * Available whenever Thrust (rocThrust on AMD) is on the include path with a device system
 * this unit's runtime header serves, with any compiler, as with RMM and hipMM (see
 * rmm/detail/thrust.hpp); otherwise this header defines nothing. With Thrust's CUDA or HIP
 * device system the policy runs algorithms on the given stream (`thrust::cuda::par` /
 * `thrust::hip::par` with `.on(stream)`); a unit compiled by the host compiler constructs it
 * and hands it to code compiled by nvcc or hipcc, which runs the algorithms (Thrust defines
 * those systems' algorithms only there). With a host device system (CPP, OMP, TBB) it is
 * `thrust::device` with rmm's allocator: algorithms run on the host and the stream only
 * orders the temporary allocations.
 */
#pragma once

#include <rmm/mr/device/thrust_allocator_adaptor.hpp>

#if defined(RMM_DETAIL_HAVE_THRUST)
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/stream_arg.hpp>
#if RMM_DETAIL_API_OWNING_RESOURCE_ARGS
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/mr/thrust_allocator_adaptor.hpp>

#include <cuda/memory_resource>
#else
#include <rmm/mr/device/per_device_resource.hpp>
#endif
#include <rmm/resource_ref.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/detail/thrust_namespace.h>

#include <thrust/version.h>

#include <utility>

#if defined(RMM_DETAIL_THRUST_CUDA)
#include <thrust/system/cuda/execution_policy.h>
#define RMM_DETAIL_THRUST_PAR(alloc, stream) thrust::cuda::par(alloc).on(stream)
#if THRUST_VERSION >= 101600
#define RMM_DETAIL_THRUST_PAR_NOSYNC(alloc, stream) thrust::cuda::par_nosync(alloc).on(stream)
#endif
#elif defined(RMM_DETAIL_THRUST_HIP)
#include <thrust/system/hip/execution_policy.h>
#define RMM_DETAIL_THRUST_PAR(alloc, stream) thrust::hip::par(alloc).on(stream)
#if THRUST_VERSION >= 101600
#define RMM_DETAIL_THRUST_PAR_NOSYNC(alloc, stream) thrust::hip::par_nosync(alloc).on(stream)
#endif
#else
#include <thrust/execution_policy.h>
#define RMM_DETAIL_THRUST_PAR(alloc, stream) thrust::device(alloc)
#endif
#if !defined(RMM_DETAIL_THRUST_PAR_NOSYNC)
// Without a non-synchronizing policy (old Thrust, host systems) both policies are the same.
#define RMM_DETAIL_THRUST_PAR_NOSYNC(alloc, stream) RMM_DETAIL_THRUST_PAR(alloc, stream)
#endif

namespace rmm {
RMM_API_NAMESPACE_BEGIN

namespace detail {
#if RMM_DETAIL_API_OWNING_RESOURCE_ARGS
/// @brief The resource argument of the policies: RMM 26.06 keeps the resource (owning).
using exec_policy_resource = cuda::mr::any_resource<cuda::mr::device_accessible>;
#else
/// @brief The resource argument of the policies: a reference (RMM 25.x).
using exec_policy_resource = device_async_resource_ref;
#endif
}  // namespace detail

/// @brief The Thrust policy type that exec_policy derives from.
using thrust_exec_policy_t = decltype(RMM_DETAIL_THRUST_PAR(
  std::declval<mr::thrust_allocator<char> const&>(), std::declval<detail::stream_type>()));

/// @brief The Thrust policy type that exec_policy_nosync derives from.
using thrust_exec_policy_nosync_t = decltype(RMM_DETAIL_THRUST_PAR_NOSYNC(
  std::declval<mr::thrust_allocator<char> const&>(), std::declval<detail::stream_type>()));

/**
 * @brief A Thrust execution policy that runs on a stream and takes temporary memory from an
 * rmm resource. Algorithms returning a value synchronize the stream, as Thrust's `par` does.
 */
class exec_policy : public thrust_exec_policy_t {
 public:
  /**
   * @brief Runs on @p stream, allocating temporaries from @p mr.
   * @param stream The stream
   * @param mr The resource (25.x: must outlive the policy; 26.06: the policy keeps it)
   */
  explicit exec_policy(detail::stream_arg stream       = detail::default_stream_arg(),
                       detail::exec_policy_resource mr = mr::get_current_device_resource_ref())
    : thrust_exec_policy_t(RMM_DETAIL_THRUST_PAR(mr::thrust_allocator<char>(stream, std::move(mr)),
                                                 detail::raw_stream(stream)))
  {
  }
};

/**
 * @brief Like exec_policy, but algorithms do not synchronize the stream unless they must
 * (Thrust's `par_nosync`, Thrust 1.16 and later; the same as exec_policy otherwise).
 */
class exec_policy_nosync : public thrust_exec_policy_nosync_t {
 public:
  /**
   * @brief Runs on @p stream, allocating temporaries from @p mr.
   * @param stream The stream
   * @param mr The resource (25.x: must outlive the policy; 26.06: the policy keeps it)
   */
  explicit exec_policy_nosync(
    detail::stream_arg stream       = detail::default_stream_arg(),
    detail::exec_policy_resource mr = mr::get_current_device_resource_ref())
    : thrust_exec_policy_nosync_t(RMM_DETAIL_THRUST_PAR_NOSYNC(
        mr::thrust_allocator<char>(stream, std::move(mr)), detail::raw_stream(stream)))
  {
  }
};

RMM_API_NAMESPACE_END
}  // namespace rmm

#undef RMM_DETAIL_THRUST_PAR
#undef RMM_DETAIL_THRUST_PAR_NOSYNC
#endif
