# How the tests share the machine when ctest runs many at once: the test
# presets run `ctest -j 8` on CI's two cores. Each test is in one class:
#
#   WAIT     waits: on etcd's leases, timers, child processes, databases;
#            or is over in milliseconds of CPU, as the unit, CLI and vector
#            tests are (a few ms each, most of it starting the process).
#            Such tests run side by side in whatever slots are free. The
#            default.
#   CORE     keeps one core busy for a while (property, fuzz and sequence
#            scenario tests). Each holds one of two locks, snowid_core_1 or
#            snowid_core_2 (by turns), so at most two run at once, one per
#            core, while waiting tests fill the other slots.
#   TIMED    waits, but asserts a wall-time bound of a few seconds or less (a
#            fence noticed within 1 s, buffers that outlast a restart): holds
#            one of the two locks as CORE does, so that beside it at most one
#            core is busy, never both.
#   MACHINE  keeps both cores busy (threads hammering one object, builds):
#            holds both locks, so no CORE, TIMED or other MACHINE test runs
#            beside it.
#   TIGHT    asserts a bound of 100 ms or less: holds both locks and all but
#            one of the slots, so at most one waiting test runs beside it, as
#            under `ctest -j 2`, but never a busy one.
#
# The classes also set COST, which orders the tests of a fresh build (the
# times of earlier runs do not replace it): TIGHT first, while the machine
# is quiet, then MACHINE one after another, then TIMED and CORE two at a
# time, with the waiting tests started alongside throughout, the longest
# first (COST on a WAIT test). ctest may still start a fixture's dependents
# (the PostgreSQL tests) as soon as the fixture is up. A test that needs both locks starts only when
# both are free at once, so putting those first keeps them from waiting for
# the last test that holds one. With fewer slots (ctest -j 2) the classes
# still exclude each other; TIGHT then runs alone.
set(SNOWID_TEST_SLOTS 8 CACHE STRING
    "ctest parallelism the test classes are laid out for (the test presets' jobs)")

# snowid_test_class_properties(<class> <out> [COST <n>] [LOCKS <lock>...]):
# the set_tests_properties arguments of <class> in <out>, CORE's lock left
# as "@LANE@".
function(snowid_test_class_properties class out)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "COST" "LOCKS")
  set(locks ${arg_LOCKS})
  set(processors 1)
  if(class STREQUAL "WAIT")
    set(cost 0)
  elseif(class STREQUAL "CORE")
    set(cost 1000)
    list(APPEND locks "snowid_core_@LANE@")
  elseif(class STREQUAL "TIMED")
    set(cost 2000)
    list(APPEND locks "snowid_core_@LANE@")
  elseif(class STREQUAL "MACHINE")
    set(cost 3000)
    list(APPEND locks snowid_core_1 snowid_core_2)
  elseif(class STREQUAL "TIGHT")
    set(cost 4000)
    list(APPEND locks snowid_core_1 snowid_core_2)
    math(EXPR processors "${SNOWID_TEST_SLOTS} - 1")
  else()
    message(FATAL_ERROR "unknown test class ${class}")
  endif()
  if(DEFINED arg_COST)
    set(cost ${arg_COST})
  endif()
  set(props "COST ${cost} PROCESSORS ${processors}")
  if(locks)
    string(APPEND props " RESOURCE_LOCK \"${locks}\"")
  endif()
  set(${out} "${props}" PARENT_SCOPE)
endfunction()

