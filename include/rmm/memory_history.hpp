/**
 * @file memory_history.hpp
 * @brief `rmm::memory_history`: record allocation events and write memory snapshots (an
 * rmm-rs extension; the C ABI's `rmm_memory_history_*` and `rmm_snapshot_write`).
 *
 * While recording is on, every allocation, free and failed allocation made through
 * librmm.so (from C++, C and Python alike, on any resource), and the sub-allocators' growth
 * and release, go into a bounded ring of events, optionally with the host stack of each. A
 * snapshot is one JSON document: the events still in the ring, the allocations made while
 * recording that are still live, and every resource's segments (pool chunks, mapped extents)
 * with the blocks that cover them. `docs/memory-history.md` describes the format; `rmm-viz`
 * renders it as HTML.
 *
 * @code
 * rmm::memory_history::enable();               // 100 000 events, no stacks
 * // ... allocate and free ...
 * rmm::memory_history::write_snapshot("snapshot.json");
 * rmm::memory_history::disable();
 * @endcode
 *
 * `RMM_MEMORY_HISTORY=<path>` in the environment records from the start of the process and
 * writes the snapshot to `path` at exit and after an allocation runs out of memory.
 */
#pragma once

#include <rmm/detail/check.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/rmm.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace memory_history {

/// @brief Events kept by default.
inline constexpr std::size_t default_max_entries = 100000;

/**
 * @brief Starts recording allocation events; while recording, restarts (the events recorded
 * so far are forgotten).
 *
 * @param max_entries The most events kept (at least 1); the oldest go first. The live
 * allocations a snapshot lists are not bounded by it.
 * @param stacks Whether each event keeps the host stack of the call (symbols are resolved
 * when a snapshot is written)
 * @throws rmm::logic_error if @p max_entries is 0
 */
inline void enable(std::size_t max_entries = default_max_entries, bool stacks = false)
{
  // The C ABI reads 0 as "the default": here it is a mistake, as in the Python API.
  if (max_entries == 0) {
    throw rmm::logic_error{
      "rmm::memory_history::enable: max_entries = 0 (keep at least one event)"};
  }
  detail::check(rmm_memory_history_enable(max_entries, stacks ? 1 : 0));
}

/**
 * @brief Stops recording and forgets the recorded events (write a snapshot first).
 */
inline void disable() { detail::check(rmm_memory_history_disable()); }

/**
 * @brief Whether allocation events are being recorded (by enable(), the C or Python API, or
 * `RMM_MEMORY_HISTORY`).
 * @return true while recording
 */
inline bool is_enabled()
{
  std::int32_t on = 0;
  detail::check(rmm_memory_history_is_enabled(&on));
  return on != 0;
}

/**
 * @brief Writes a memory snapshot (JSON) to the file @p path, replacing it. Without
 * recording, the snapshot has the resources' segments only.
 * @param path The file (UTF-8)
 * @throws rmm::logic_error if the file cannot be written
 */
inline void write_snapshot(std::string const& path)
{
  detail::check(rmm_snapshot_write(path.c_str()));
}

}  // namespace memory_history
RMM_API_NAMESPACE_END
}  // namespace rmm
