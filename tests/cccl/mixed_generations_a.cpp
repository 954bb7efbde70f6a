// The RMM 25.02 half of a program mixing API generations (RMM_API_VERSION=2502): it sets and
// reads the current device resource through 25.02's pointer API; mixed_generations_b.cpp (26.06)
// checks that both layers share librmm's one registry, in both directions. Nothing of either
// layer's types crosses between the two files: only plain values.
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/mr/device/pool_memory_resource.hpp>
#include <rmm/mr/device/statistics_resource_adaptor.hpp>
#include <rmm/rmm.h>

#include <cstddef>
#include <cstdint>

#if RMM_API_GENERATION != 2502
#error "mixed_generations_a.cpp must be compiled with RMM_API_VERSION=2502"
#endif

namespace {
using pool_type = rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource>;

rmm::mr::cuda_memory_resource& upstream()
{
  static rmm::mr::cuda_memory_resource cuda;
  return cuda;
}

pool_type*& the_pool()
{
  static pool_type* pool = nullptr;
  return pool;
}
}  // namespace

/// Sets a 25.02 pool as the current resource; returns its librmm identity.
std::uint64_t a_set_pool_current()
{
  the_pool() = new pool_type{&upstream(), 1 << 20};
  rmm::mr::set_current_device_resource(the_pool());
  std::uint64_t id = 0;
  (void)rmm_resource_id(the_pool()->handle(), &id);
  return id;
}

/// Whether 25.02's getter returns the very pool a_set_pool_current() set.
bool a_current_is_the_pool() { return rmm::mr::get_current_device_resource() == the_pool(); }

/// Resets the current resource through 25.02 and frees the pool.
void a_reset_and_free_pool()
{
  rmm::mr::reset_current_device_resource();
  delete the_pool();
  the_pool() = nullptr;
}

/// Allocates and frees `bytes` through whatever 25.02's getter returns; its librmm identity.
std::uint64_t a_allocate_from_current(std::size_t bytes)
{
  rmm::mr::device_memory_resource* mr = rmm::mr::get_current_device_resource();
  void* p                             = mr->allocate(bytes);
  mr->deallocate(p, bytes);
  auto* handled    = dynamic_cast<rmm::mr::detail::handle_resource*>(mr);
  std::uint64_t id = 0;
  if (handled != nullptr) { (void)rmm_resource_id(handled->handle(), &id); }
  return id;
}

/// Replaces the current resource through 25.02 (with its initial one).
void a_reset_current() { rmm::mr::reset_current_device_resource(); }
