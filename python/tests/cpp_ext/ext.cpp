// A "C++ extension" of the kind RAPIDS libraries are: C++ code using rmm's C++ API
// (rmm::mr::set_current_device_resource / get_current_device_resource), loaded into a Python
// process that also uses the rmm package. Both must see one per-device registry.
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/mr/device/pool_memory_resource.hpp>

#include <cstddef>
#include <exception>
#include <memory>

#define EXT_API extern "C" __attribute__((visibility("default")))

namespace {
using pool_mr = rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource>;
std::unique_ptr<rmm::mr::cuda_memory_resource> upstream;
std::unique_ptr<pool_mr> pool;
}  // namespace

// Makes a pool of `initial_size` bytes (growing on demand) the current device's resource.
// Returns 0, or -1 when an exception was thrown.
EXT_API int ext_set_pool(std::size_t initial_size) noexcept
{
  try {
    upstream = std::make_unique<rmm::mr::cuda_memory_resource>();
    pool     = std::make_unique<pool_mr>(upstream.get(), initial_size);
    rmm::mr::set_current_device_resource(pool.get());
    return 0;
  } catch (std::exception const&) {
    return -1;
  }
}

// Restores the initial resource, then destroys the pool made by ext_set_pool.
EXT_API int ext_reset() noexcept
{
  try {
    rmm::mr::reset_current_device_resource();
    pool.reset();
    upstream.reset();
    return 0;
  } catch (std::exception const&) {
    return -1;
  }
}

// Bytes the pool made by ext_set_pool has taken from its upstream.
EXT_API std::size_t ext_pool_size() noexcept { return pool ? pool->pool_size() : 0; }

// Whether C++'s current resource is the very object ext_set_pool set.
EXT_API int ext_current_is_pool() noexcept
{
  return pool != nullptr && rmm::mr::get_current_device_resource() == pool.get();
}

// Whether C++'s current resource is the device's initial cuda_memory_resource.
EXT_API int ext_current_is_initial() noexcept
{
  return rmm::mr::get_current_device_resource() == rmm::mr::detail::initial_resource();
}

// Allocates from C++'s current resource; null on failure.
EXT_API void* ext_allocate(std::size_t bytes) noexcept
{
  try {
    return rmm::mr::get_current_device_resource()->allocate(bytes);
  } catch (std::exception const&) {
    return nullptr;
  }
}

// Frees memory from ext_allocate to C++'s current resource. Returns 0, or -1 on an exception.
EXT_API int ext_deallocate(void* ptr, std::size_t bytes) noexcept
{
  try {
    rmm::mr::get_current_device_resource()->deallocate(ptr, bytes);
    return 0;
  } catch (std::exception const&) {
    return -1;
  }
}
