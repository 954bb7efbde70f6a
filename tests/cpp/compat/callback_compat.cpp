// rmm/mr/device/callback_memory_resource.hpp: the callbacks' results and exceptions reach the
// caller unchanged (RMM does not turn a null from the allocate callback into an exception).
#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device/callback_memory_resource.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <stdexcept>

namespace {
struct calls {
  int allocations{};
  int deallocations{};
};

void* null_allocate(std::size_t, rmm::cuda_stream_view, void* arg)
{
  ++static_cast<calls*>(arg)->allocations;
  return nullptr;
}

void counting_deallocate(void*, std::size_t, rmm::cuda_stream_view, void* arg)
{
  ++static_cast<calls*>(arg)->deallocations;
}

struct my_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
}  // namespace

TEST(CallbackCompat, NullFromTheCallbackIsReturned)
{
  calls seen;
  rmm::mr::callback_memory_resource mr{null_allocate, counting_deallocate, &seen, &seen};
  void* p = nullptr;
  EXPECT_NO_THROW(p = mr.allocate(1024));
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(seen.allocations, 1);
  rmm::device_async_resource_ref ref{mr};
  EXPECT_EQ(ref.allocate_async(256, rmm::cuda_stream_view{}), nullptr);
  EXPECT_EQ(seen.allocations, 2);
}

TEST(CallbackCompat, CallbackExceptionPropagatesUnchanged)
{
  rmm::mr::callback_memory_resource mr{
    [](std::size_t, rmm::cuda_stream_view, void*) -> void* { throw my_error{"nope"}; },
    [](void*, std::size_t, rmm::cuda_stream_view, void*) {}};
  EXPECT_THROW((void)mr.allocate(64), my_error);
}

TEST(CallbackCompat, ForwardsToAnotherResource)
{
  rmm::mr::cuda_memory_resource cuda;
  calls seen;
  struct args {
    rmm::mr::cuda_memory_resource* mr;
    calls* seen;
  } a{&cuda, &seen};
  rmm::mr::callback_memory_resource mr{
    [](std::size_t bytes, rmm::cuda_stream_view stream, void* arg) {
      auto* x = static_cast<args*>(arg);
      ++x->seen->allocations;
      return x->mr->allocate(bytes, stream);
    },
    [](void* ptr, std::size_t bytes, rmm::cuda_stream_view stream, void* arg) {
      auto* x = static_cast<args*>(arg);
      ++x->seen->deallocations;
      x->mr->deallocate(ptr, bytes, stream);
    },
    &a,
    &a};
  void* p = mr.allocate(4096, rmm::cuda_stream_view{});
  EXPECT_NE(p, nullptr);
  mr.deallocate(p, 4096, rmm::cuda_stream_view{});
  EXPECT_EQ(seen.allocations, 1);
  EXPECT_EQ(seen.deallocations, 1);
}
