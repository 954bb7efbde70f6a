/**
 * @file detail/export.hpp
 * @brief Symbol visibility macros (RMM's `rmm/detail/export.hpp`).
 *
 * `RMM_EXPORT` gives a declaration default visibility and `RMM_HIDDEN` hidden visibility on
 * compilers with GCC-style attributes (ELF platforms); elsewhere both are empty.
 * `RMM_NAMESPACE` names the `rmm` namespace with default visibility, so code may write
 * `namespace RMM_NAMESPACE { ... }` to (re)open `rmm`, even when compiled with
 * `-fvisibility=hidden`.
 */
#pragma once

#include <rmm/version_config.hpp>

#if defined(__GNUC__) && !defined(__MINGW32__) && !defined(__MINGW64__)
/// @brief Default (exported) symbol visibility.
#define RMM_EXPORT __attribute__((visibility("default")))
/// @brief Hidden symbol visibility.
#define RMM_HIDDEN __attribute__((visibility("hidden")))
/// @brief The `rmm` namespace, with default visibility: `namespace RMM_NAMESPACE { ... }`.
#define RMM_NAMESPACE RMM_EXPORT rmm
#else
#define RMM_EXPORT
#define RMM_HIDDEN
#define RMM_NAMESPACE rmm
#endif

#if !defined(RMM_CONSTEXPR_FRIEND)
/// @brief `constexpr friend` (RMM's spelling for hidden-friend property queries such as
/// `get_property`; documentation builds that define DOXYGEN get plain `friend`).
#if defined(DOXYGEN)
#define RMM_CONSTEXPR_FRIEND friend
#else
#define RMM_CONSTEXPR_FRIEND constexpr friend
#endif
#endif
