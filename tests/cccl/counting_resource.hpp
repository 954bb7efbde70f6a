// A user resource of the tests of RMM 26.06 and later: device memory from librmm's cuda
// resource behind CCCL's interface only, with counters its copies share.
#pragma once

#include <rmm/error.hpp>
#include <rmm/rmm.h>

#include <cuda/memory_resource>
#include <cuda/stream_ref>

#include <atomic>
#include <cstddef>
#include <memory>
#include <stdexcept>

// A user resource written against CCCL's interface only (no rmm base class): device memory
// from librmm's cuda resource, with counters shared by its copies so tests can see which
// calls reached it and with which sizes and alignments.
struct counting_resource {
  struct counters {
    std::atomic<int> allocations{0};
    std::atomic<int> deallocations{0};
    std::atomic<std::size_t> outstanding_bytes{0};
    std::atomic<std::size_t> last_alignment{0};
    std::atomic<std::size_t> last_bytes{0};
  };

  counting_resource() : counts{std::make_shared<counters>()}
  {
    rmm_resource_t handle{};
    if (rmm_cuda_create(&handle) != RMM_STATUS_SUCCESS) {
      throw std::runtime_error{rmm_last_error_message()};
    }
    upstream = std::shared_ptr<rmm_resource>{handle, &rmm_resource_release};
  }

  void* allocate(cuda::stream_ref stream, std::size_t bytes, std::size_t alignment)
  {
    void* ptr{};
    if (rmm_allocate_async(upstream.get(), bytes, stream.get(), &ptr) != RMM_STATUS_SUCCESS) {
      throw rmm::bad_alloc{rmm_last_error_message()};
    }
    counts->allocations++;
    counts->outstanding_bytes += bytes;
    counts->last_bytes     = bytes;
    counts->last_alignment = alignment;
    return ptr;
  }
  void deallocate(cuda::stream_ref stream, void* ptr, std::size_t bytes, std::size_t) noexcept
  {
    (void)rmm_deallocate_async(upstream.get(), ptr, bytes, stream.get());
    counts->deallocations++;
    counts->outstanding_bytes -= bytes;
  }
  void* allocate_sync(std::size_t bytes, std::size_t alignment)
  {
    void* ptr = allocate(cuda::stream_ref{cudaStream_t{}}, bytes, alignment);
    (void)rmm_stream_synchronize(nullptr);
    return ptr;
  }
  void deallocate_sync(void* ptr, std::size_t bytes, std::size_t alignment) noexcept
  {
    deallocate(cuda::stream_ref{cudaStream_t{}}, ptr, bytes, alignment);
  }
  bool operator==(counting_resource const& other) const noexcept { return counts == other.counts; }
  bool operator!=(counting_resource const& other) const noexcept { return !(*this == other); }
  friend void get_property(counting_resource const&, cuda::mr::device_accessible) noexcept {}

  std::shared_ptr<counters> counts;
  std::shared_ptr<rmm_resource> upstream;
};
static_assert(cuda::mr::resource_with<counting_resource, cuda::mr::device_accessible>);
