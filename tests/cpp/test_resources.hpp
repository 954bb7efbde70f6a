// Resources and helpers shared by the C++ test suites.
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/check.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/device/aligned_resource_adaptor.hpp>
#include <rmm/mr/device/arena_memory_resource.hpp>
#include <rmm/mr/device/binning_memory_resource.hpp>
#include <rmm/mr/device/callback_memory_resource.hpp>
#include <rmm/mr/device/cuda_async_memory_resource.hpp>
#include <rmm/mr/device/cuda_async_view_memory_resource.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/mr/device/fixed_size_memory_resource.hpp>
#include <rmm/mr/device/logging_resource_adaptor.hpp>
#include <rmm/mr/device/limiting_resource_adaptor.hpp>
#include <rmm/mr/device/managed_memory_resource.hpp>
#include <rmm/mr/device/pool_memory_resource.hpp>
#include <rmm/mr/device/statistics_resource_adaptor.hpp>
#include <rmm/mr/device/system_memory_resource.hpp>
#include <rmm/mr/device/thread_safe_resource_adaptor.hpp>
#include <rmm/mr/device/tracking_resource_adaptor.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/rmm.h>

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <random>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

namespace rmm_test {

/// A user-defined resource (the way hipMM users write them): forwards to an upstream and
/// counts what it serves.
class counting_resource final : public rmm::mr::device_memory_resource {
 public:
  explicit counting_resource(rmm::mr::device_memory_resource* upstream) : upstream_{upstream} {}

  std::atomic<std::size_t> allocations{0};
  std::atomic<std::size_t> deallocations{0};
  std::atomic<std::size_t> outstanding_bytes{0};

 private:
  void* do_allocate(std::size_t bytes, rmm::cuda_stream_view stream) override
  {
    void* ptr = upstream_->allocate(bytes, stream);
    ++allocations;
    outstanding_bytes += bytes;
    return ptr;
  }
  void do_deallocate(void* ptr, std::size_t bytes, rmm::cuda_stream_view stream) override
  {
    upstream_->deallocate(ptr, bytes, stream);
    ++deallocations;
    outstanding_bytes -= bytes;
  }
  rmm::mr::device_memory_resource* upstream_;
};

/// A user-defined resource written against the older hipMM API (RMM 23.12): it overrides
/// the since-removed virtuals, which must still exist.
class old_api_resource final : public rmm::mr::device_memory_resource {
 public:
  [[nodiscard]] bool supports_streams() const noexcept override { return true; }
  [[nodiscard]] bool supports_get_mem_info() const noexcept override { return true; }

 private:
  void* do_allocate(std::size_t bytes, rmm::cuda_stream_view stream) override
  {
    return upstream_.allocate(bytes, stream);
  }
  void do_deallocate(void* ptr, std::size_t bytes, rmm::cuda_stream_view stream) override
  {
    upstream_.deallocate(ptr, bytes, stream);
  }
  [[nodiscard]] std::pair<std::size_t, std::size_t> do_get_mem_info(
    rmm::cuda_stream_view) const override
  {
    return {1, 2};
  }
  rmm::mr::cuda_memory_resource upstream_;
};

/// A user-defined resource whose allocations always throw the exception made by `make`.
class throwing_resource final : public rmm::mr::device_memory_resource {
 public:
  explicit throwing_resource(std::function<void()> thrower) : thrower_{std::move(thrower)} {}

