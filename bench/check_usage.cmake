# Fails unless a bench parses its command line: --help prints the usage and exits 0, and an unknown option or a value
# out of range exits 2 naming it (bench_common.h, parse_command_line), rather than being taken for a scene file.
# Run as: cmake -DBENCH=<executable> -P check_usage.cmake
execute_process(COMMAND ${BENCH} --help RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "Usage:")
  message(FATAL_ERROR "${BENCH} --help: exit ${rc}, stdout:\n${out}\nstderr:\n${err}")
endif()
foreach(args "--no-such-option" "--threads;-1")
  list(GET args 0 option)
  execute_process(COMMAND ${BENCH} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "${option}")
    message(FATAL_ERROR "${BENCH} ${args}: exit ${rc} (expected 2), stdout:\n${out}\nstderr:\n${err}")
  endif()
endforeach()
