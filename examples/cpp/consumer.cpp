// Code written the hipMM/RMM way, compiled against the installed rmm-rs package.
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/device_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>

#include <cstddef>
#include <cstdio>

namespace {

/// A user resource in the RMM style: counts and forwards to an upstream.
class counting_resource final : public rmm::mr::device_memory_resource {
 public:
  explicit counting_resource(rmm::mr::device_memory_resource* upstream) : upstream_{upstream} {}
  std::size_t count{0};

 private:
  void* do_allocate(std::size_t bytes, rmm::cuda_stream_view stream) override
  {
    ++count;
    return upstream_->allocate(bytes, stream);
  }
  void do_deallocate(void* ptr, std::size_t bytes, rmm::cuda_stream_view stream) override
  {
    upstream_->deallocate(ptr, bytes, stream);
  }
  rmm::mr::device_memory_resource* upstream_;
};

}  // namespace

int main()
{
  try {
    rmm::mr::cuda_memory_resource cuda;
    counting_resource counting{&cuda};
    auto* previous = rmm::mr::set_current_device_resource(&counting);
    auto* mr       = rmm::mr::get_current_device_resource();
    if (mr != &counting) {
      std::fprintf(stderr, "get_current_device_resource returned another object\n");
      return 1;
    }
    void* p = mr->allocate(1 << 20, rmm::cuda_stream_view{});
    mr->deallocate(p, 1 << 20, rmm::cuda_stream_view{});
    rmm::mr::set_current_device_resource(previous);
    auto [free_bytes, total_bytes] = rmm::available_device_memory();
    std::printf("devices: %d, %zu of %zu bytes free, allocations through the subclass: %zu\n",
                rmm::get_num_cuda_devices(),
                free_bytes,
                total_bytes,
                counting.count);
    return counting.count == 1 ? 0 : 1;
  } catch (std::exception const& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
