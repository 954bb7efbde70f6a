// The async, sam_headroom and host memory resources through the C++ wrapper (host runtime
// in CI; the same suite runs on a GPU with RMM_RUNTIME=cuda).
#include "test_resources.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/device/cuda_async_managed_memory_resource.hpp>
#include <rmm/mr/device/cuda_async_memory_resource.hpp>
#include <rmm/mr/device/cuda_async_view_memory_resource.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/sam_headroom_memory_resource.hpp>
#include <rmm/mr/host/host_memory_resource.hpp>
#include <rmm/mr/host/new_delete_resource.hpp>
#include <rmm/mr/host/pinned_memory_resource.hpp>
#include <rmm/rmm.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace {

using async_mr = rmm::mr::cuda_async_memory_resource;

bool on_host_runtime()
{
  const char* name = nullptr;
  return rmm_runtime_name(&name) == RMM_STATUS_SUCCESS && name != nullptr &&
         std::string{name} == "host";
}

bool aligned(void* p, std::size_t alignment)
{
  return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

/// Fills device memory from the host and reads it back.
void check_usable(void* ptr, std::size_t bytes, rmm::cuda_stream_view stream)
{
  std::vector<unsigned char> in(bytes), out(bytes, 0);
  for (std::size_t i = 0; i < bytes; ++i) {
    in[i] = static_cast<unsigned char>(i % 251);
  }
  rmm::detail::check(
    rmm_memcpy_async(ptr, in.data(), bytes, rmm::detail::to_c_stream(stream.value())));
  rmm_test::copy_to_host(out.data(), ptr, bytes, stream);
  EXPECT_EQ(in, out);
}

// Tests that are not about the default reservation (half of the free memory, RMM 25.02's)
// reserve nothing: ctest runs test processes side by side, and each default one would take
// half of what the others left.
std::unique_ptr<async_mr> make_async_or_skip(std::optional<std::size_t> initial   = std::size_t{0},
                                             std::optional<std::size_t> threshold = {})
{
  try {
    return std::make_unique<async_mr>(initial, threshold);
  } catch (rmm::logic_error const&) {
    return nullptr;
  }
}

}  // namespace

TEST(CudaAsync, AllocatesFromItsOwnPool)
{
  auto mr = make_async_or_skip();
  if (!mr) { GTEST_SKIP() << "no stream-ordered pools on this runtime"; }
  EXPECT_NE(mr->pool_handle(), nullptr);
  EXPECT_EQ(mr->resource_name(), "cuda_async_memory_resource");
  void* p = mr->allocate(1 << 20);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(aligned(p, 256));
  check_usable(p, 1 << 20, rmm::cuda_stream_view{});
  mr->deallocate(p, 1 << 20);
  EXPECT_EQ(mr->allocate(0), nullptr);
  mr->deallocate(nullptr, 0);
}

TEST(CudaAsync, OptionsAndCopiesShareThePool)
{
  auto mr = make_async_or_skip(std::size_t{4} << 20, std::size_t{0});
  if (!mr) { GTEST_SKIP() << "no stream-ordered pools on this runtime"; }
  async_mr copy{*mr};
  EXPECT_EQ(copy.pool_handle(), mr->pool_handle());
  EXPECT_TRUE(copy == *mr);
  async_mr other{std::size_t{0}};
  EXPECT_NE(other.pool_handle(), mr->pool_handle());
  EXPECT_FALSE(other == *mr);
  rmm::mr::cuda_async_view_memory_resource view{mr->pool_handle()};
  // RMM compares resources of one class only: a view never equals the owning resource.
  EXPECT_FALSE(view == *mr);
  void* p = view.allocate(4096);
  mr->deallocate(p, 4096);  // same pool: interchangeable
}

TEST(CudaAsync, HandleTypeTheDeviceLacksIsALogicError)
{
  if (!on_host_runtime()) { GTEST_SKIP() << "the host runtime has no exportable pools"; }
  try {
    async_mr mr{
      std::size_t{0}, std::nullopt, async_mr::allocation_handle_type::posix_file_descriptor};
    FAIL() << "expected rmm::logic_error";
  } catch (rmm::logic_error const& e) {
    EXPECT_NE(std::string{e.what()}.find("posix_file_descriptor"), std::string::npos) << e.what();
  }
  EXPECT_THROW((async_mr{std::size_t{0}, std::nullopt, async_mr::allocation_handle_type::fabric}),
               rmm::logic_error);
}

TEST(CudaAsync, OutOfMemoryIsOutOfMemory)
{
  auto mr = make_async_or_skip();
  if (!mr) { GTEST_SKIP() << "no stream-ordered pools on this runtime"; }
  EXPECT_THROW((void)mr->allocate(std::size_t{1} << 60), rmm::out_of_memory);
}

