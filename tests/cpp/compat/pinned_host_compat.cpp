// rmm/mr/pinned_host_memory_resource.hpp: RMM 25.02's static allocate/deallocate members.
#include <rmm/aligned.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <gtest/gtest.h>

#include <cstring>

TEST(PinnedHostCompat, StaticAllocateWithoutAnObject)
{
  void* p = rmm::mr::pinned_host_memory_resource::allocate(1000);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(rmm::is_pointer_aligned(p, rmm::RMM_DEFAULT_HOST_ALIGNMENT));
  std::memset(p, 0x11, 1000);
  rmm::mr::pinned_host_memory_resource::deallocate(p, 1000);

  void* q = rmm::mr::pinned_host_memory_resource::allocate(64, 4096);
  EXPECT_TRUE(rmm::is_pointer_aligned(q, 4096));
  rmm::mr::pinned_host_memory_resource::deallocate(q, 64, 4096);
  EXPECT_EQ(rmm::mr::pinned_host_memory_resource::allocate(0), nullptr);
}

TEST(PinnedHostCompat, AsyncMembersIgnoreTheStream)
{
  rmm::cuda_stream stream;
  rmm::mr::pinned_host_memory_resource mr;
  void* p = mr.allocate_async(512, stream);
  void* q = mr.allocate_async(512, 1024, stream);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(rmm::is_pointer_aligned(q, 1024));
  std::memset(p, 0, 512);
  mr.deallocate_async(p, 512, stream);
  mr.deallocate_async(q, 512, 1024, stream);
}

TEST(PinnedHostCompat, StillAResourceThroughRefs)
{
  rmm::mr::pinned_host_memory_resource mr;
  rmm::host_device_async_resource_ref ref{mr};
  void* p = ref.allocate_async(256, rmm::cuda_stream_view{});
  ASSERT_NE(p, nullptr);
  ref.deallocate_async(p, 256, rmm::cuda_stream_view{});
}
