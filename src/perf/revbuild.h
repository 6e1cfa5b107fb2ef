/* Building another commit of lstmcheck beside this build, for an A/B
 * comparison: a git worktree of the commit and its build folder under
 * <this build>/ab/<commit>-<device>/, configured with this build's CMake
 * settings (generator, build type, compilers) and only what the comparison
 * needs: the lstmcheck target, with CUDA only when the device is cuda. A
 * finished build is reused; a failed one is remembered (its log says why)
 * until its folder is deleted. A lock serializes builders of one commit. */
#ifndef LSTMCHECK_REVBUILD_H
#define LSTMCHECK_REVBUILD_H

#include "device/device.h"
#include "model/lstm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 0 with the built binary's path in exe; 1 with err (the commit does not
 * build here, or the worktree cannot be made): the comparison cannot be
 * made on this machine. */
int revbuild_lstmcheck(const char *source_dir, const char *sha, lc_device device, char *exe, size_t n,
                       lc_error *err);

#ifdef __cplusplus
}
#endif
#endif
