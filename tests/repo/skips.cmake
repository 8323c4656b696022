# Fails if a test can skip for a reason other than the absence of ../shared (the project's scenes and the material
# beside the repository; docs/design.md, "Testing rules") or a CPU without AVX2 (the AVX2 path cannot run there): a missing
# committed file or a failing command must fail the test. Every GTEST_SKIP line must name ../shared or AVX2.
# Run as: cmake -DSOURCE_DIR=<project> -P skips.cmake
file(GLOB_RECURSE files RELATIVE ${SOURCE_DIR} LIST_DIRECTORIES false ${SOURCE_DIR}/tests/*.h ${SOURCE_DIR}/tests/*.cpp)
set(problems "")
set(skips 0)
foreach(file IN LISTS files)
  file(STRINGS ${SOURCE_DIR}/${file} lines REGEX "GTEST_SKIP")
  foreach(line IN LISTS lines)
    math(EXPR skips "${skips} + 1")
    if(NOT line MATCHES "[.][.]/shared|AVX2")
      string(APPEND problems "${file}: ${line}\n")
    endif()
  endforeach()
endforeach()
if(skips EQUAL 0)
  message(FATAL_ERROR "no GTEST_SKIP found under ${SOURCE_DIR}/tests: wrong SOURCE_DIR?")
endif()
if(problems)
  message(FATAL_ERROR "tests that skip for a reason other than ../shared being absent (fail instead):\n${problems}")
endif()
message(STATUS "${skips} GTEST_SKIP lines, each for ../shared or AVX2")
