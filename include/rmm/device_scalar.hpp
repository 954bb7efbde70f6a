/**
 * @file device_scalar.hpp
 * @brief A single typed value in device memory (RMM's `rmm::device_scalar`).
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606
#include <rmm/detail/gen_26_06/device_scalar.hpp>
#else
#include <rmm/detail/gen_25_02/device_scalar.hpp>
#endif
