# GPU tests and CTest's resource allocation (docs/gpu-resources.md).
#
# Every test that needs a GPU is added with lstmcheck_gpu_test: it is labelled
# gpu, declares a `gpus` resource, and runs through ci/ctest-gpu.sh, which
# hands the GPU CTest allocated to it to CUDA (CUDA_VISIBLE_DEVICES). Without a
# resource spec (plain `ctest`) nothing is allocated and every test sees every
# GPU, as before.

# A GPU's slots: a numerics test takes one (several share a GPU: small shapes,
# one context each), a timed test takes them all (nothing else on its GPU).
# ci/gpu-resources.sh reads the largest request from the build's tests, so the
# spec's slots per GPU follow this one number.
set(LSTMCHECK_GPU_SLOTS 4)
# (this file's own folder: tests/unit/gpu_resources.sh includes it from a scratch project)
set(LSTMCHECK_GPU_LAUNCHER ${CMAKE_CURRENT_LIST_DIR}/../ci/ctest-gpu.sh)

# lstmcheck_gpu_test(NAME name [WHOLE_GPU] LABELS label... COMMAND command...)
# WHOLE_GPU: a timing, alone on its GPU. With a resource spec configured
# (cmake -DCTEST_RESOURCE_SPEC_FILE=...) CTest guarantees that, so timed GPU
# tests run in parallel, one per GPU; otherwise they are RUN_SERIAL, since
# plain `ctest` would put them beside the other tests on the one GPU.
# Callers add other properties, never LABELS, RESOURCE_GROUPS or RUN_SERIAL.
function(lstmcheck_gpu_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "WHOLE_GPU" "NAME" "LABELS;COMMAND")
  if(NOT arg_NAME OR NOT arg_LABELS OR NOT arg_COMMAND OR arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "lstmcheck_gpu_test(NAME name [WHOLE_GPU] LABELS ... COMMAND ...): '${ARGV}'")
  endif()
  # add_test turns a target's name into its file only as the first word of COMMAND
  list(POP_FRONT arg_COMMAND program)
  if(TARGET ${program})
    set(program $<TARGET_FILE:${program}>)
  endif()
  add_test(NAME ${arg_NAME} COMMAND sh ${LSTMCHECK_GPU_LAUNCHER} ${program} ${arg_COMMAND})
  set(slots 1)
  if(arg_WHOLE_GPU)
    set(slots ${LSTMCHECK_GPU_SLOTS})
  endif()
  set_tests_properties(${arg_NAME} PROPERTIES LABELS "${arg_LABELS};gpu" RESOURCE_GROUPS "gpus:${slots}")
  if(arg_WHOLE_GPU AND NOT CTEST_RESOURCE_SPEC_FILE)
    set_tests_properties(${arg_NAME} PROPERTIES RUN_SERIAL TRUE)
  endif()
endfunction()
