/**
 * @file device_uvector.hpp
 * @brief Typed, uninitialized, stream-ordered device array (RMM's `rmm::device_uvector`).
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606
#include <rmm/detail/gen_26_06/device_uvector.hpp>
#else
#include <rmm/detail/gen_25_02/device_uvector.hpp>
#endif
