// Owning streams (cuda_stream) and stream pools (cuda_stream_pool).
#include <rmm/cuda_stream.hpp>
#include <rmm/cuda_stream_pool.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/error.hpp>
#include <rmm/rmm.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <set>
#include <sstream>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

TEST(cuda_stream, TraitsMoveOnly)
{
  static_assert(!std::is_copy_constructible<rmm::cuda_stream>::value);
  static_assert(!std::is_copy_assignable<rmm::cuda_stream>::value);
  static_assert(std::is_nothrow_move_constructible<rmm::cuda_stream>::value);
  static_assert(std::is_nothrow_move_assignable<rmm::cuda_stream>::value);
  static_assert(std::is_convertible<rmm::cuda_stream const&, rmm::cuda_stream_view>::value);
  // RMM 25.10 and 26.06 declare cuda_stream(flags) without `explicit`.
  static_assert(std::is_convertible<rmm::cuda_stream::flags, rmm::cuda_stream>::value);
}

TEST(cuda_stream, CreateViewAndSynchronize)
{
  rmm::cuda_stream stream;
  EXPECT_TRUE(stream.is_valid());
  EXPECT_NE(stream.value(), nullptr);
  rmm::cuda_stream_view const view = stream;
  EXPECT_EQ(view, stream.view());
  EXPECT_EQ(view.value(), stream.value());
  EXPECT_FALSE(view.is_default());
  EXPECT_FALSE(view.is_per_thread_default());
  // Explicit, as in RMM 25.02 (an implicit conversion makes stream comparisons ambiguous).
  auto const raw = static_cast<rmm::detail::stream_type>(stream);
  EXPECT_EQ(raw, stream.value());
  EXPECT_NO_THROW(stream.synchronize());
  stream.synchronize_no_throw();
  std::ostringstream os;
  os << stream.view();
  EXPECT_FALSE(os.str().empty());
}

TEST(cuda_stream, FlagsNonBlocking)
{
  rmm::cuda_stream blocking{rmm::cuda_stream::flags::sync_default};
  rmm::cuda_stream non_blocking{rmm::cuda_stream::flags::non_blocking};
  EXPECT_TRUE(blocking.is_valid());
  EXPECT_TRUE(non_blocking.is_valid());
  EXPECT_NE(blocking.value(), non_blocking.value());
  EXPECT_EQ(static_cast<std::uint32_t>(rmm::cuda_stream::flags::non_blocking),
            RMM_STREAM_NON_BLOCKING);
  non_blocking.synchronize();
}

TEST(cuda_stream, DistinctStreams)
{
  rmm::cuda_stream a;
  rmm::cuda_stream b;
  EXPECT_NE(a.value(), b.value());
  EXPECT_NE(a.view(), b.view());
}

TEST(cuda_stream, MoveLeavesSourceInvalid)
{
  rmm::cuda_stream a;
  auto const handle = a.value();
  rmm::cuda_stream b{std::move(a)};
  EXPECT_FALSE(a.is_valid());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(a.value(), nullptr);
  EXPECT_TRUE(b.is_valid());
  EXPECT_EQ(b.value(), handle);
  rmm::cuda_stream c;
  c = std::move(b);  // destroys c's own stream
  EXPECT_EQ(c.value(), handle);
  EXPECT_FALSE(b.is_valid());  // NOLINT(bugprone-use-after-move)
  auto& self = c;
  c          = std::move(self);
  EXPECT_EQ(c.value(), handle);
  c.synchronize();
}

TEST(cuda_stream, WorkOnStreamCompletesAfterSynchronize)
{
  rmm::cuda_stream stream;
  std::vector<int> host(1000);
  for (std::size_t i = 0; i < host.size(); ++i) {
    host[i] = static_cast<int>(i);
  }
  rmm::device_buffer buf(host.data(), host.size() * sizeof(int), stream);
  std::vector<int> back(host.size());
  ASSERT_EQ(
    rmm_memcpy_async(back.data(), buf.data(), buf.size(), rmm::detail::to_c_stream(stream.value())),
    RMM_STATUS_SUCCESS);
  stream.synchronize();
  EXPECT_EQ(back, host);
  bool complete = false;
  ASSERT_EQ(rmm_stream_query(rmm::detail::to_c_stream(stream.value()), &complete),
            RMM_STATUS_SUCCESS);
  EXPECT_TRUE(complete);
}

