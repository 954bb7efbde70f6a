/**
 * @file device_vector.hpp
 * @brief `rmm::device_vector`: a Thrust device vector allocating through rmm.
 *
 * Available only when Thrust (rocThrust on AMD) can be used by this compiler (see
 * rmm/detail/thrust.hpp); otherwise this header defines nothing.
 */
#pragma once

#include <rmm/mr/device/thrust_allocator_adaptor.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/detail/thrust_namespace.h>

#if defined(RMM_DETAIL_HAVE_THRUST)
#include <thrust/device_vector.h>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
/**
 * @brief A `thrust::device_vector` whose memory comes from rmm's current device resource.
 * @tparam T Element type
 */
template <typename T>
using device_vector = thrust::device_vector<T, rmm::mr::thrust_allocator<T>>;
RMM_API_NAMESPACE_END
}  // namespace rmm
#endif
