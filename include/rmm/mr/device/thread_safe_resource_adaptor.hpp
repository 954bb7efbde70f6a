/**
 * @file thread_safe_resource_adaptor.hpp
 * @brief Serializes every call to the upstream with one mutex (implemented by the Rust core).
 *
 * Each API generation has its own implementation; this header picks the translation unit's
 * (rmm/version_config.hpp).
 */
#pragma once

#include <rmm/detail/export.hpp>

#if RMM_API_GENERATION >= 2606
#include <rmm/detail/gen_26_06/mr/thread_safe_resource_adaptor.hpp>
#else
#include <rmm/detail/gen_25_02/mr/device/thread_safe_resource_adaptor.hpp>
#endif
