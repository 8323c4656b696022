# Fails if a text file of the source tree cites material that is not in the repository: the notes in ../shared
# (its spec/ and style/ folders and its design notes; docs/design.md, "The repository stands alone"). A clone must
# explain itself: cite docs/*.md or public sources instead. Run as: cmake -DSOURCE_DIR=<project> -P citations.cmake
set(forbidden "shared/(spec|style)/|shared/design[.]md|(xe3-stoc|rdna4-isa-occupancy)[.]md")
file(GLOB_RECURSE files RELATIVE ${SOURCE_DIR} LIST_DIRECTORIES false
  ${SOURCE_DIR}/*.h ${SOURCE_DIR}/*.cpp ${SOURCE_DIR}/*.md ${SOURCE_DIR}/*.txt ${SOURCE_DIR}/*.cmake
  ${SOURCE_DIR}/*.in ${SOURCE_DIR}/*.py ${SOURCE_DIR}/*.sh ${SOURCE_DIR}/*.json)
set(problems "")
foreach(file IN LISTS files)
  if(file MATCHES "^(build[^/]*|\\.git)/")  # build trees made inside the source tree
    continue()
  endif()
  file(STRINGS ${SOURCE_DIR}/${file} lines REGEX "${forbidden}")
  foreach(line IN LISTS lines)
    string(APPEND problems "${file}: ${line}\n")
  endforeach()
endforeach()
list(LENGTH files count)
if(count LESS 100)
  message(FATAL_ERROR "found only ${count} files under ${SOURCE_DIR}: wrong SOURCE_DIR?")
endif()
if(problems)
  message(FATAL_ERROR "citations of material outside the repository (cite docs/*.md or a public source):\n${problems}")
endif()
message(STATUS "${count} files, no citation of material outside the repository")
