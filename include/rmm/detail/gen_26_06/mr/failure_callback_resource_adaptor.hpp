/**
 * @file detail/gen_26_06/mr/failure_callback_resource_adaptor.hpp
 * @brief RMM 26.06's `rmm::mr::failure_callback_resource_adaptor<ExceptionType>`: a callback
 * decides whether a failed allocation is retried, through librmm's failure_callback adaptor.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/aligned.hpp>
#include <rmm/detail/stream_arg.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/error.hpp>
#include <rmm/detail/gen_26_06/mr/detail/resource_bases.hpp>
#include <rmm/mr/failure_callback_t.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief The callback and its argument, at a stable address librmm calls back with.
 */
struct failure_callback_state {
  failure_callback_t callback;  ///< The user's callback
  void* arg;                    ///< Its argument

  /// @brief `rmm_failure_callback_t`: never unwinds (an exception means "do not retry").
  static bool call(std::size_t bytes, void* self) noexcept
  {
    auto* state = static_cast<failure_callback_state*>(self);
    try {
      return state->callback(bytes, state->arg);
    } catch (...) {
      return false;
    }
  }
};

/**
 * @brief The shared state of a failure_callback_resource_adaptor.
 * @tparam ExceptionType The failures retried: rmm::out_of_memory, or a base of it
 * (rmm::bad_alloc, std::bad_alloc, ...) to retry every failed allocation
 */
template <typename ExceptionType>
class failure_callback_resource_adaptor_impl final
  : private std::unique_ptr<failure_callback_state>,
    public adaptor_impl_base {
  static_assert(std::is_base_of_v<ExceptionType, rmm::out_of_memory>,
                "failure_callback_resource_adaptor: ExceptionType must be rmm::out_of_memory or "
                "one of its bases (rmm::bad_alloc, std::bad_alloc, std::exception): librmm "
                "reports allocation failures with those");
  using state_ptr = std::unique_ptr<failure_callback_state>;

 public:
  /**
   * @brief Creates the adaptor over @p upstream.
   * @param upstream The upstream
   * @param callback Decides whether to retry
   * @param callback_arg Passed to @p callback
   */
  failure_callback_resource_adaptor_impl(any_device_resource upstream,
                                         failure_callback_t callback,
                                         void* callback_arg)
    : state_ptr{std::make_unique<failure_callback_state>(
        failure_callback_state{std::move(callback), callback_arg})},
      adaptor_impl_base{std::move(upstream),
                        "failure_callback_resource_adaptor(upstream, ...)",
                        [&](rmm_resource_t up) {
                          RMM_EXPECTS(static_cast<bool>(state_ptr::get()->callback),
                                      "failure_callback_resource_adaptor: empty callback; pass a "
                                      "function returning whether to retry");
                          constexpr std::uint32_t flags =
                            std::is_same_v<ExceptionType, rmm::out_of_memory>
                              ? 0U
                              : RMM_FAILURE_CALLBACK_RETRY_BAD_ALLOC;
                          return make_handle(rmm_failure_callback_adaptor_create_ex,
                                             up,
                                             &failure_callback_state::call,
                                             static_cast<void*>(state_ptr::get()),
                                             flags);
                        }}
  {
  }

  /**
   * @brief Allocates from the upstream with an alignment the C ABI does not carry, retrying
   * while the callback asks to (RMM 26.08 passes the caller's alignment upstream).
   * @param stream The stream
   * @param bytes The size
   * @param alignment The alignment (beyond 256 bytes)
   * @return The memory
   */
  void* allocate_aligned(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment)
  {
    auto upstream = get_upstream_resource();
    while (true) {
      try {
        return upstream.allocate(stream, bytes, alignment);
      } catch (ExceptionType const&) {
        if (!state_ptr::get()->callback(bytes, state_ptr::get()->arg)) { throw; }
      }
    }
  }
};

}  // namespace detail

/**
 * @brief Calls a callback when an allocation fails with @p ExceptionType; retries while the
 * callback returns true, else the failure goes through. Copies share the adaptor.
 * @tparam ExceptionType The failure retried (rmm::out_of_memory by default)
 */
template <typename ExceptionType = rmm::out_of_memory>
class failure_callback_resource_adaptor
  : public detail::shared_adaptor<detail::failure_callback_resource_adaptor_impl<ExceptionType>> {
 public:
  using exception_type = ExceptionType;  ///< The failure this adaptor retries

  /**
   * @brief Creates the adaptor.
   * @param upstream The upstream
   * @param callback Called with the size and @p callback_arg; returns whether to retry
   * @param callback_arg Passed to @p callback
   * @throws rmm::logic_error for an empty upstream or callback
   */
  failure_callback_resource_adaptor(cuda::mr::any_resource<cuda::mr::device_accessible> upstream,
                                    failure_callback_t callback,
                                    void* callback_arg)
    : base{std::in_place, std::move(upstream), std::move(callback), callback_arg}
  {
  }

#if RMM_DETAIL_API_FAILURE_CALLBACK_ALIGNMENT
  /**
   * @brief Allocates @p bytes aligned to @p alignment in stream order, calling the callback
   * on failure and retrying while it returns true.
   * @param stream The stream
   * @param bytes The size
   * @param alignment Passed to the upstream
   * @return The memory
   */
  void* allocate(cuda::stream_ref stream,
                 std::size_t bytes,
                 std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT)
  {
    if (alignment <= rmm::CUDA_ALLOCATION_ALIGNMENT) {
      return base::allocate(stream, bytes, alignment);
    }
    return this->get().allocate_aligned(stream, bytes, alignment);
  }

  /**
   * @brief Frees @p ptr in stream order, to where allocate() took it from.
   * @param stream The stream
   * @param ptr The memory
   * @param bytes Its size
   * @param alignment Its alignment
   */
  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept
  {
    if (alignment <= rmm::CUDA_ALLOCATION_ALIGNMENT) {
      base::deallocate(stream, ptr, bytes, alignment);
    } else {
      this->get_upstream_resource().deallocate(stream, ptr, bytes, alignment);
    }
  }

  /**
   * @brief Allocates on the default stream and waits for it.
   * @param bytes The size
   * @param alignment Passed to the upstream
   * @return The memory
   */
  void* allocate_sync(std::size_t bytes, std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT)
  {
    auto const stream = rmm::detail::default_stream_arg();
    void* ptr         = allocate(stream, bytes, alignment);
    rmm::detail::synchronize_arg(stream);
    return ptr;
  }

  /**
   * @brief Frees on the default stream and waits for it.
   * @param ptr The memory
   * @param bytes Its size
   * @param alignment Its alignment
   */
  void deallocate_sync(void* ptr,
                       std::size_t bytes,
                       std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept
  {
    auto const stream = rmm::detail::default_stream_arg();
    deallocate(stream, ptr, bytes, alignment);
    rmm::detail::synchronize_arg_no_throw(stream);
  }
#endif

 private:
  using base =
    detail::shared_adaptor<detail::failure_callback_resource_adaptor_impl<ExceptionType>>;
};

static_assert(
  cuda::mr::resource_with<failure_callback_resource_adaptor<>, cuda::mr::device_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