# snowid_test_class(<target> <class> [PREFIX <prefix>] [TESTS <name>...] [COST <n>]
#                   [LOCKS <lock>...])
#
# Puts the tests gtest_discover_tests found in <target> (with that
# TEST_PREFIX) in <class>, or only the named ones (Suite.Name, without the
# prefix), which then stay out of the class given to all of <target>'s
# tests. Named tests must be defined in <target>'s sources, so that a rename
# cannot drop a test out of its class unnoticed. COST replaces the class's;
# LOCKS are resource locks the tests hold besides the class's. The
# properties are set when ctest reads the discovered tests, by a file that
# this directory's calls write when the directory has been read.
function(snowid_test_class target class)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "PREFIX;COST" "TESTS;LOCKS")
  set(extra "")
  if(DEFINED arg_COST)
    list(APPEND extra COST ${arg_COST})
  endif()
  if(arg_LOCKS)
    list(APPEND extra LOCKS ${arg_LOCKS})
  endif()
  snowid_test_class_properties(${class} props ${extra})

  get_directory_property(scheduled SNOWID_TEST_CLASS_SCHEDULED)
  if(NOT scheduled)
    set_directory_properties(PROPERTIES SNOWID_TEST_CLASS_SCHEDULED ON)
    cmake_language(DEFER CALL snowid_test_class_write_)
  endif()

  if(NOT arg_TESTS)
    # All of the target's tests but the named ones, from the list
    # gtest_discover_tests leaves in <target>_TESTS.
    snowid_test_next_lane(lane)
    string(REPLACE "@LANE@" "\${snowid_lane}" props "${props}")
    string(CONCAT script
      "set(snowid_lane ${lane})\n"
      "foreach(snowid_test IN LISTS ${target}_TESTS)\n"
      "  list(FIND snowid_named \"\${snowid_test}\" snowid_at)\n"
      "  if(snowid_at EQUAL -1)\n"
      "    set_tests_properties(\"\${snowid_test}\" PROPERTIES ${props})\n"
      "    math(EXPR snowid_lane \"3 - \${snowid_lane}\")\n"
      "  endif()\n"
      "endforeach()\n")
    set_property(DIRECTORY APPEND_STRING PROPERTY SNOWID_TEST_CLASS_ALL "${script}")
    return()
  endif()

  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  set(code "")
  foreach(source IN LISTS sources)
    if(NOT IS_ABSOLUTE "${source}")
      set(source "${source_dir}/${source}")
    endif()
    if(EXISTS "${source}")
      file(READ "${source}" text)
      string(APPEND code "${text}")
    endif()
  endforeach()
  foreach(test IN LISTS arg_TESTS)
    string(REPLACE "." ";" parts "${test}")
    list(GET parts 0 suite)
    list(GET parts 1 name)
    if(NOT code MATCHES "TEST(_F)?\\([ \n]*${suite},[ \n]*${name}\\)")
      message(FATAL_ERROR "snowid_test_class: no test ${test} in the sources of ${target}")
    endif()
    snowid_test_next_lane(lane)
    string(REPLACE "@LANE@" "${lane}" test_props "${props}")
    set_property(DIRECTORY APPEND PROPERTY SNOWID_TEST_CLASS_NAMED "${arg_PREFIX}${test}")
    set_property(DIRECTORY APPEND_STRING PROPERTY SNOWID_TEST_CLASS_ONE
      "set_tests_properties([==[${arg_PREFIX}${test}]==] PROPERTIES ${test_props})\n")
  endforeach()
endfunction()

# Writes the file of this directory's snowid_test_class calls and has ctest
# read it after the discovered tests.
function(snowid_test_class_write_)
  get_directory_property(named SNOWID_TEST_CLASS_NAMED)
  get_directory_property(one SNOWID_TEST_CLASS_ONE)
  get_directory_property(all SNOWID_TEST_CLASS_ALL)
  set(file "${CMAKE_CURRENT_BINARY_DIR}/snowid_test_classes.cmake")
  file(WRITE "${file}" "set(snowid_named [==[${named}]==])\n${one}${all}")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${file}")
endfunction()

# snowid_add_test_class(<class> TESTS <name>... [COST <n>] [LOCKS <lock>...]):
# the same for tests added with add_test.
function(snowid_add_test_class class)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "COST" "TESTS;LOCKS")
  set(extra "")
  if(DEFINED arg_COST)
    list(APPEND extra COST ${arg_COST})
  endif()
  if(arg_LOCKS)
    list(APPEND extra LOCKS ${arg_LOCKS})
  endif()
  snowid_test_class_properties(${class} props ${extra})
  foreach(test IN LISTS arg_TESTS)
    snowid_test_next_lane(lane)
    string(REPLACE "@LANE@" "${lane}" test_props "${props}")
    # The properties as one string of arguments, as a test file holds them.
    cmake_language(EVAL CODE "set_tests_properties(\"${test}\" PROPERTIES ${test_props})")
  endforeach()
endfunction()

# snowid_test_next_lane(<out>): 1 and 2 by turns over the whole project, so
# that one-test targets and single tests do not all take the same lock.
function(snowid_test_next_lane out)
  get_property(lane GLOBAL PROPERTY SNOWID_TEST_NEXT_LANE)
  if(NOT lane)
    set(lane 1)
  endif()
  math(EXPR next "3 - ${lane}")
  set_property(GLOBAL PROPERTY SNOWID_TEST_NEXT_LANE ${next})
  set(${out} ${lane} PARENT_SCOPE)
endfunction()
