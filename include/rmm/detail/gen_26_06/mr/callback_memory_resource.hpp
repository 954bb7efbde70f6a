/**
 * @file detail/gen_26_06/mr/callback_memory_resource.hpp
 * @brief RMM 26.06's `rmm::mr::callback_memory_resource`: allocation by user functions,
 * through librmm's callback resource.
 */
#pragma once

#include <rmm/detail/export.hpp>

// RMM 26.06 and later only: the header checks compile every header in 25.x units too.
#if RMM_API_GENERATION >= 2606

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/stream_arg.hpp>
#include <rmm/detail/gen_26_06/mr/detail/resource_bases.hpp>
#include <rmm/mr/detail/callback_types.hpp>
#include <rmm/resource_ref.hpp>

#include <cuda/memory_resource>

#include <cstddef>
#include <functional>
#include <memory>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

namespace detail {

/**
 * @brief The callbacks and their arguments, owned by librmm's callback resource (destroyed
 * with its last handle).
 */
struct callback_functions {
  allocate_callback_t allocate;      ///< The allocate callback
  deallocate_callback_t deallocate;  ///< The deallocate callback
  void* allocate_arg;                ///< Its argument
  void* deallocate_arg;              ///< Its argument

  /// @brief Vtable allocate entry.
  static std::uint32_t do_allocate(void* ctx,
                                   std::size_t bytes,
                                   rmm_stream_t stream,
                                   void** out) noexcept
  {
    auto* self = static_cast<callback_functions*>(ctx);
    return translate_exceptions([&] {
      *out = self->allocate(
        bytes, rmm::detail::stream_arg{reinterpret_cast<cudaStream_t>(stream)}, self->allocate_arg);
    });
  }

  /// @brief Vtable deallocate entry.
  static std::uint32_t do_deallocate(void* ctx,
                                     void* ptr,
                                     std::size_t bytes,
                                     rmm_stream_t stream) noexcept
  {
    auto* self = static_cast<callback_functions*>(ctx);
    return translate_exceptions([&] {
      self->deallocate(ptr,
                       bytes,
                       rmm::detail::stream_arg{reinterpret_cast<cudaStream_t>(stream)},
                       self->deallocate_arg);
    });
  }

  /// @brief Vtable destroy entry.
  static void destroy(void* ctx) noexcept { delete static_cast<callback_functions*>(ctx); }
};

/**
 * @brief The shared state of a callback_memory_resource.
 */
class callback_memory_resource_impl final : public handle_base {
 public:
  /**
   * @brief Creates librmm's callback resource over the callbacks.
   * @param allocate_callback Allocates
   * @param deallocate_callback Frees
   * @param allocate_callback_arg Passed to @p allocate_callback
   * @param deallocate_callback_arg Passed to @p deallocate_callback
   */
  callback_memory_resource_impl(allocate_callback_t allocate_callback,
                                deallocate_callback_t deallocate_callback,
                                void* allocate_callback_arg,
                                void* deallocate_callback_arg)
    : callback_memory_resource_impl{
        std::make_unique<callback_functions>(callback_functions{std::move(allocate_callback),
                                                                std::move(deallocate_callback),
                                                                allocate_callback_arg,
                                                                deallocate_callback_arg})}
  {
  }

  callback_memory_resource_impl(callback_memory_resource_impl const&)            = delete;
  callback_memory_resource_impl& operator=(callback_memory_resource_impl const&) = delete;

  // The callbacks are called here directly, as RMM's resource does: whatever they return
  // (NULL too) is the allocation, and every free reaches the deallocate callback. librmm's
  // handle (which calls them through the vtable) serves as an upstream and in the registry.

  /// @brief Calls the allocate callback with @p bytes and @p stream.
  void* allocate(cuda::stream_ref stream,
                 std::size_t bytes,
                 [[maybe_unused]] std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT)
  {
    return functions_->allocate(bytes, view(stream), functions_->allocate_arg);
  }

