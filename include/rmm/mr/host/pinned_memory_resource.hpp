/**
 * @file pinned_memory_resource.hpp
 * @brief Host memory resource allocating pinned (page-locked) memory from the runtime.
 */
#pragma once

#include <rmm/detail/check.hpp>
#include <rmm/mr/host/host_memory_resource.hpp>
#include <rmm/rmm.h>
#include <rmm/aligned.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/aligned.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>

#include <cstddef>
#include <utility>

namespace rmm::mr {

/**
 * @brief Host memory resource allocating pinned host memory (cudaMallocHost /
 * hipHostMalloc), accessible from the device. Any power-of-two alignment (else
 * rmm::logic_error); zero bytes give nullptr.
 *
 * Implemented by the Rust core (`rmm_pinned_host_allocate` / `rmm_pinned_host_deallocate`).
 */
class pinned_memory_resource final : public host_memory_resource {
 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override
  {
    void* ptr = nullptr;
    rmm::detail::check(rmm_pinned_host_allocate(bytes, alignment, &ptr));
    return ptr;
  }

  void do_deallocate(void* ptr, std::size_t bytes, std::size_t alignment) override
  {
    rmm::detail::check(rmm_pinned_host_deallocate(ptr, bytes, alignment));
  }

  [[nodiscard]] bool do_is_equal(host_memory_resource const& other) const noexcept override
  {
    return dynamic_cast<pinned_memory_resource const*>(&other) != nullptr;
  }
};

}  // namespace rmm::mr
