# Runs EXE with ARGS; fails unless it exits with CODE and its output
# (stdout and stderr together) contains PATTERN (a list: every item).
# With REFUSAL set: also nothing on stdout and exactly one line on stderr
# (bad input refused before any work).
# With NOISE_TRIES set (a command that records baselines): a run in which
# `baseline update` refused an entry for the host's noise (exit 3's line,
# docs/baselines.md) is the host's state, not what is tested: tried again,
# and after NOISE_TRIES such runs the test says NOISE_SKIP_LINE, which the
# test's SKIP_REGULAR_EXPRESSION turns into a skip.
set(NOISE_SKIP_LINE "SKIP: the host's noise refused a baseline entry in every try")
set(noise_line "cannot measure here now")
if(NOT NOISE_TRIES)
  set(NOISE_TRIES 1)
endif()
foreach(try RANGE 1 ${NOISE_TRIES})
  execute_process(COMMAND ${EXE} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(FIND "${out}${err}" "${noise_line}" noisy)
  if(NOISE_TRIES EQUAL 1 OR noisy EQUAL -1)
    break()
  endif()
endforeach()
if(NOT NOISE_TRIES EQUAL 1 AND NOT noisy EQUAL -1)
  message(FATAL_ERROR "${NOISE_SKIP_LINE} (${NOISE_TRIES}); the last run said:\n${out}${err}")
endif()
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
