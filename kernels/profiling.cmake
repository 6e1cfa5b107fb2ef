# CUPTI for the built-in trace (kernels/cupti_trace.cu) and NVTX3 (header
# only, next to the CUDA headers) for the profile ranges. Included from the
# CUDA branch of the top CMakeLists.txt after lstmcheck_cuda_objs exists.
if(TARGET CUDA::cupti)
  set(LSTMCHECK_CUPTI_LIBRARY CUDA::cupti)
  target_link_libraries(lstmcheck_cuda_objs PRIVATE CUDA::cupti)
else()
  find_library(LSTMCHECK_CUPTI_LIBRARY NAMES cupti
    HINTS ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/lib64 ${CUDAToolkit_LIBRARY_DIR}
          /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64 /usr/local/cuda/lib)
  find_path(LSTMCHECK_CUPTI_INCLUDE_DIR cupti.h
    HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/extras/CUPTI/include /usr/local/cuda/include)
  if(NOT LSTMCHECK_CUPTI_LIBRARY OR NOT LSTMCHECK_CUPTI_INCLUDE_DIR)
    message(FATAL_ERROR "CUPTI not found (it ships with the CUDA toolkit), or configure with -DLSTMCHECK_CUDA=OFF")
  endif()
  target_include_directories(lstmcheck_cuda_objs PRIVATE ${LSTMCHECK_CUPTI_INCLUDE_DIR})
endif()
message(STATUS "lstmcheck: CUPTI ${LSTMCHECK_CUPTI_LIBRARY}")
# NVTX3 loads its tool with dlopen
list(APPEND LSTMCHECK_CUDA_LINK_LIBRARIES ${LSTMCHECK_CUPTI_LIBRARY} ${CMAKE_DL_LIBS})
