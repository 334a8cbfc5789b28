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
