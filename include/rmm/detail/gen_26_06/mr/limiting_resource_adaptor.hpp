/**
 * @file detail/gen_26_06/mr/limiting_resource_adaptor.hpp
 * @brief RMM 26.06's `rmm::mr::limiting_resource_adaptor`: caps the bytes outstanding from its
 * upstream, through librmm's limiting adaptor.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/aligned.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/gen_26_06/mr/detail/resource_bases.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>

#include <cstddef>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief The shared state of a limiting_resource_adaptor: librmm's limiting adaptor over the
 * upstream.
 */
class limiting_resource_adaptor_impl final : public adaptor_impl_base {
 public:
  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream The upstream
   * @param allocation_limit Bytes allowed outstanding
   * @param alignment Each request is counted rounded up to it
   */
  limiting_resource_adaptor_impl(any_device_resource upstream,
                                 std::size_t allocation_limit,
                                 std::size_t alignment)
    : adaptor_impl_base{
        std::move(upstream), "limiting_resource_adaptor(upstream, ...)", [&](rmm_resource_t up) {
          return make_handle(rmm_limiting_adaptor_create, up, allocation_limit, alignment);
        }}
  {
  }

  /**
   * @brief Bytes outstanding (each rounded up to the alignment).
   * @return The bytes
   */
  [[nodiscard]] std::size_t get_allocated_bytes() const
  {
    std::size_t bytes = 0;
    rmm::detail::check(rmm_limiting_adaptor_get_allocated_bytes(handle(), &bytes));
    return bytes;
  }

  /**
   * @brief The limit.
   * @return The bytes
   */
  [[nodiscard]] std::size_t get_allocation_limit() const
  {
    std::size_t limit = 0;
    rmm::detail::check(rmm_limiting_adaptor_get_allocation_limit(handle(), &limit));
    return limit;
  }
};

}  // namespace detail

/**
 * @brief Fails allocations (rmm::out_of_memory) that would take the bytes outstanding past a limit.
 * Copies share one adaptor.
 */
class RMM_EXPORT limiting_resource_adaptor
  : public detail::shared_adaptor<detail::limiting_resource_adaptor_impl> {
 public:
  /**
   * @brief Creates the adaptor.
   * @param upstream The upstream
   * @param allocation_limit Bytes allowed outstanding
   * @param alignment Each request is counted rounded up to it (a power of two)
   * @throws rmm::logic_error for a bad alignment, an empty upstream
   */
  limiting_resource_adaptor(cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
                            std::size_t allocation_limit,
                            std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT)
    : shared_adaptor{std::in_place, std::move(upstream), allocation_limit, alignment}
  {
  }

  /**
   * @brief Bytes outstanding (each rounded up to the alignment).
   * @return The bytes
   */
  [[nodiscard]] std::size_t get_allocated_bytes() const { return get().get_allocated_bytes(); }

  /**
   * @brief The limit.
   * @return The bytes
   */
  [[nodiscard]] std::size_t get_allocation_limit() const { return get().get_allocation_limit(); }
};

static_assert(cuda::mr::resource_with<limiting_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
