/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A CLI session's directory under the state root (see session.h):
 * ROOT/.sessions itself, the path of NAME/sock, and NAME/ removed.  Below
 * both the client's side (session_store.c) and the server
 * (session_server.c), which share it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "session_private.h"

int session_dir_root(const struct global_opts *g, bool create, int *out, struct error *err)
{
	_cleanup_close_ int rootfd = -1;

	if (create && sandbox_make_state_root(g, err) < 0)
		return -1;
	rootfd = open(g->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return error_sys(err, "session: open the state root %s", g->root);
	if (create && mkdirat(rootfd, SESSION_STATE_DIR, 0700) < 0 && errno != EEXIST)
		return error_sys(err, "session: mkdir %s/%s", g->root, SESSION_STATE_DIR);
	*out = openat(rootfd, SESSION_STATE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*out < 0)
		return error_sys(err, "session: open %s/%s", g->root, SESSION_STATE_DIR);
	return 0;
}

void session_sock_path(int dirfd, char *buf, size_t size)
{
	snprintf(buf, size, "/proc/self/fd/%d/sock", dirfd);
}

void session_dir_remove(int sessions_fd, const char *name, int dirfd)
{
	_cleanup_close_ int dupfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	struct dirent *de;
	DIR *d = dupfd >= 0 ? fdopendir(dupfd) : NULL;

	if (d) {
		dupfd = -1;
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
			    unlinkat(dirfd, de->d_name, 0) < 0)
				log_warn("session %s: remove %s: %s", name, de->d_name, strerror(errno));
		closedir(d);
	}
	if (unlinkat(sessions_fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		log_warn("session %s: remove its directory: %s", name, strerror(errno));
}
