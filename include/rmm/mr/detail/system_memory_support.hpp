/**
 * @file mr/detail/system_memory_support.hpp
 * @brief Whether a device can use system-allocated memory: what every generation's
 * system_memory_resource and sam_headroom_memory_resource need.
 */
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/rmm.h>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief Whether @p device_id can access system-allocated (pageable host) memory, through HMM
 * or ATS.
 * @param device_id The device to ask about
 * @return true when supported
 * @throws rmm::cuda_error when the runtime fails to answer (e.g. no such device)
 */
inline bool is_system_memory_supported(cuda_device_id device_id)
{
  bool supported = false;
  rmm::detail::check(rmm_device_supports_pageable_memory(device_id.value(), &supported));
  return supported;
}

}  // namespace detail
}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
