# Flags for snowid's own targets only; global flags are never touched, so a
# parent project that uses add_subdirectory keeps its own.
function(snowid_target_options target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                             -Wno-sign-conversion)
  endif()
  if(SNOWID_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${SNOWID_SANITIZE} -fno-omit-frame-pointer
                                             -fno-sanitize-recover=all)
    target_link_options(${target} PRIVATE -fsanitize=${SNOWID_SANITIZE})
  endif()
endfunction()
