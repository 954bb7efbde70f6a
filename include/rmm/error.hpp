/**
 * @file error.hpp
 * @brief Exception types thrown by the rmm C++ wrapper (the hipMM/RMM 25.02 set).
 */
#pragma once

#include <rmm/detail/export.hpp>

#include <new>
#include <stdexcept>
#include <string>

namespace rmm {
RMM_API_NAMESPACE_BEGIN

/**
 * @brief Thrown when a precondition is violated: a bad argument, an unsupported operation,
 * or an internal invariant that does not hold.
 */
class logic_error : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/**
 * @brief Thrown when the GPU runtime (HIP, CUDA or the host emulation) reports an error,
 * or when no runtime could be loaded.
 */
class cuda_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/**
 * @brief Thrown when memory cannot be allocated.
 *
 * `what()` returns `"std::bad_alloc: "` followed by the message given at construction.
 */
class bad_alloc : public std::bad_alloc {
 public:
  /**
   * @brief Constructs a bad_alloc carrying @p msg.
   * @param msg Description of the failure
   */
  explicit bad_alloc(const char* msg) : what_{std::string{std::bad_alloc::what()} + ": " + msg} {}

  /**
   * @brief Constructs a bad_alloc carrying @p msg.
   * @param msg Description of the failure
   */
  explicit bad_alloc(std::string const& msg) : bad_alloc{msg.c_str()} {}

  /**
   * @brief The explanatory message.
   * @return A NUL-terminated message, valid for the lifetime of the exception
   */
  [[nodiscard]] const char* what() const noexcept override { return what_.c_str(); }

 private:
  std::string what_;
};

/**
 * @brief Thrown when an allocation fails because the resource (or the device) has no memory
 * left for it. A specialization of rmm::bad_alloc.
 */
class out_of_memory : public bad_alloc {
 public:
  using bad_alloc::bad_alloc;
};

/**
 * @brief Thrown when an index or size is outside the valid range.
 */
class out_of_range : public std::out_of_range {
 public:
  using std::out_of_range::out_of_range;
};

#if RMM_DETAIL_API_INVALID_ARGUMENT
/**
 * @brief Exception thrown when an argument is invalid, e.g. an alignment that is not a power
 * of two (RMM 26.06).
 */
class invalid_argument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};
#endif

RMM_API_NAMESPACE_END
}  // namespace rmm
