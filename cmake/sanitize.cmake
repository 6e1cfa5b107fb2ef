# Sanitizer and fuzz builds of the CPU part (docs/fuzzing.md). CUDA code is
# not instrumented: use them with -DLSTMCHECK_CUDA=OFF.
#
# -DLSTMCHECK_SANITIZE=ON: AddressSanitizer (with LeakSanitizer) and
# UndefinedBehaviorSanitizer on every C file, every report fatal; gcc or
# clang. ci/sanitize.sh runs ctest -L "unit|numerics" in such a build.
option(LSTMCHECK_SANITIZE "Build with -fsanitize=address,undefined (reports are fatal)" OFF)
# -DLSTMCHECK_FUZZ=ON (clang with libFuzzer): the same, plus libFuzzer's
# coverage on every C file and the targets of tests/fuzz (ci/fuzz.sh).
# Elsewhere the fuzz tests report skipped, with LSTMCHECK_FUZZ_SKIP_REASON.
option(LSTMCHECK_FUZZ "Build the libFuzzer targets of tests/fuzz (needs clang)" OFF)

set(LSTMCHECK_FUZZ_SKIP_REASON "")
if(NOT LSTMCHECK_FUZZ)
  set(LSTMCHECK_FUZZ_SKIP_REASON "not a fuzz build: ci/fuzz.sh makes one (clang, -DLSTMCHECK_FUZZ=ON)")
elseif(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  set(LSTMCHECK_FUZZ_SKIP_REASON "libFuzzer needs clang as the C compiler; this build has ${CMAKE_C_COMPILER_ID}")
else()
  include(CheckCSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS -fsanitize=fuzzer)
  check_c_source_compiles([[
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }
]] LSTMCHECK_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_FLAGS)
  if(NOT LSTMCHECK_HAVE_LIBFUZZER)
    set(LSTMCHECK_FUZZ_SKIP_REASON
        "clang cannot link -fsanitize=fuzzer: install libclang-rt-<version>-dev (ci/install-deps.sh)")
  endif()
endif()
if(LSTMCHECK_FUZZ AND LSTMCHECK_FUZZ_SKIP_REASON)
  message(WARNING "LSTMCHECK_FUZZ: ${LSTMCHECK_FUZZ_SKIP_REASON}; the fuzz tests report skipped")
endif()

if(LSTMCHECK_SANITIZE OR LSTMCHECK_FUZZ)
  add_compile_options("$<$<COMPILE_LANGUAGE:C>:-fsanitize=address,undefined;-fno-omit-frame-pointer;-fno-sanitize-recover=all>")
  add_link_options(-fsanitize=address,undefined)
endif()
if(LSTMCHECK_FUZZ AND NOT LSTMCHECK_FUZZ_SKIP_REASON)
  # coverage for libFuzzer in the library too; main() comes with the fuzz targets
  add_compile_options($<$<COMPILE_LANGUAGE:C>:-fsanitize=fuzzer-no-link>)
endif()
