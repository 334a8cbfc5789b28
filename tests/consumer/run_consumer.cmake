# Builds one consumer project against snowid and runs it. Run with cmake -P:
#
#   -DMODE=find_package      configure, build and install snowid into a fresh
#                            prefix, check the install tree, then build the
#                            find_package consumer (and a pkg-config one)
#   -DMODE=add_subdirectory  build the add_subdirectory consumer from source
#   -DSNOWID_SOURCE_DIR=...  the snowid source tree
#   -DCONSUMER_DIR=...       tests/consumer
#   -DWORK_DIR=...           scratch directory, emptied first
#   -DCXX_COMPILER=...       the compiler of the main build
#   -DGENERATOR=...          and its generator (optionally -DMAKE_PROGRAM=...)
#   -DJOBS=2                 build parallelism
cmake_minimum_required(VERSION 3.25)

foreach(required MODE SNOWID_SOURCE_DIR CONSUMER_DIR WORK_DIR CXX_COMPILER GENERATOR)
  if(NOT DEFINED ${required} OR "${${required}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer.cmake needs -D${required}=...")
  endif()
endforeach()
if(NOT JOBS)
  set(JOBS 2)
endif()

set(common_args -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
                -DCMAKE_BUILD_TYPE=Release)
if(MAKE_PROGRAM)
  list(APPEND common_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()

function(run what)
  message(STATUS "${what}: ${ARGN}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc})")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

if(MODE STREQUAL "add_subdirectory")
  run("configure the consumer"
      "${CMAKE_COMMAND}" -S "${CONSUMER_DIR}/add_subdirectory" -B "${WORK_DIR}/build"
      ${common_args} "-DSNOWID_SOURCE_DIR=${SNOWID_SOURCE_DIR}")
  run("build the consumer" "${CMAKE_COMMAND}" --build "${WORK_DIR}/build" --parallel ${JOBS})
  run("run the consumer" "${WORK_DIR}/build/consumer")
  return()
endif()

if(NOT MODE STREQUAL "find_package")
  message(FATAL_ERROR "MODE must be find_package or add_subdirectory, not \"${MODE}\"")
endif()

set(prefix "${WORK_DIR}/prefix")
run("configure snowid"
    "${CMAKE_COMMAND}" -S "${SNOWID_SOURCE_DIR}" -B "${WORK_DIR}/snowid-build" ${common_args}
    -DSNOWID_BUILD_TESTS=OFF -DSNOWID_BUILD_TOOLS=OFF -DSNOWID_BUILD_BENCHMARKS=OFF
    -DSNOWID_BUILD_FUZZERS=OFF -DSNOWID_BUILD_DAEMON=OFF -DSNOWID_INSTALL=ON -DSNOWID_SANITIZE=
    "-DCMAKE_INSTALL_PREFIX=${prefix}" -DCMAKE_INSTALL_LIBDIR=lib)
run("build snowid" "${CMAKE_COMMAND}" --build "${WORK_DIR}/snowid-build" --parallel ${JOBS})
run("install snowid" "${CMAKE_COMMAND}" --install "${WORK_DIR}/snowid-build")

# The install tree: every public header, both libraries, the package files.
file(GLOB_RECURSE public_headers RELATIVE "${SNOWID_SOURCE_DIR}/include"
     "${SNOWID_SOURCE_DIR}/include/snowid/*.h")
set(expected lib/libsnowid_core.a lib/libsnowid_testing.a lib/cmake/snowid/snowidConfig.cmake
             lib/cmake/snowid/snowidConfigVersion.cmake lib/cmake/snowid/snowidTargets.cmake
             lib/pkgconfig/snowid.pc)
foreach(h IN LISTS public_headers)
  list(APPEND expected "include/${h}")
endforeach()
set(missing "")
foreach(f IN LISTS expected)
  if(NOT EXISTS "${prefix}/${f}")
    list(APPEND missing "${f}")
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "the install tree lacks: ${missing}")
endif()
file(GLOB_RECURSE installed_headers RELATIVE "${prefix}/include" "${prefix}/include/*")
foreach(h IN LISTS installed_headers)
  if(NOT h IN_LIST public_headers)
    message(FATAL_ERROR "the install tree has a header that is not public: include/${h}")
  endif()
endforeach()
message(STATUS "install tree: ${expected}")

run("configure the consumer"
    "${CMAKE_COMMAND}" -S "${CONSUMER_DIR}/find_package" -B "${WORK_DIR}/build" ${common_args}
    "-DCMAKE_PREFIX_PATH=${prefix}")
run("build the consumer" "${CMAKE_COMMAND}" --build "${WORK_DIR}/build" --parallel ${JOBS})
run("run the consumer" "${WORK_DIR}/build/consumer")

# pkg-config users get the same library from snowid.pc alone.
find_program(PKG_CONFIG pkg-config)
if(NOT PKG_CONFIG)
  message(STATUS "pkg-config not found: the snowid.pc check is skipped")
  return()
endif()
set(ENV{PKG_CONFIG_PATH} "${prefix}/lib/pkgconfig")
execute_process(COMMAND "${PKG_CONFIG}" --cflags --libs snowid OUTPUT_VARIABLE pc_flags
                RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config cannot read snowid.pc")
endif()
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
run("build with pkg-config flags"
    "${CXX_COMPILER}" "${CONSUMER_DIR}/pkg_config/main.cc" ${pc_flags} -o "${WORK_DIR}/pc_consumer")
run("run the pkg-config consumer" "${WORK_DIR}/pc_consumer")
