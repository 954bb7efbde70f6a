/**
 * @file owning_wrapper.hpp
 * @brief A resource that owns its upstream resources (`owning_wrapper`, `make_owning_wrapper`).
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606
#error \
  "rmm/mr/device/owning_wrapper.hpp: rmm::mr::owning_wrapper does not exist in RMM 26.06 (resources are cuda::mr::shared_resource classes taken as cuda::mr::any_resource); compile this file for RMM 25.x with -DRMM_API_VERSION=2510 (or find_package(rmm 25.10))"
#else
#include <rmm/detail/gen_25_02/mr/device/owning_wrapper.hpp>
#endif
