/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_PATHRES_H
#define AGENTSBX_PATHRES_H

/*
 * Paths inside the rootfs are opened, never concatenated.  The rootfs is
 * attacker-controlled: every lookup is openat2(RESOLVE_IN_ROOT), so ".."
 * and symlinks (absolute or relative) cannot leave it, and magic links
 * (/proc/self/fd/N) are refused.  Callers mount onto the fd they get.
 */

#include <stdbool.h>
#include <sys/types.h>

#include "../../lib/error.h"

/* Open path (absolute or relative, read as relative to rootfd) under
 * rootfd.  flags: open(2) flags, O_CLOEXEC is added.  no_symlinks: refuse
 * any symlink on the way (for /proc and /sys targets). */
int path_open_in_root(int rootfd, const char *path, int flags, bool no_symlinks,
		      int *out, struct error *err);

/* mkdir -p of path under rootfd; returns an O_PATH fd of the directory.
 * Every component is created with mkdirat() on a parent fd resolved in
 * the root and then re-opened without following symlinks, so a swap of a
 * component for a symlink during the walk makes it fail, never escape. */
int path_mkdir_in_root(int rootfd, const char *path, mode_t mode, int *out,
		       struct error *err);

/* Like path_mkdir_in_root for the parent, then create an empty regular
 * file (O_NOFOLLOW, no truncation if it exists).  O_PATH fd out. */
int path_mkfile_in_root(int rootfd, const char *path, mode_t mode, int *out,
			struct error *err);

/* "/proc/self/fd/N" for mount(2) on an fd: a buffer of this size. */
#define FD_PATH_MAX 32
const char *fd_path(int fd, char buf[FD_PATH_MAX]);

/* Split "a/b/c" into its parent ("a/b", or "." ) and base name ("c"). */
void path_split(const char *path, char *parent, size_t parent_sz,
		const char **base);

#endif
