/**
 * @file exec_policy.hpp
 * @brief `rmm::exec_policy`: a Thrust execution policy whose temporary memory comes from rmm.
 *
 * Available only when Thrust (rocThrust on AMD) headers for the CUDA or HIP device system can
 * be included; otherwise this header defines nothing.
 */
#pragma once

#include <rmm/mr/device/thrust_allocator_adaptor.hpp>

#if defined(RMM_DETAIL_HAVE_THRUST) && __has_include(<thrust/system/hip/execution_policy.h>) && \
  defined(__HIP_PLATFORM_AMD__)
#include <thrust/system/hip/execution_policy.h>
#define RMM_DETAIL_THRUST_PAR thrust::hip::par
#elif defined(RMM_DETAIL_HAVE_THRUST) && __has_include(<thrust/system/cuda/execution_policy.h>)
#include <thrust/system/cuda/execution_policy.h>
#define RMM_DETAIL_THRUST_PAR thrust::cuda::par
#endif

#if defined(RMM_DETAIL_THRUST_PAR)
#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device/per_device_resource.hpp>

#include <cstddef>
#include <utility>

namespace rmm {

/// @brief The Thrust policy type that exec_policy derives from.
using thrust_exec_policy_t =
  decltype(RMM_DETAIL_THRUST_PAR(std::declval<mr::thrust_allocator<char>&>())
             .on(std::declval<detail::stream_type>()));

/**
 * @brief A Thrust execution policy that runs on a stream and takes temporary memory from an
 * rmm resource.
 */
class exec_policy : public thrust_exec_policy_t {
 public:
  /**
   * @brief Runs on @p stream, allocating temporaries from @p mr.
   * @param stream The stream
   * @param mr The resource (must outlive the policy)
   */
  explicit exec_policy(cuda_stream_view stream             = cuda_stream_view{},
                       mr::device_memory_resource* mr = mr::get_current_device_resource())
    : thrust_exec_policy_t(
        RMM_DETAIL_THRUST_PAR(mr::thrust_allocator<char>(stream, mr)).on(stream.value()))
  {
  }
};

}  // namespace rmm
#endif
