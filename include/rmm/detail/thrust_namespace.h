/**
 * @file detail/thrust_namespace.h
 * @brief Makes Thrust's namespace macros available and, when Thrust is wrapped in an outer
 * namespace (`THRUST_WRAPPED_NAMESPACE`), imports that namespace into `rmm` so that
 * `thrust::` written inside `rmm` names the wrapped Thrust (RMM's
 * `rmm/detail/thrust_namespace.h`).
 *
 * Thrust is optional for rmm-rs: when its headers are absent, only `THRUST_NS_QUALIFIER`
 * (`::thrust`, Thrust's own default) is defined.
 */
#pragma once

#if defined(__has_include)
#if __has_include(<thrust/detail/config.h>)
#include <thrust/detail/config.h>
#define RMM_DETAIL_THRUST_CONFIG_INCLUDED 1
#endif
#endif

#if defined(RMM_DETAIL_THRUST_CONFIG_INCLUDED) && defined(THRUST_WRAPPED_NAMESPACE)
// Declare the wrapped namespace first, so this header may precede Thrust's own headers.
namespace THRUST_WRAPPED_NAMESPACE {
namespace thrust {
}
}  // namespace THRUST_WRAPPED_NAMESPACE

namespace rmm {
using namespace THRUST_WRAPPED_NAMESPACE;
}  // namespace rmm
#endif

#ifndef THRUST_NS_QUALIFIER
/// @brief Qualified name of Thrust's namespace (Thrust's default, when Thrust is absent).
#define THRUST_NS_QUALIFIER ::thrust
#endif