TEST(cuda_stream_pool, DefaultSizeIs16)
{
  rmm::cuda_stream_pool pool;
  EXPECT_EQ(pool.get_pool_size(), 16U);
  EXPECT_EQ(rmm::cuda_stream_pool::default_size, 16U);
}

TEST(cuda_stream_pool, ZeroSizeThrows) { EXPECT_THROW(rmm::cuda_stream_pool{0}, rmm::logic_error); }

TEST(cuda_stream_pool, RoundRobin)
{
  rmm::cuda_stream_pool pool{4};
  EXPECT_EQ(pool.get_pool_size(), 4U);
  std::vector<rmm::cuda_stream_view> first;
  for (int i = 0; i < 4; ++i) {
    first.push_back(pool.get_stream());
  }
  std::set<void const*> distinct;
  for (auto s : first) {
    distinct.insert(static_cast<void const*>(s.value()));
    EXPECT_FALSE(s.is_default());
  }
  EXPECT_EQ(distinct.size(), 4U);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(pool.get_stream(), first[static_cast<std::size_t>(i)]);
  }
}

TEST(cuda_stream_pool, GetStreamByIdWraps)
{
  rmm::cuda_stream_pool pool{3};
  EXPECT_NE(pool.get_stream(0), pool.get_stream(1));
  EXPECT_NE(pool.get_stream(1), pool.get_stream(2));
  EXPECT_EQ(pool.get_stream(0), pool.get_stream(3));
  EXPECT_EQ(pool.get_stream(2), pool.get_stream(5));
  EXPECT_EQ(pool.get_stream(1), pool.get_stream(1000));
  // get_stream(id) does not advance the round robin.
  EXPECT_EQ(pool.get_stream(), pool.get_stream(0));
  EXPECT_EQ(pool.get_stream(), pool.get_stream(1));
}

TEST(cuda_stream_pool, FlagsArePassedOn)
{
  rmm::cuda_stream_pool pool{2, rmm::cuda_stream::flags::non_blocking};
  EXPECT_EQ(pool.get_pool_size(), 2U);
  pool.get_stream().synchronize();
}

TEST(cuda_stream_pool, ConcurrentGetStreamIsBalanced)
{
  rmm::cuda_stream_pool pool{8};
  constexpr int threads_n  = 8;
  constexpr int per_thread = 1000;
  std::vector<std::vector<rmm::cuda_stream_view>> seen(threads_n);
  std::vector<std::thread> threads;
  for (int t = 0; t < threads_n; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        seen[static_cast<std::size_t>(t)].push_back(pool.get_stream());
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  std::vector<std::size_t> counts(8, 0);
  for (auto const& v : seen) {
    for (auto s : v) {
      bool found = false;
      for (std::size_t k = 0; k < 8; ++k) {
        if (pool.get_stream(k) == s) {
          ++counts[k];
          found = true;
        }
      }
      EXPECT_TRUE(found);
    }
  }
  // Every index of the atomic counter was handed out exactly once: perfectly balanced.
  for (auto c : counts) {
    EXPECT_EQ(c, static_cast<std::size_t>(threads_n * per_thread / 8));
  }
}

TEST(cuda_stream_pool, StreamsUsableForWork)
{
  rmm::cuda_stream_pool pool{4};
  std::vector<rmm::device_buffer> bufs;
  std::vector<std::uint8_t> const host(256, 0xAB);
  for (int i = 0; i < 8; ++i) {
    bufs.emplace_back(host.data(), host.size(), pool.get_stream());
  }
  for (auto& b : bufs) {
    std::vector<std::uint8_t> back(b.size());
    ASSERT_EQ(rmm_memcpy_async(
                back.data(), b.data(), b.size(), rmm::detail::to_c_stream(b.stream().value())),
              RMM_STATUS_SUCCESS);
    b.stream().synchronize();
    EXPECT_EQ(back, host);
  }
}

}  // namespace
