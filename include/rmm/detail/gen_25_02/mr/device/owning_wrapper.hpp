/**
 * @file detail/gen_25_02/mr/device/owning_wrapper.hpp
 * @brief A resource that owns its upstream resources (`owning_wrapper`, `make_owning_wrapper`).
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/detail/export.hpp>

#include <cstddef>
#include <memory>
#include <tuple>
#include <utility>
#include <functional>
#include <iostream>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {
namespace detail {

/**
 * @brief Builds a @p Resource from the raw pointers of @p upstreams followed by @p args.
 */
template <typename Resource, typename UpstreamTuple, std::size_t... Indices, typename... Args>
std::unique_ptr<Resource> make_resource_impl(UpstreamTuple const& upstreams,
                                             std::index_sequence<Indices...>,
                                             Args&&... args)
{
  return std::make_unique<Resource>(std::get<Indices>(upstreams).get()...,
                                    std::forward<Args>(args)...);
}

/**
 * @brief Builds a @p Resource over the upstreams of the tuple.
 */
template <typename Resource, typename... Upstreams, typename... Args>
std::unique_ptr<Resource> make_resource(std::tuple<std::shared_ptr<Upstreams>...> const& upstreams,
                                        Args&&... args)
{
  return make_resource_impl<Resource>(
    upstreams, std::index_sequence_for<Upstreams...>{}, std::forward<Args>(args)...);
}

}  // namespace detail

/**
 * @brief A resource that owns its upstream resources (shared) and the resource built on
 * them, so the whole stack lives as long as the wrapper. Allocation forwards to the wrapped
 * resource.
 *
 * @tparam Resource The wrapped resource type, constructed from the upstream pointers (in
 * order) followed by further arguments
 * @tparam Upstreams The upstream types
 */
template <typename Resource, typename... Upstreams>
class owning_wrapper : public device_memory_resource {
 public:
  /// @brief Shared owners of the upstreams.
  using upstream_tuple = std::tuple<std::shared_ptr<Upstreams>...>;

  /**
   * @brief Builds the wrapped resource from the upstreams and @p args.
   * @param upstreams The upstreams (shared ownership is taken)
   * @param args Further constructor arguments of @p Resource
   */
  template <typename... Args>
  explicit owning_wrapper(upstream_tuple upstreams, Args&&... args)
    : upstreams_{std::move(upstreams)},
      wrapped_{detail::make_resource<Resource>(upstreams_, std::forward<Args>(args)...)}
  {
  }

  /**
   * @brief The wrapped resource.
   * @return It
   */
  [[nodiscard]] Resource const& wrapped() const noexcept { return *wrapped_; }

  /**
   * @brief The wrapped resource.
   * @return It
   */
  [[nodiscard]] Resource& wrapped() noexcept { return *wrapped_; }

  /**
   * @brief The owned upstreams (beyond hipMM).
   * @return The tuple of shared owners
   */
  [[nodiscard]] upstream_tuple const& upstreams() const noexcept { return upstreams_; }

  /**
   * @brief The first owned upstream (beyond hipMM).
   * @return Its shared owner
   */
  [[nodiscard]] auto const& upstream() const noexcept { return std::get<0>(upstreams_); }

  /// @brief Whether the wrapped resource orders its work on streams.
  /// @return As the wrapped resource says
  [[nodiscard]] bool supports_streams() const noexcept override
  {
    return wrapped_->supports_streams();
  }

 private:
  void* do_allocate(std::size_t bytes, cuda_stream_view stream) override
  {
    return wrapped_->allocate(bytes, stream);
  }

  void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) override
  {
    wrapped_->deallocate(ptr, bytes, stream);
  }

  [[nodiscard]] bool do_is_equal(device_memory_resource const& other) const noexcept override
  {
    if (this == &other) { return true; }
    if (auto const* o = dynamic_cast<owning_wrapper const*>(&other); o != nullptr) {
      return wrapped().is_equal(o->wrapped());
    }
    return wrapped().is_equal(other);
  }

  upstream_tuple upstreams_;
  std::unique_ptr<Resource> wrapped_;
};

/**
 * @brief Makes an owning_wrapper of `Resource<Upstreams...>` over @p upstreams.
 * @tparam Resource The resource template, e.g. pool_memory_resource
 * @param upstreams The upstreams
 * @param args Further constructor arguments
 * @return The wrapper
 */
template <template <typename...> class Resource, typename... Upstreams, typename... Args>
auto make_owning_wrapper(std::tuple<std::shared_ptr<Upstreams>...> upstreams, Args&&... args)
{
  return std::make_shared<owning_wrapper<Resource<Upstreams...>, Upstreams...>>(
    std::move(upstreams), std::forward<Args>(args)...);
}

/**
 * @brief Makes an owning_wrapper of `Resource<Upstream>` over one @p upstream.
 * @tparam Resource The resource template, e.g. pool_memory_resource
 * @param upstream The upstream
 * @param args Further constructor arguments
 * @return The wrapper
 */
template <template <typename...> class Resource, typename Upstream, typename... Args>
auto make_owning_wrapper(std::shared_ptr<Upstream> upstream, Args&&... args)
{
  return make_owning_wrapper<Resource>(std::make_tuple(std::move(upstream)),
                                       std::forward<Args>(args)...);
}

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
