// rmm/detail/export.hpp, rmm/detail/exec_check_disable.hpp, rmm/detail/thrust_namespace.h.
#include <rmm/aligned.hpp>
#include <rmm/detail/exec_check_disable.hpp>
#include <rmm/detail/export.hpp>
#include <rmm/detail/thrust_namespace.h>

#include <gtest/gtest.h>

// Downstream code reopens rmm the way RMM's own headers do.
namespace RMM_NAMESPACE {
namespace compat_test {
RMM_EXPORT inline int exported_answer() { return 42; }
RMM_HIDDEN inline int hidden_answer() { return 7; }
}  // namespace compat_test
}  // namespace RMM_NAMESPACE

RMM_EXEC_CHECK_DISABLE
template <typename T>
T twice(T v)
{
  return v + v;
}

#define RMM_COMPAT_STR2(x) #x
#define RMM_COMPAT_STR(x)  RMM_COMPAT_STR2(x)

TEST(ExportCompat, NamespaceMacroNamesRmm)
{
  EXPECT_EQ(rmm::compat_test::exported_answer(), 42);
  EXPECT_EQ(rmm::compat_test::hidden_answer(), 7);
  // Names declared in the reopened namespace mix with rmm's own.
  EXPECT_EQ(rmm::CUDA_ALLOCATION_ALIGNMENT, 256U);
  EXPECT_EQ(twice(21), 42);
}

TEST(ExportCompat, ThrustQualifier)
{
  std::string const q = RMM_COMPAT_STR(THRUST_NS_QUALIFIER);
  EXPECT_NE(q.find("thrust"), std::string::npos);
}

#include <rmm/detail/error.hpp>

TEST(ExportCompat, ErrorMacroHelpers)
{
  EXPECT_STREQ(RMM_STRINGIFY(abc), "abc");
  EXPECT_STREQ(STRINGIFY_DETAIL(x + y), "x + y");
  EXPECT_EQ(GET_RMM_FAIL_MACRO(1, 2, 3, unused), 3);
  EXPECT_EQ(GET_RMM_EXPECTS_MACRO(1, 2, 3, 4, unused), 4);
  EXPECT_THROW(RMM_EXPECTS(false, "msg"), rmm::logic_error);
  EXPECT_THROW(RMM_EXPECTS(false, "msg", rmm::out_of_memory), rmm::out_of_memory);
  EXPECT_THROW(RMM_FAIL("msg"), rmm::logic_error);
  EXPECT_THROW(RMM_FAIL("msg", rmm::bad_alloc), rmm::bad_alloc);
}
