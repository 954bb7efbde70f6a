/**
 * @file device_buffer.hpp
 * @brief Untyped, uninitialized, stream-ordered device memory (RMM's `rmm::device_buffer`).
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606
#include <rmm/detail/gen_26_06/device_buffer.hpp>
#else
#include <rmm/detail/gen_25_02/device_buffer.hpp>
#endif
