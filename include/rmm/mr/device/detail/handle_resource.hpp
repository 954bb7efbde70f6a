/**
 * @file detail/handle_resource.hpp
 * @brief Base class of RMM 25.02's resources implemented in the Rust core (the generation's
 * own class: rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606
#error \
  "rmm/mr/device/detail/handle_resource.hpp: RMM 25.x's base of the device_memory_resource classes; compile this file for RMM 25.x (-DRMM_API_VERSION=2510)"
#else
#include <rmm/detail/gen_25_02/mr/device/detail/handle_resource.hpp>
#endif
