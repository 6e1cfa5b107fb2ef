/* Output paths checked before any work: a command that would write a
 * directory or a file finds out at once, not after minutes of measuring,
 * that it cannot. The checks leave nothing behind. */
#ifndef LSTMCHECK_PATHS_H
#define LSTMCHECK_PATHS_H

#include <stddef.h>

#include "base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest path accepted (the buffers that hold one are this long). */
#define PATH_LIMIT 4096

/* LC_OK when path is a directory this process can create entries in, or
 * (may_create) does not exist yet and can be made: its nearest existing
 * ancestor is a directory that can take a new directory. Else
 * LC_BAD_INPUT with a one-line reason (an empty path, a file, no
 * permission, a read-only or special file system). */
lc_status path_check_writable_dir(const char *path, int may_create, lc_error *err);
/* LC_OK when a file can be written at path (atomically: a temporary file
 * beside it, renamed): path is not empty, not a directory nor anything
 * else that is not a regular file (a device, FIFO, socket: a link is
 * replaced itself), and its directory exists and takes new entries. Else
 * LC_BAD_INPUT. */
lc_status path_check_writable_file(const char *path, lc_error *err);
/* The part of path_check_writable_file that reads the name alone: not a
 * directory, not a device, FIFO or socket nor a link to one, short enough
 * for its temporary name. For a file in a folder not made yet. */
lc_status path_check_file_name(const char *path, lc_error *err);
/* 1 when a and b name one file: the same text, both exist and are one
 * entry (hard links; a symbolic link is itself, as the writers replace it),
 * or they do not exist yet and name one place ("d/./x", "d/x", "d/",
 * "./d/."), the folders that exist read through their links. */
int path_same_file(const char *a, const char *b);
/* 1 when path names a place inside the folder dir (at any depth), by the
 * same reading of paths as path_same_file, except that a link to a folder
 * is read where it leads (what is written into dir goes there); 0 for dir
 * itself. */
int path_within(const char *dir, const char *path);
/* When path is a symbolic link (the last part) that leads to something:
 * 1, with the absolute path it resolves to in out (n bytes; 0 when it does
 * not fit); else 0. */
int path_link_target(const char *path, char *out, size_t n);
/* mkdir -p: 0, or 1 with err. */
int path_mkdir_p(const char *path, lc_error *err);

#ifdef __cplusplus
}
#endif
#endif
