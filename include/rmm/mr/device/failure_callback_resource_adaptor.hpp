/**
 * @file failure_callback_resource_adaptor.hpp
 * @brief Calls a callback on out-of-memory and retries while it says so (implemented by the
 * Rust core).
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606
#include <rmm/detail/gen_26_06/mr/failure_callback_resource_adaptor.hpp>
#else
#include <rmm/detail/gen_25_02/mr/device/failure_callback_resource_adaptor.hpp>
#endif