TEST(CudaAsyncView, DefaultPool)
{
  void* pool = nullptr;
  if (rmm_device_default_mem_pool(rmm::get_current_cuda_device().value(), &pool) !=
      RMM_STATUS_SUCCESS) {
    GTEST_SKIP() << "no default pool: " << rmm_last_error_message();
  }
  auto const handle = reinterpret_cast<rmm::mr::detail::mem_pool_type>(pool);
  rmm::mr::cuda_async_view_memory_resource view{handle};
  EXPECT_EQ(view.pool_handle(), handle);
  rmm_stream_t raw = nullptr;
  ASSERT_EQ(rmm_stream_create(0, &raw), RMM_STATUS_SUCCESS) << rmm_last_error_message();
  rmm::cuda_stream_view stream{rmm::detail::from_c_stream(raw)};
  void* p = view.allocate(12345, stream);
  check_usable(p, 12345, stream);
  view.deallocate(p, 12345, stream);
  stream.synchronize();
  EXPECT_EQ(rmm_stream_destroy(raw), RMM_STATUS_SUCCESS);
  EXPECT_THROW(rmm::mr::cuda_async_view_memory_resource{nullptr}, rmm::logic_error);
}

TEST(CudaAsyncManaged, AllocatesOrIsUnsupported)
{
  try {
    rmm::mr::cuda_async_managed_memory_resource mr;
    EXPECT_NE(mr.pool_handle(), nullptr);
    void* p = mr.allocate(1 << 16);
    check_usable(p, 1 << 16, rmm::cuda_stream_view{});
    mr.deallocate(p, 1 << 16);
  } catch (rmm::logic_error const& e) {
    EXPECT_FALSE(on_host_runtime()) << e.what();
    EXPECT_NE(std::string{e.what()}.find("managed"), std::string::npos) << e.what();
  }
}

TEST(SamHeadroom, AllocatesOrIsUnsupported)
{
  try {
    rmm::mr::sam_headroom_memory_resource mr{std::size_t{1} << 20};
    void* p = mr.allocate(3 << 20);
    ASSERT_NE(p, nullptr);
    std::memset(p, 1, 3 << 20);  // system memory: host-accessible
    check_usable(p, 4096, rmm::cuda_stream_view{});
    mr.deallocate(p, 3 << 20);
    EXPECT_EQ(mr.resource_name(), "sam_headroom_memory_resource");
  } catch (rmm::logic_error const& e) {
    EXPECT_NE(std::string{e.what()}.find("PageableMemoryAccess"), std::string::npos) << e.what();
  }
}

namespace {
/// A user-defined host resource, written as hipMM users write them.
class counting_host_resource final : public rmm::mr::host_memory_resource {
 public:
  int allocations{0};

 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override
  {
    ++allocations;
    return upstream_.allocate(bytes, alignment);
  }
  void do_deallocate(void* ptr, std::size_t bytes, std::size_t alignment) override
  {
    upstream_.deallocate(ptr, bytes, alignment);
  }
  rmm::mr::new_delete_resource upstream_;
};

void exercise(rmm::mr::host_memory_resource& mr)
{
  for (std::size_t alignment : {std::size_t{1}, std::size_t{64}, std::size_t{4096}}) {
    for (std::size_t bytes : {std::size_t{1}, std::size_t{1000}, std::size_t{1} << 20}) {
      void* p = mr.allocate(bytes, alignment);
      ASSERT_NE(p, nullptr);
      EXPECT_TRUE(aligned(p, alignment)) << bytes << " @ " << alignment;
      std::memset(p, 0xab, bytes);
      mr.deallocate(p, bytes, alignment);
    }
  }
  void* p = mr.allocate(100);
  EXPECT_TRUE(aligned(p, alignof(std::max_align_t)));
  mr.deallocate(p, 100);
}
}  // namespace

TEST(HostResources, NewDelete)
{
  rmm::mr::new_delete_resource mr;
  exercise(mr);
  // An unsupported alignment means the default one, as in RMM.
  void* odd = mr.allocate(64, 48);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(odd) % alignof(std::max_align_t), 0U);
  mr.deallocate(odd, 64, 48);
  rmm::mr::new_delete_resource other;
  EXPECT_TRUE(mr == other);
  rmm::mr::pinned_memory_resource pinned;
  EXPECT_TRUE(mr != pinned);
}

TEST(HostResources, Pinned)
{
  rmm::mr::pinned_memory_resource mr;
  exercise(mr);
  // An unsupported alignment means the default one, as in RMM.
  void* odd = mr.allocate(64, 48);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(odd) % alignof(std::max_align_t), 0U);
  mr.deallocate(odd, 64, 48);
  EXPECT_EQ(mr.allocate(0), nullptr);
  mr.deallocate(nullptr, 0);
  // Pinned memory is device-accessible: a stream-ordered copy into it works.
  void* p = mr.allocate(4096, 4096);
  check_usable(p, 4096, rmm::cuda_stream_view{});
  mr.deallocate(p, 4096, 4096);
  EXPECT_TRUE(mr == rmm::mr::pinned_memory_resource{});
}

TEST(HostResources, UserSubclass)
{
  counting_host_resource mr;
  rmm::mr::host_memory_resource& base = mr;
  exercise(base);
  EXPECT_EQ(mr.allocations, 10);
  EXPECT_TRUE(base == mr);
}
