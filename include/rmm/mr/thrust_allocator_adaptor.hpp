/**
 * @file thrust_allocator_adaptor.hpp
 * @brief Thrust allocator over a device memory resource and a stream (RMM's
 * `rmm::mr::thrust_allocator`).
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606
#include <rmm/detail/gen_26_06/mr/thrust_allocator_adaptor.hpp>
#else
#include <rmm/detail/gen_25_02/mr/device/thrust_allocator_adaptor.hpp>
#endif