 private:
  void* do_allocate(std::size_t, rmm::cuda_stream_view) override
  {
    thrower_();
    return nullptr;
  }
  void do_deallocate(void*, std::size_t, rmm::cuda_stream_view) override {}
  std::function<void()> thrower_;
};

/// RMM-style C callbacks over a C ABI handle (`arg` is the rmm_resource_t upstream).
inline void* c_style_allocate(std::size_t bytes, rmm::cuda_stream_view stream, void* arg)
{
  void* ptr = nullptr;
  rmm::detail::check(rmm_allocate_async(
    static_cast<rmm_resource_t>(arg), bytes, rmm::detail::to_c_stream(stream.value()), &ptr));
  return ptr;
}
inline void c_style_deallocate(void* ptr,
                               std::size_t bytes,
                               rmm::cuda_stream_view stream,
                               void* arg)
{
  rmm::detail::check(rmm_deallocate_async(
    static_cast<rmm_resource_t>(arg), ptr, bytes, rmm::detail::to_c_stream(stream.value())));
}

/// Owns a resource together with whatever it depends on.
template <typename Holder>
std::shared_ptr<rmm::mr::device_memory_resource> share(std::shared_ptr<Holder> holder,
                                                       rmm::mr::device_memory_resource* mr)
{
  return std::shared_ptr<rmm::mr::device_memory_resource>{std::move(holder), mr};
}

inline std::shared_ptr<rmm::mr::device_memory_resource> make_cuda()
{
  return std::make_shared<rmm::mr::cuda_memory_resource>();
}
inline std::shared_ptr<rmm::mr::device_memory_resource> make_managed()
{
  return std::make_shared<rmm::mr::managed_memory_resource>();
}
inline std::shared_ptr<rmm::mr::device_memory_resource> make_pinned_host()
{
  return std::make_shared<rmm::mr::pinned_host_memory_resource>();
}
/// Null when the device cannot access pageable memory (the suite then skips).
inline std::shared_ptr<rmm::mr::device_memory_resource> make_system()
{
  try {
    return std::make_shared<rmm::mr::system_memory_resource>();
  } catch (rmm::logic_error const&) {
    return nullptr;
  }
}
inline std::shared_ptr<rmm::mr::device_memory_resource> make_callback()
{
  struct holder {
    rmm::mr::cuda_memory_resource upstream{};
    rmm::mr::callback_memory_resource mr{
      c_style_allocate, c_style_deallocate, upstream.handle(), upstream.handle()};
  };
  auto h = std::make_shared<holder>();
  return share(h, &h->mr);
}
inline std::shared_ptr<rmm::mr::device_memory_resource> make_user_subclass()
{
  struct holder {
    rmm::mr::cuda_memory_resource upstream{};
    counting_resource mr{&upstream};
  };
  auto h = std::make_shared<holder>();
  return share(h, &h->mr);
}
inline std::shared_ptr<rmm::mr::device_memory_resource> make_old_api_subclass()
{
  return std::make_shared<old_api_resource>();
}

/// A pool over a cuda_memory_resource, starting with `initial` bytes.
template <std::size_t Initial>
std::shared_ptr<rmm::mr::device_memory_resource> make_pool()
{
  struct holder {
    rmm::mr::cuda_memory_resource upstream{};
    rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource> mr{&upstream, Initial};
  };
  auto h = std::make_shared<holder>();
  return share(h, &h->mr);
}
/// A fixed_size resource of 1 MiB blocks over a cuda_memory_resource.
inline std::shared_ptr<rmm::mr::device_memory_resource> make_fixed_size()
{
  struct holder {
    rmm::mr::cuda_memory_resource upstream{};
    rmm::mr::fixed_size_memory_resource<rmm::mr::cuda_memory_resource> mr{&upstream, 1 << 20};
  };
  auto h = std::make_shared<holder>();
  return share(h, &h->mr);
}
/// A binning resource (bins 2^10..2^20) over a pool over a cuda_memory_resource.
inline std::shared_ptr<rmm::mr::device_memory_resource> make_binning()
{
  using pool_mr = rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource>;
  struct holder {
    rmm::mr::cuda_memory_resource upstream{};
    pool_mr pool{&upstream, 0};
    rmm::mr::binning_memory_resource<pool_mr> mr{&pool, 10, 20};
  };
  auto h = std::make_shared<holder>();
  return share(h, &h->mr);
}
/// An arena of 256 MiB over a cuda_memory_resource.
inline std::shared_ptr<rmm::mr::device_memory_resource> make_arena()
{
  struct holder {
    rmm::mr::cuda_memory_resource upstream{};
    rmm::mr::arena_memory_resource<rmm::mr::cuda_memory_resource> mr{&upstream,
                                                                     std::size_t{256} << 20};
  };
  auto h = std::make_shared<holder>();
  return share(h, &h->mr);
}

/// A fresh path in the temporary directory (the file is not created).
inline std::string temp_log_path(std::string const& stem)
{
  static std::atomic<unsigned> counter{0};
  std::random_device rd;
  auto name = stem + "_" + std::to_string(rd()) + "_" + std::to_string(counter++) + ".csv";
  return (std::filesystem::temp_directory_path() / name).string();
}

/// A logging_resource_adaptor over a cuda_memory_resource, writing to a temporary file
/// (removed when the resource is destroyed).
inline std::shared_ptr<rmm::mr::device_memory_resource> make_logging()
{
  struct holder {
    std::string path{temp_log_path("rmm_mr_test_log")};
    rmm::mr::cuda_memory_resource upstream{};
    rmm::mr::logging_resource_adaptor<rmm::mr::cuda_memory_resource> mr{&upstream, path};
    holder()                         = default;
    holder(holder const&)            = delete;
    holder& operator=(holder const&) = delete;
    ~holder()
    {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
  };
  auto h = std::make_shared<holder>();
  return share(h, &h->mr);
}
/// A statistics adaptor over a cuda_memory_resource.
inline std::shared_ptr<rmm::mr::device_memory_resource> make_statistics()
{
  struct holder {
    rmm::mr::cuda_memory_resource upstream{};
    rmm::mr::statistics_resource_adaptor<rmm::mr::cuda_memory_resource> mr{&upstream};
  };
  auto h = std::make_shared<holder>();
  return share(h, &h->mr);
}
/// A limiting adaptor (1 GiB) over a cuda_memory_resource.
inline std::shared_ptr<rmm::mr::device_memory_resource> make_limiting()
{
  struct holder {
    rmm::mr::cuda_memory_resource upstream{};
    rmm::mr::limiting_resource_adaptor<rmm::mr::cuda_memory_resource> mr{&upstream,
                                                                         std::size_t{1} << 30};
  };
  auto h = std::make_shared<holder>();
  return share(h, &h->mr);
}
/// An aligned adaptor (4096) over a cuda_memory_resource.
inline std::shared_ptr<rmm::mr::device_memory_resource> make_aligned()
{
  struct holder {
    rmm::mr::cuda_memory_resource upstream{};
    rmm::mr::aligned_resource_adaptor<rmm::mr::cuda_memory_resource> mr{&upstream, 4096};
  };
  auto h = std::make_shared<holder>();
  return share(h, &h->mr);
}
/// A tracking adaptor over a pool over a cuda_memory_resource.
inline std::shared_ptr<rmm::mr::device_memory_resource> make_tracking()
{
  using pool_mr = rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource>;
  struct holder {
    rmm::mr::cuda_memory_resource upstream{};
    pool_mr pool{&upstream, 0};
    rmm::mr::tracking_resource_adaptor<pool_mr> mr{&pool};
  };
  auto h = std::make_shared<holder>();
  return share(h, &h->mr);
}
/// A thread_safe adaptor over a pool over a cuda_memory_resource.
inline std::shared_ptr<rmm::mr::device_memory_resource> make_thread_safe()
{
  using pool_mr = rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource>;
  struct holder {
    rmm::mr::cuda_memory_resource upstream{};
    pool_mr pool{&upstream, 0};
    rmm::mr::thread_safe_resource_adaptor<pool_mr> mr{&pool};
  };
  auto h = std::make_shared<holder>();
  return share(h, &h->mr);
}
/// A cuda_async_memory_resource with no initial pool; null when the runtime lacks pools.
inline std::shared_ptr<rmm::mr::device_memory_resource> make_cuda_async()
{
  try {
    return std::make_shared<rmm::mr::cuda_async_memory_resource>(std::size_t{0});
  } catch (rmm::logic_error const&) {
    return nullptr;
  }
}
/// A cuda_async_view_memory_resource over the current device's default pool; null when the
/// runtime lacks pools.
inline std::shared_ptr<rmm::mr::device_memory_resource> make_cuda_async_view()
{
  void* pool = nullptr;
  if (rmm_device_default_mem_pool(rmm::get_current_cuda_device().value(), &pool) !=
      RMM_STATUS_SUCCESS) {
    return nullptr;
  }
  try {
    return std::make_shared<rmm::mr::cuda_async_view_memory_resource>(
      reinterpret_cast<rmm::mr::detail::mem_pool_type>(pool));
  } catch (rmm::logic_error const&) {
    return nullptr;
  }
}

/// Copies device (or host-accessible) memory to a host vector, in stream order, and waits.
inline void copy_to_host(void* host, const void* device, std::size_t bytes, rmm::cuda_stream_view s)
{
  rmm::detail::check(rmm_memcpy_async(host, device, bytes, rmm::detail::to_c_stream(s.value())));
  s.synchronize();
}

}  // namespace rmm_test
