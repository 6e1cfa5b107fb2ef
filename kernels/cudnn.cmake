# cuDNN for the cuDNN runners: found under $CUDNN_ROOT, /usr/local/cuda
# (headers in include/, libraries in lib/) or the system paths.
find_path(CUDNN_INCLUDE_DIR cudnn.h
  HINTS $ENV{CUDNN_ROOT}/include /usr/local/cuda/include)
find_library(CUDNN_LIBRARY NAMES cudnn
  HINTS $ENV{CUDNN_ROOT}/lib $ENV{CUDNN_ROOT}/lib64 /usr/local/cuda/lib /usr/local/cuda/lib64)
if(NOT CUDNN_INCLUDE_DIR OR NOT CUDNN_LIBRARY)
  message(FATAL_ERROR "cuDNN not found (set CUDNN_ROOT, or configure with -DLSTMCHECK_CUDA=OFF)")
endif()
target_include_directories(lstmcheck_cuda_objs PRIVATE ${CUDNN_INCLUDE_DIR})
set(LSTMCHECK_CUDA_LINK_LIBRARIES ${CUDNN_LIBRARY})
