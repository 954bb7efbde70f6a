/**
 * @file pinned_host_memory_resource.hpp
 * @brief Pinned (page-locked) host memory resource, accessible from host and device.
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606
#include <rmm/detail/gen_26_06/mr/pinned_host_memory_resource.hpp>
#else
#include <rmm/detail/gen_25_02/mr/pinned_host_memory_resource.hpp>
#endif
