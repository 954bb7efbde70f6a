/**
 * @file sam_headroom_memory_resource.hpp
 * @brief System-allocated memory placed on the device while it keeps a headroom free.
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606
#include <rmm/detail/gen_26_06/mr/sam_headroom_memory_resource.hpp>
#else
#include <rmm/detail/gen_25_02/mr/device/sam_headroom_memory_resource.hpp>
#endif
