# Runs EXE with ARGS; fails unless it exits with CODE and its output
# (stdout and stderr together) contains PATTERN.
execute_process(COMMAND ${EXE} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT "${rc}" STREQUAL "${CODE}")
  message(FATAL_ERROR "exit code ${rc}, expected ${CODE}\nstdout: ${out}\nstderr: ${err}")
endif()
string(FIND "${out}${err}" "${PATTERN}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "output lacks '${PATTERN}'\nstdout: ${out}\nstderr: ${err}")
endif()
