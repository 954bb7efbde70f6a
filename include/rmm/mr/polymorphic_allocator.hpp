/**
 * @file polymorphic_allocator.hpp
 * @brief Stream-ordered allocator over a device resource, and its adaptor to the standard
 * Allocator interface (RMM's `rmm/mr/device/polymorphic_allocator.hpp`).
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606
#include <rmm/detail/gen_26_06/mr/polymorphic_allocator.hpp>
#else
#include <rmm/detail/gen_25_02/mr/device/polymorphic_allocator.hpp>
#endif
