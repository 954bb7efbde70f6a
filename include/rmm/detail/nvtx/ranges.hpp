/**
 * @file detail/nvtx/ranges.hpp
 * @brief NVTX ranges in the "librmm" domain (RMM's `rmm/detail/nvtx/ranges.hpp`):
 * `rmm::librmm_domain`, `rmm::scoped_range` and `RMM_FUNC_RANGE()`.
 *
 * NVTX is optional for rmm-rs. When the NVTX v3 headers (`<nvtx3/nvtx3.hpp>`, shipped with the
 * CUDA toolkit) are found, `rmm::scoped_range` is NVTX's `nvtx3::scoped_range_in<librmm_domain>`
 * and `RMM_FUNC_RANGE()` opens a real range when `RMM_NVTX` is defined, as in RMM. Without
 * them (or with `RMM_DISABLE_NVTX` defined), `scoped_range` accepts the same arguments and does
 * nothing, and `RMM_FUNC_RANGE()` expands to nothing.
 */
#pragma once

#include <rmm/detail/export.hpp>

#if !defined(RMM_DISABLE_NVTX) && defined(__has_include)
#if __has_include(<nvtx3/nvtx3.hpp>)
#include <nvtx3/nvtx3.hpp>
/// @brief Defined to 1 when rmm's NVTX ranges are NVTX's own.
#define RMM_HAS_NVTX3 1
#endif
#endif

namespace rmm {
RMM_API_NAMESPACE_BEGIN

/**
 * @brief The NVTX domain of rmm's ranges ("librmm").
 */
struct librmm_domain {
  static constexpr char const* name{"librmm"};  ///< Name of the domain
};

#if defined(RMM_HAS_NVTX3)
/**
 * @brief An NVTX range in the librmm domain for the lifetime of the object.
 */
using scoped_range = ::nvtx3::scoped_range_in<librmm_domain>;
#else
/**
 * @brief Stand-in for NVTX's scoped range when NVTX is not available: constructible from
 * the same arguments (a message, event attributes, ...), it records nothing.
 */
class scoped_range {
 public:
  /// @brief An unnamed range.
  scoped_range() noexcept = default;

  /**
   * @brief A range described by @p args (ignored).
   * @param args Message, color, category or event attributes
   */
  template <typename First, typename... Rest>
  explicit scoped_range(First&&, Rest&&...) noexcept
  {
  }

  ~scoped_range() = default;

  scoped_range(scoped_range const&)            = delete;
  scoped_range& operator=(scoped_range const&) = delete;
  scoped_range(scoped_range&&)                 = delete;
  scoped_range& operator=(scoped_range&&)      = delete;
};
#endif

RMM_API_NAMESPACE_END
}  // namespace rmm

#if defined(RMM_NVTX) && defined(RMM_HAS_NVTX3)
/**
 * @brief Opens an NVTX range in the librmm domain, named after the enclosing function, until
 * the end of the scope (only with `RMM_NVTX` defined and NVTX available; otherwise nothing).
 */
#define RMM_FUNC_RANGE() NVTX3_FUNC_RANGE_IN(rmm::librmm_domain)
#else
#define RMM_FUNC_RANGE()
#endif