  /// @brief Calls the deallocate callback with @p ptr, @p bytes and @p stream.
  void deallocate(cuda::stream_ref stream,
                  void* ptr,
                  std::size_t bytes,
                  [[maybe_unused]] std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept
  {
    functions_->deallocate(ptr, bytes, view(stream), functions_->deallocate_arg);
  }

  /// @brief Calls the allocate callback on the default stream.
  void* allocate_sync(std::size_t bytes,
                      [[maybe_unused]] std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT)
  {
    return functions_->allocate(bytes, rmm::detail::default_stream_arg(), functions_->allocate_arg);
  }

  /// @brief Calls the deallocate callback on the default stream.
  void deallocate_sync(
    void* ptr,
    std::size_t bytes,
    [[maybe_unused]] std::size_t alignment = rmm::CUDA_ALLOCATION_ALIGNMENT) noexcept
  {
    functions_->deallocate(
      ptr, bytes, rmm::detail::default_stream_arg(), functions_->deallocate_arg);
  }

 private:
  explicit callback_memory_resource_impl(std::unique_ptr<callback_functions> functions)
    : handle_base{adopt_handle, create(functions)}, functions_{functions.release()}
  {
  }

  static rmm::detail::stream_arg view(cuda::stream_ref stream) noexcept
  {
    return rmm::detail::stream_arg{stream.get()};
  }

  // Creates the handle over *functions; the handle owns them once this returns (the caller
  // releases the unique_ptr), and frees them even when the creation fails.
  static rmm_resource_t create(std::unique_ptr<callback_functions>& functions)
  {
    RMM_EXPECTS(static_cast<bool>(functions->allocate) && static_cast<bool>(functions->deallocate),
                "callback_memory_resource: empty allocate or deallocate callback; pass both");
    rmm_callback_vtable vtable{};
    vtable.allocate   = &callback_functions::do_allocate;
    vtable.deallocate = &callback_functions::do_deallocate;
    vtable.destroy    = &callback_functions::destroy;
    auto* raw         = functions.get();
    (void)functions.release();
    rmm_resource_t handle = make_handle(rmm_callback_create_with_vtable,
                                        static_cast<rmm_callback_vtable const*>(&vtable),
                                        static_cast<void*>(raw));
    functions.reset(raw);  // released again by the caller: the handle owns *raw
    return handle;
  }

  callback_functions* functions_;  ///< Owned by the handle (freed by its destroy entry)
};

}  // namespace detail

/**
 * @brief Allocates and frees through user functions (with an argument each). Copies share
 * the resource.
 */
class RMM_EXPORT callback_memory_resource
  : public detail::shared_copies<detail::callback_memory_resource_impl> {
 public:
  /// @brief Device-accessible memory (as the callbacks promise).
  friend void get_property(callback_memory_resource const&, cuda::mr::device_accessible) noexcept {}

  /**
   * @brief Creates the resource.
   * @param allocate_callback Allocates
   * @param deallocate_callback Frees
   * @param allocate_callback_arg Passed to @p allocate_callback
   * @param deallocate_callback_arg Passed to @p deallocate_callback
   * @throws rmm::logic_error for an empty callback
   */
  callback_memory_resource(allocate_callback_t allocate_callback,
                           deallocate_callback_t deallocate_callback,
                           void* allocate_callback_arg   = nullptr,
                           void* deallocate_callback_arg = nullptr)
    : shared_copies{std::in_place,
                    std::move(allocate_callback),
                    std::move(deallocate_callback),
                    allocate_callback_arg,
                    deallocate_callback_arg}
  {
  }

  callback_memory_resource() = delete;
};

static_assert(cuda::mr::resource_with<callback_memory_resource, cuda::mr::device_accessible>);

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm

#include <rmm/detail/gen_26_06/mr/detail/known_resources.hpp>

#endif  // RMM_API_GENERATION
