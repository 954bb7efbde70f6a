/**
 * @file detail/alloc_error.hpp
 * @brief `rmm::detail::check_alloc`: the exception for a failed allocation, worded as the API
 * generation's RMM words it.
 *
 * RMM 25.02 reports an out-of-memory allocation as "out_of_memory: <what failed>"; RMM 25.10
 * names the reason and the request size:
 *
 * | failure (rmm-rs core message) | RMM 25.10 text |
 * | --- | --- |
 * | pool at its maximum size | `Maximum pool size exceeded (failed to allocate <size>): ...` |
 * | limiting adaptor over its limit | `Exceeded memory limit (failed to allocate <size>)` |
 * | fixed-size block too small | `Maximum allocation size exceeded (failed to allocate <size>)` |
 * | arena without room | `Maximum pool size exceeded (failed to allocate <size>): No room in
 * arena.` | | system / SAM headroom memory | `Failed to allocate <size> of memory: ...` | | the
 * runtime's allocation function | `CUDA error (failed to allocate <N> bytes) ...` (`HIP error` on
 * HIP) |
 *
 * rmm-rs keeps its core's own explanation after the RMM text, so the message says both what
 * RMM code searches for and why the request failed.
 */
#pragma once

#include <rmm/detail/check.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/detail/format.hpp>
#include <rmm/error.hpp>
#include <rmm/rmm.h>

#include <cstddef>
#include <cstring>
#include <string>

namespace rmm {
RMM_API_NAMESPACE_BEGIN
namespace detail {

#if RMM_DETAIL_API_OOM_REASON_TEXT
/**
 * @brief RMM 25.10's wording of an out-of-memory failure of a request of @p bytes, given the
 * core's explanation @p core.
 * @param core The rmm-rs core's message
 * @param bytes The request size
 * @return "<Reason> (failed to allocate <size>): <core>"
 */
inline std::string alloc_failure_text(std::string const& core, std::size_t bytes)
{
  if (core.find("maximum pool size exceeded") != std::string::npos) {
    return "Maximum pool size exceeded (failed to allocate " + format_bytes(bytes) + "): " + core;
  }
  if (core.find("arena_memory_resource") != std::string::npos) {
    return "Maximum pool size exceeded (failed to allocate " + format_bytes(bytes) +
           "): No room in arena. " + core;
  }
  if (core.find("system_memory_resource") != std::string::npos ||
      core.find("sam_headroom_memory_resource") != std::string::npos) {
    return "Failed to allocate " + format_bytes(bytes) + " of memory: " + core;
  }
  if (core.find("allocation limit") != std::string::npos) {
    return "Exceeded memory limit (failed to allocate " + format_bytes(bytes) + "): " + core;
  }
  if (core.find("exceeds the block size") != std::string::npos) {
    return "Maximum allocation size exceeded (failed to allocate " + format_bytes(bytes) +
           "): " + core;
  }
  char const* runtime = nullptr;
  bool const hip      = rmm_runtime_name(&runtime) == RMM_STATUS_SUCCESS && runtime != nullptr &&
                   std::strcmp(runtime, "hip") == 0;
  return std::string{hip ? "HIP" : "CUDA"} + " error (failed to allocate " + std::to_string(bytes) +
         " bytes): " + core;
}
#endif

/**
 * @brief Throws the exception for a failed allocation of @p bytes (nothing on success).
 *
 * Out of memory gives rmm::out_of_memory, worded as the generation's RMM words it (see the
 * file's description), and so does a request larger than a fixed-size resource's blocks, as in
 * RMM; other failures are reported as rmm::detail::check() reports them.
 * @param status The C ABI's status
 * @param bytes The request size
 */
inline void check_alloc(rmm_status_t status, std::size_t bytes)
{
  if (status == RMM_STATUS_SUCCESS) { return; }
  auto oom = status == RMM_STATUS_OUT_OF_MEMORY;
  if (!oom && status == RMM_STATUS_BAD_ALLOC) {
    // A request larger than a fixed-size resource's blocks is out of memory in RMM (its
    // "Maximum allocation size exceeded"); the core reports it as a plain allocation failure.
    oom = status_message(status).find("exceeds the block size") != std::string::npos;
  }
  if (!oom) { throw_status(status); }
#if RMM_DETAIL_API_OOM_REASON_TEXT
  throw rmm::out_of_memory{"out_of_memory: " + alloc_failure_text(status_message(status), bytes)};
#else
  (void)bytes;
  throw rmm::out_of_memory{"out_of_memory: " + status_message(status)};
#endif
}

}  // namespace detail
RMM_API_NAMESPACE_END
}  // namespace rmm
