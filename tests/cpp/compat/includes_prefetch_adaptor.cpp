// Only rmm/mr/device/prefetch_resource_adaptor.hpp: what RMM's header brings along.
#include <rmm/mr/device/prefetch_resource_adaptor.hpp>

#include <gtest/gtest.h>

TEST(TransitiveIncludes, PrefetchAdaptor)
{
  std::shared_mutex lock;                          // <shared_mutex>
  std::lock_guard<std::shared_mutex> guard{lock};  // <mutex>
  std::stack<int> frames;                          // <stack>
  frames.push(1);
  rmm::cuda_stream_view stream{};
  auto const device = rmm::get_current_cuda_device();
  // rmm/prefetch.hpp: the span form of RMM 25.02 takes a device and a stream.
  EXPECT_NO_THROW(rmm::prefetch(static_cast<void const*>(nullptr), 0, device, stream));
  rmm::mr::device_memory_resource* base = nullptr;  // rmm/mr/device/device_memory_resource.hpp
  EXPECT_EQ(base, nullptr);
  static_assert(sizeof(rmm::device_async_resource_ref) > 0);  // rmm/resource_ref.hpp
  EXPECT_EQ(frames.size(), 1U);
}
