// A cuda_memory_resource whose deallocation first synchronizes the current device, the way
// hipFree/cudaFree do. Works around the host emulation's free, which (unlike the real
// runtimes) unmaps memory immediately even while copies enqueued on streams still use it.
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/rmm.h>

#include <cstddef>

namespace rmm_test {

class sync_free_resource final : public rmm::mr::device_memory_resource {
 private:
  void* do_allocate(std::size_t bytes, rmm::cuda_stream_view stream) override
  {
    return upstream_.allocate(bytes, stream);
  }
  void do_deallocate(void* ptr, std::size_t bytes, rmm::cuda_stream_view stream) override
  {
    (void)rmm_device_synchronize();
    upstream_.deallocate(ptr, bytes, stream);
  }
  rmm::mr::cuda_memory_resource upstream_;
};

}  // namespace rmm_test
