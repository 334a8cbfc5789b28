# Runs one fuzzer for a bounded time, as a ctest test. Run with cmake -P:
#
#   -DFUZZER=<executable>  -DSECONDS=<default run time>
#   -DCORPUS=<dir that receives new inputs>  -DSEEDS=<read-only seed dir>
#   -DOPTIONS=<further libFuzzer flags, separated by |>
#
# SNOWID_FUZZ_SECONDS in the environment, when set, replaces SECONDS, so that
# a CI job can choose the time without reconfiguring.
cmake_minimum_required(VERSION 3.25)

if(DEFINED ENV{SNOWID_FUZZ_SECONDS} AND NOT "$ENV{SNOWID_FUZZ_SECONDS}" STREQUAL "")
  set(SECONDS "$ENV{SNOWID_FUZZ_SECONDS}")
endif()
if(NOT SECONDS MATCHES "^[1-9][0-9]*$")
  message(FATAL_ERROR "the fuzzing time must be a positive number of seconds, not \"${SECONDS}\"")
endif()
string(REPLACE "|" ";" options "${OPTIONS}")

message(STATUS "${FUZZER}: ${SECONDS} s")
execute_process(COMMAND "${FUZZER}" -max_total_time=${SECONDS} ${options} "${CORPUS}" "${SEEDS}"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${FUZZER} stopped on a failing input (exit ${rc}); see the report above")
endif()
