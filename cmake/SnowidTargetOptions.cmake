# Flags for snowid's own targets only; global flags are never touched, so a
# parent project that uses add_subdirectory keeps its own.

# The private lock wrappers and thread-safety macros (src/sync), on every
# target's include path; never installed, so no public header includes them.
get_filename_component(SNOWID_SYNC_INCLUDE_DIR "${CMAKE_CURRENT_LIST_DIR}/../src/sync" ABSOLUTE)

function(snowid_target_options target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                             -Wno-sign-conversion)
  endif()
  target_include_directories(${target} PRIVATE ${SNOWID_SYNC_INCLUDE_DIR})
  # The lock rules (GUARDED_BY, REQUIRES) are checked by clang only; a
  # violation fails the build, and the asan and fuzz presets build with clang.
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    target_compile_options(${target} PRIVATE -Wthread-safety -Werror=thread-safety)
  endif()
  if(SNOWID_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${SNOWID_SANITIZE} -fno-omit-frame-pointer
                                             -fno-sanitize-recover=all)
    target_link_options(${target} PRIVATE -fsanitize=${SNOWID_SANITIZE})
  endif()
endfunction()
