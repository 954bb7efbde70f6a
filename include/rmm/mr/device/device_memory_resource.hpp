/**
 * @file device_memory_resource.hpp
 * @brief The virtual base class of device memory resources (RMM's `device_memory_resource`).
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606
#error \
  "rmm/mr/device/device_memory_resource.hpp: rmm::mr::device_memory_resource does not exist in RMM 26.06 (resources are cuda::mr::shared_resource classes taken as cuda::mr::any_resource); compile this file for RMM 25.x with -DRMM_API_VERSION=2510 (or find_package(rmm 25.10))"
#else
#include <rmm/detail/gen_25_02/mr/device/device_memory_resource.hpp>
#endif
