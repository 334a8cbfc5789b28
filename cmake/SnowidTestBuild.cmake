# Build settings for the test executables as a whole.
#
# snowid_lighten_test_builds(): in an optimised build (RelWithDebInfo,
# Release, MinSizeRel), every executable that links GoogleTest compiles its
# own sources at -Og. What a test exercises lives in the libraries, which keep
# the build type's optimisation, so the figures the tests check and the code
# they check are the ones users run; only the test bodies (assertion macros,
# fixtures, containers of results) lose inlining. With GCC that halves the
# compile time of a test file, and the test files are most of the build.
# Called once from the top-level CMakeLists.txt, after every directory, so a
# new test target needs nothing of its own.
function(snowid_lighten_test_builds)
  snowid_collect_targets_(targets "${PROJECT_SOURCE_DIR}")
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type STREQUAL "EXECUTABLE")
      continue()
    endif()
    get_target_property(libraries ${target} LINK_LIBRARIES)
    if(libraries MATCHES "GTest::")
      target_compile_options(${target}
                             PRIVATE $<$<CONFIG:RelWithDebInfo,Release,MinSizeRel>:-Og>)
    endif()
  endforeach()
endfunction()

# snowid_collect_targets_(<out> <dir>): the targets defined in <dir> and the
# directories below it.
function(snowid_collect_targets_ out dir)
  get_property(found DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    snowid_collect_targets_(more "${subdir}")
    list(APPEND found ${more})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# snowid_discover_tests(<target> LABELS <label>... [TIMEOUT <s>] [<gtest_discover_tests args>...]):
# gtest_discover_tests, for a target whose tests carry more than one label.
# gtest_discover_tests writes its PROPERTIES flattened (CMake 3.25: a list
# value such as LABELS "a;b" comes out as the words `LABELS a b`, which makes
# `b` a property name and drops whatever follows, TIMEOUT included), so the
# labels and the timeout are set by a file of our own that ctest reads after
# the discovered tests, from the list of names the discovery leaves behind.
function(snowid_discover_tests target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "TIMEOUT" "LABELS")
  if(NOT arg_LABELS)
    message(FATAL_ERROR "snowid_discover_tests(${target}): LABELS is required")
  endif()
  set(list_name ${target}_TESTS)
  gtest_discover_tests(${target} TEST_LIST ${list_name} ${arg_UNPARSED_ARGUMENTS})
  set(timeout "")
  if(arg_TIMEOUT)
    set(timeout " TIMEOUT ${arg_TIMEOUT}")
  endif()
  set(file ${CMAKE_CURRENT_BINARY_DIR}/${target}_properties.cmake)
  file(WRITE ${file}
       "if(${list_name})\n"
       "  set_tests_properties(\${${list_name}} PROPERTIES LABELS \"${arg_LABELS}\"${timeout})\n"
       "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${file})
endfunction()
