// rmm::memory_history (include/rmm/memory_history.hpp): device_buffer allocations through a
// pool recorded, and the snapshot file written with their events, live allocations and the
// pool's chunks.
#include <rmm/cuda_stream_view.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/error.hpp>
#include <rmm/memory_history.hpp>
#include <rmm/mr/device/cuda_memory_resource.hpp>
#include <rmm/mr/device/per_device_resource.hpp>
#include <rmm/mr/device/pool_memory_resource.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

std::string read_file(std::filesystem::path const& path)
{
  std::ifstream in{path};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::size_t count(std::string const& text, std::string const& what)
{
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// The snapshot's keys come sorted: {"events":[...],"events_dropped":N,"live":[...],
// "producer":...,"recording":...,"runtime":...,"schema_version":1,"segments":[...]}, and each
// event's too: {"action":...,"address":...,"device":...,"frames":...,"resource":...,...}.

/// The "events" array of @p doc.
std::string events_of(std::string const& doc)
{
  return doc.substr(0, doc.find("\"events_dropped\":"));
}

/// The "live" array of @p doc.
std::string live_of(std::string const& doc)
{
  auto const at = doc.find("\"live\":");
  return doc.substr(at, doc.find("\"producer\":") - at);
}

/// One event object of the snapshot's "events" array that holds @p needle, or "".
std::string event_with(std::string const& doc, std::string const& needle)
{
  auto const at = doc.find(needle);
  if (at == std::string::npos) { return {}; }
  auto const open  = doc.rfind('{', at);
  auto const close = doc.find('}', at);
  return doc.substr(open, close - open + 1);
}

/// The value of @p key (a string) in the JSON object @p object.
std::string string_field(std::string const& object, std::string const& key)
{
  auto const tag = "\"" + key + "\":\"";
  auto const at  = object.find(tag);
  if (at == std::string::npos) { return {}; }
  auto const start = at + tag.size();
  return object.substr(start, object.find('"', start) - start);
}

/// "action:size" of each event of @p events at @p address, in order.
std::vector<std::string> events_at(std::string const& events, std::uintptr_t address)
{
  std::vector<std::string> out;
  auto const tag = "\"address\":" + std::to_string(address) + ",";
  for (auto at = events.find(tag); at != std::string::npos; at = events.find(tag, at + 1)) {
    auto const open    = events.rfind('{', at);
    auto const close   = events.find('}', at);
    auto const object  = events.substr(open, close - open + 1);
    auto const size_at = object.find("\"size\":") + 7;
    out.push_back(string_field(object, "action") + ":" +
                  object.substr(size_at, object.find(',', size_at) - size_at));
  }
  return out;
}

class MemoryHistory : public ::testing::Test {
 protected:
  void SetUp() override
  {
    rmm::memory_history::disable();
    path_ =
      std::filesystem::temp_directory_path() /
      ("rmm_memory_history_" + std::to_string(reinterpret_cast<std::uintptr_t>(this)) + ".json");
  }
  void TearDown() override
  {
    rmm::memory_history::disable();
    std::filesystem::remove(path_);
  }
  std::filesystem::path path_;
};

TEST_F(MemoryHistory, OnOff)
{
  EXPECT_FALSE(rmm::memory_history::is_enabled());
  rmm::memory_history::enable();
  EXPECT_TRUE(rmm::memory_history::is_enabled());
  rmm::memory_history::enable(10, true);  // restarts
  EXPECT_TRUE(rmm::memory_history::is_enabled());
  rmm::memory_history::disable();
  EXPECT_FALSE(rmm::memory_history::is_enabled());
  EXPECT_THROW(rmm::memory_history::enable(0), rmm::logic_error);
  EXPECT_FALSE(rmm::memory_history::is_enabled());
}

TEST_F(MemoryHistory, DeviceBuffersThroughAPoolAreInTheSnapshot)
{
  rmm::mr::cuda_memory_resource cuda;
  rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource> pool{&cuda, MiB, 8 * MiB};
  rmm::mr::set_current_device_resource(&pool);

  rmm::memory_history::enable();
  // Sizes the pool takes as they are (multiples of 256).
  constexpr std::size_t kept_size  = 48 * 256;
  constexpr std::size_t freed_size = 2 * MiB + 256;  // more than the first chunk: it grows
  std::uintptr_t freed_ptr         = 0;
  auto kept = std::make_unique<rmm::device_buffer>(kept_size, rmm::cuda_stream_view{});
  {
    rmm::device_buffer freed(freed_size, rmm::cuda_stream_view{});
    freed_ptr = reinterpret_cast<std::uintptr_t>(freed.data());
  }
  auto const kept_ptr = reinterpret_cast<std::uintptr_t>(kept->data());
  EXPECT_THROW(rmm::device_buffer(64 * MiB, rmm::cuda_stream_view{}), rmm::out_of_memory);
  rmm::memory_history::write_snapshot(path_.string());

  std::string const doc = read_file(path_);
  ASSERT_FALSE(doc.empty());
  EXPECT_NE(doc.find("\"schema_version\":1"), std::string::npos) << doc.substr(0, 200);
  EXPECT_NE(doc.find("\"recording\":true"), std::string::npos);

  // Each allocation, with its size and address; the free of the second; the failure; the
  // pool's growth (at the new chunk, where the second buffer went).
  std::string const events = events_of(doc);
  using list               = std::vector<std::string>;
  EXPECT_EQ(events_at(events, kept_ptr), (list{"allocate:" + std::to_string(kept_size)}));
  auto const at_freed = events_at(events, freed_ptr);
  ASSERT_GE(at_freed.size(), 2U) << events;
  EXPECT_EQ((list{at_freed.end() - 2, at_freed.end()}),
            (list{"allocate:" + std::to_string(freed_size), "free:" + std::to_string(freed_size)}))
    << events;
  EXPECT_EQ(count(events, "\"action\":\"allocate\""), 2U);
  EXPECT_EQ(count(events, "\"action\":\"free\""), 1U);
  auto const failed = event_with(events, "\"action\":\"allocate_failed\"");
  EXPECT_NE(failed.find("\"size\":" + std::to_string(64 * MiB) + ","), std::string::npos) << failed;
  EXPECT_NE(failed.find("\"resource\":\"pool_memory_resource\""), std::string::npos) << failed;
  EXPECT_NE(events.find("\"action\":\"grow\""), std::string::npos);

  // Live: the kept buffer only.
  std::string const live = live_of(doc);
  EXPECT_EQ(events_at(live, kept_ptr), (list{"allocate:" + std::to_string(kept_size)})) << live;
  EXPECT_EQ(count(live, "\"action\""), 1U) << live;

  // The pool's chunks are segments with blocks.
  EXPECT_NE(doc.find("\"kind\":\"pool_chunk\""), std::string::npos);
  EXPECT_NE(doc.find("\"state\":\"free\""), std::string::npos);

  kept.reset();
  rmm::memory_history::disable();
  rmm::mr::set_current_device_resource(nullptr);
}

TEST_F(MemoryHistory, MaxEntriesAndStacks)
{
  rmm::mr::cuda_memory_resource cuda;
  rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource> pool{&cuda, MiB};
  rmm::memory_history::enable(3, true);
  std::vector<rmm::device_buffer> bufs;
  for (int i = 0; i < 6; ++i) {
    bufs.emplace_back(256 * (i + 1), rmm::cuda_stream_view{}, &pool);
  }
  rmm::memory_history::write_snapshot(path_.string());
  std::string const doc    = read_file(path_);
  std::string const events = events_of(doc);
  // The three newest only.
  EXPECT_EQ(count(events, "\"action\":\"allocate\""), 3U);
  EXPECT_EQ(events.find("\"size\":256,"), std::string::npos);
  EXPECT_NE(events.find("\"size\":1536,"), std::string::npos);
  EXPECT_NE(doc.find("\"events_dropped\":3"), std::string::npos);
  // With stacks: the C call this test's device_buffer made is the first frame.
  EXPECT_NE(events.find("\"frames\":[{"), std::string::npos);
  EXPECT_NE(events.find("rmm_allocate_async"), std::string::npos);
  // All six live, whatever the ring kept.
  std::string const live = live_of(doc);
  for (int i = 0; i < 6; ++i) {
    EXPECT_NE(live.find("\"size\":" + std::to_string(256 * (i + 1)) + ","), std::string::npos) << i;
  }
}

TEST_F(MemoryHistory, SnapshotWithoutRecordingAndBadPath)
{
  rmm::memory_history::write_snapshot(path_.string());
  std::string const doc = read_file(path_);
  EXPECT_NE(doc.find("\"recording\":false"), std::string::npos);
  EXPECT_NE(doc.find("\"events\":[]"), std::string::npos);
  try {
    rmm::memory_history::write_snapshot("/nonexistent-dir/snapshot.json");
    FAIL() << "no exception";
  } catch (rmm::logic_error const& e) {
    EXPECT_NE(std::string{e.what()}.find("/nonexistent-dir/snapshot.json"), std::string::npos)
      << e.what();
  }
}

}  // namespace
