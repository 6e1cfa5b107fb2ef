# Runs EXE with ARGS; fails unless it exits with CODE and its output
# (stdout and stderr together) contains PATTERN (a list: every item).
# With REFUSAL set: also nothing on stdout and exactly one line on stderr
# (bad input refused before any work).
execute_process(COMMAND ${EXE} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT "${rc}" STREQUAL "${CODE}")
  message(FATAL_ERROR "exit code ${rc}, expected ${CODE}\nstdout: ${out}\nstderr: ${err}")
endif()
foreach(pattern IN LISTS PATTERN)
  string(FIND "${out}${err}" "${pattern}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "output lacks '${pattern}'\nstdout: ${out}\nstderr: ${err}")
  endif()
endforeach()
if(REFUSAL)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines nlines)
  if(NOT "${out}" STREQUAL "" OR NOT nlines EQUAL 1)
    message(FATAL_ERROR "a refusal is one line on stderr and nothing on stdout\nstdout: ${out}\nstderr: ${err}")
  endif()
endif()
