# Writes a C++ source that holds SQL files as string constants, so that the
# files under sql/ are the single source of the statements the stores run.
# Run with cmake -P:
#   -DOUTPUT=path.cc          the source to write
#   -DNAMESPACE=a::b          the namespace of the constants
#   -DENTRIES=kName=file.sql|kOther=other.sql
# Each constant is a `const std::string_view` declared in sql_texts.h.
cmake_minimum_required(VERSION 3.25)

foreach(required OUTPUT NAMESPACE ENTRIES)
  if(NOT DEFINED ${required} OR "${${required}}" STREQUAL "")
    message(FATAL_ERROR "embed_sql.cmake needs -D${required}=...")
  endif()
endforeach()

string(REPLACE "|" ";" ENTRIES "${ENTRIES}")
set(delimiter "snowid_sql")
set(body "// Generated from the SQL files named below by embed_sql.cmake. Do not edit.\n")
string(APPEND body "#include \"sql_texts.h\"\n\nnamespace ${NAMESPACE} {\n")
foreach(entry IN LISTS ENTRIES)
  if(NOT entry MATCHES "^([A-Za-z_][A-Za-z0-9_]*)=(.+)$")
    message(FATAL_ERROR "embed_sql.cmake: an entry must be NAME=FILE, not \"${entry}\"")
  endif()
  set(name "${CMAKE_MATCH_1}")
  set(file "${CMAKE_MATCH_2}")
  file(READ "${file}" text)
  string(FIND "${text}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "embed_sql.cmake: ${file} contains the literal's delimiter")
  endif()
  get_filename_component(base "${file}" NAME)
  string(APPEND body "\n// sql/${base}\nconst std::string_view ${name} = R\"${delimiter}(${text})${delimiter}\";\n")
endforeach()
string(APPEND body "\n}  // namespace ${NAMESPACE}\n")

# Rewrite only on change, so that an unchanged SQL file rebuilds nothing.
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL body)
  file(WRITE "${OUTPUT}" "${body}")
endif()
