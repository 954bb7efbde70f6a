# The common part of the consumer test projects (tests/cccl, tests/hip); not installed.
# Finds the installed package (without the GPU runtime interface: these projects name their
# runtime headers themselves), googletest and threads, turns testing on, and defines
# rmm_write_all_headers:
#   rmm_write_all_headers(<out> [EXCLUDE <header>...] [APPEND <text>])
# writes <out>, a translation unit that includes every public header of the installed
# package (rmm_INCLUDE_DIR) but those named after EXCLUDE, followed by the text after APPEND.
set(RMM_NO_GPU_RUNTIME_INTERFACE ON)
find_package(rmm REQUIRED)
find_package(GTest REQUIRED)
find_package(Threads REQUIRED)
include(GoogleTest)
enable_testing()

function(rmm_write_all_headers out)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "APPEND" "EXCLUDE")
  file(GLOB_RECURSE headers RELATIVE "${rmm_INCLUDE_DIR}" CONFIGURE_DEPENDS
       "${rmm_INCLUDE_DIR}/rmm/*.hpp" "${rmm_INCLUDE_DIR}/rmm/*.h")
  if(arg_EXCLUDE)
    list(REMOVE_ITEM headers ${arg_EXCLUDE})
  endif()
  list(SORT headers)
  set(content "// Generated: includes every public header of rmm")
  if(arg_EXCLUDE)
    string(JOIN ", " excluded ${arg_EXCLUDE})
    string(APPEND content " but ${excluded}")
  endif()
  string(APPEND content ".\n")
  foreach(header IN LISTS headers)
    string(APPEND content "#include <${header}>\n")
  endforeach()
  string(APPEND content "${arg_APPEND}")
  file(CONFIGURE OUTPUT "${out}" CONTENT "${content}")
endfunction()
