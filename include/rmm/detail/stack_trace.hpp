/**
 * @file detail/stack_trace.hpp
 * @brief `rmm::detail::stack_trace`: captures the calling thread's stack when constructed and
 * prints it, one frame a line, with `operator<<` (RMM's `rmm/detail/stack_trace.hpp`).
 *
 * Stack capture needs glibc's `<execinfo.h>` (`RMM_ENABLE_STACK_TRACES` is defined when it is
 * used); elsewhere the trace prints "stack traces disabled".
 */
#pragma once

#include <rmm/detail/error.hpp>
#include <rmm/detail/export.hpp>

#include <ostream>
#include <sstream>
#include <string>
#include <utility>

#if defined(__GNUC__) && !defined(__MINGW32__) && !defined(__MINGW64__) && defined(__has_include)
#if __has_include(<execinfo.h>) && __has_include(<dlfcn.h>) && __has_include(<cxxabi.h>)
/// @brief Defined when stack traces are captured.
#define RMM_ENABLE_STACK_TRACES
#endif
#endif

#if defined(RMM_ENABLE_STACK_TRACES)
#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <array>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <vector>
#endif

namespace RMM_EXPORT rmm {
RMM_API_NAMESPACE_BEGIN
namespace detail {

/**
 * @brief The call stack at the point of construction (up to 64 frames).
 *
 * Printing resolves each frame to "#i in function from library" (demangled when possible),
 * or to the raw `backtrace_symbols` text when the address cannot be resolved.
 */
class stack_trace {
 public:
  /// @brief Captures the current stack.
  stack_trace()
  {
#if defined(RMM_ENABLE_STACK_TRACES)
    constexpr int max_depth = 64;
    std::array<void*, max_depth> frames{};
    int const depth = ::backtrace(frames.data(), max_depth);
    frames_.assign(frames.begin(), frames.begin() + (depth > 0 ? depth : 0));
#endif
  }

  /**
   * @brief A stack captured elsewhere, already rendered as text (the Rust core's tracking
   * adaptor captures its own), printed as is.
   * @param text The rendered stack, one frame a line
   */
  explicit stack_trace(std::string text) : text_{std::move(text)} {}

  /**
   * @brief Writes the captured stack to @p os, one frame a line.
   * @param os Output stream
   * @param trace The stack to print
   * @return @p os
   */
  friend std::ostream& operator<<(std::ostream& os, stack_trace const& trace)
  {
    if (!trace.text_.empty()) { return os << trace.text_; }
#if defined(RMM_ENABLE_STACK_TRACES)
    std::unique_ptr<char*, void (*)(void*)> symbols{
      ::backtrace_symbols(trace.frames_.data(), static_cast<int>(trace.frames_.size())),
      &std::free};
    RMM_EXPECTS(symbols != nullptr, "Unexpected null stack trace symbols");
    for (std::size_t i = 0; i < trace.frames_.size(); ++i) {
      os << "#" << i << " in " << describe(trace.frames_[i], symbols.get()[i]) << std::endl;
    }
#else
    (void)trace;
    os << "stack traces disabled" << std::endl;
#endif
    return os;
  }

 private:
#if defined(RMM_ENABLE_STACK_TRACES)
  static std::string describe(void* frame, char const* fallback)
  {
    Dl_info info{};
    if (::dladdr(frame, &info) != 0 && info.dli_sname != nullptr) {
      int status = -1;
      std::unique_ptr<char, void (*)(void*)> demangled{
        abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status), &std::free};
      std::string name = (status == 0 && demangled) ? demangled.get() : info.dli_sname;
      return name + " from " + (info.dli_fname != nullptr ? info.dli_fname : "?");
    }
    return fallback != nullptr ? std::string{fallback} : std::string{"?"};
  }

  std::vector<void*> frames_;
#endif
  std::string text_;
};

}  // namespace detail
RMM_API_NAMESPACE_END
}  // namespace rmm
