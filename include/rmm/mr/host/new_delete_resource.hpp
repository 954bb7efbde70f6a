/**
 * @file new_delete_resource.hpp
 * @brief Host memory resource over the global aligned operator new / delete.
 */
#pragma once

#include <rmm/error.hpp>
#include <rmm/mr/host/host_memory_resource.hpp>
#include <rmm/aligned.hpp>
#include <rmm/detail/aligned.hpp>
#include <rmm/detail/export.hpp>

#include <cstddef>
#include <new>
#include <string>
#include <utility>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace mr {

/**
 * @brief Host memory resource using the global `operator new` / `operator delete` with
 * `std::align_val_t`. Alignments must be powers of two (else rmm::logic_error).
 */
class new_delete_resource final : public host_memory_resource {
 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override
  {
    return ::operator new (bytes, std::align_val_t{detail::host_alignment(alignment)});
  }

  void do_deallocate(void* ptr, std::size_t bytes, std::size_t alignment) override
  {
    ::operator delete (ptr, bytes, std::align_val_t{detail::host_alignment(alignment)});
  }

  [[nodiscard]] bool do_is_equal(host_memory_resource const& other) const noexcept override
  {
    return dynamic_cast<new_delete_resource const*>(&other) != nullptr;
  }
};

}  // namespace mr
RMM_API_NAMESPACE_END
}  // namespace rmm
