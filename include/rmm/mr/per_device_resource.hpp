/**
 * @file per_device_resource.hpp
 * @brief The current device memory resource of each device (RMM's per-device resource map).
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>
#include <rmm/detail/runtime_shutdown.hpp>

#if RMM_API_GENERATION >= 2606
#include <rmm/detail/gen_26_06/mr/per_device_resource.hpp>
#else
#include <rmm/detail/gen_25_02/mr/device/per_device_resource.hpp>
#endif
