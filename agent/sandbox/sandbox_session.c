/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Sessions: a sandbox workspace kept between runs, what the MCP server's
 * session tools (agent/mcp/) and the CLI sessions (agent/session/) are both
 * built on; it uses the room's own steps, so it lives here.  The workspace (a
 * size-capped tmpfs with the image's overlay, as for one call) stays
 * mounted; its files/ directory is bound read-write on /workspace in each
 * run's container, so what one run writes there the next one reads (the
 * image's root stays read-only as the policy wants, /tmp is fresh each
 * run).  Each run is a new container on the same bundle: config.json and
 * the code file are rewritten, created, started, waited for, deleted.
 *
 * Files go in and out of files/ through a directory fd, every path
 * resolved with RESOLVE_IN_ROOT (a symlink the code made cannot lead out),
 * only regular files read (a FIFO is refused, never waited on), sizes
 * bounded.  A file the host writes, and the directories made for it, are
 * the session's code's (the uid its workspace holds, sb.uid, which every
 * run shares): its code can change, rename and delete them, as a file
 * uploaded to an E2B sandbox; each is chowned through the fd it was made
 * or opened with, never by a path.  A session is not thread-safe: its user
 * serialises.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "sandbox_private.h"

static int open_in(int dirfd, const char *path, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (unsigned long long)(flags | O_CLOEXEC | O_NOFOLLOW),
		.mode = (flags & O_CREAT) ? mode : 0,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};

	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

int sandbox_session_open(const struct global_opts *g, const struct sandbox_config *cfg,
			 struct sandbox_session *ss, struct error *err)
{
	_cleanup_close_ int dirfd = -1;

	memset(ss, 0, sizeof(*ss));
	ss->files_fd = ss->outputs_fd = -1;
	ss->cfg = *cfg;
	/* the caller's string lives as long as its call, the session longer */
	if (cfg->allow_domains)
		ss->cfg.allow_domains = ss->allow_domains = xstrdup(cfg->allow_domains);
	ss->cfg.session = true;
	ss->cfg.stdin_fd = -1;
	sandbox_init_struct(&ss->sb, cfg->lang);
	ss->sb.session = true;
	if (sandbox_make_state_root(g, err) < 0 ||
	    sandbox_workspace_make(g, &ss->sb, cfg->disk, err) < 0 ||
	    sandbox_overlay_mount(&ss->sb, cfg->rootfs, err) < 0 ||
	    sandbox_install_init(&ss->sb, err) < 0)
		goto fail;
	dirfd = open(ss->sb.dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* Sticky and writable by all, as /tmp: whatever uid the code runs as. */
	if (dirfd < 0 || mkdirat(dirfd, SANDBOX_FILES_DIR, 0700) < 0 ||
	    fchmodat(dirfd, SANDBOX_FILES_DIR, 01777, 0) < 0) {
		error_sys(err, "sandbox session: mkdir %s/%s", ss->sb.dir, SANDBOX_FILES_DIR);
		goto fail;
	}
	ss->files_fd = openat(dirfd, SANDBOX_FILES_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ss->files_fd < 0) {
		error_sys(err, "sandbox session: open %s/%s", ss->sb.dir, SANDBOX_FILES_DIR);
		goto fail;
	}
	ss->outputs_fd = openat(dirfd, SANDBOX_OUTPUTS_NAME, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ss->outputs_fd < 0) {
		error_sys(err, "sandbox session: open %s/%s", ss->sb.dir, SANDBOX_OUTPUTS_NAME);
		goto fail;
	}
	return 0;
fail:
	sandbox_session_close(g, ss);
	return -1;
}

void sandbox_session_close(const struct global_opts *g, struct sandbox_session *ss)
{
	if (ss->files_fd >= 0)
		close(ss->files_fd);
	if (ss->outputs_fd >= 0)
		close(ss->outputs_fd);
	ss->files_fd = ss->outputs_fd = -1;
	sandbox_destroy(g, &ss->sb);
	free(ss->allow_domains);
	ss->allow_domains = NULL;
	ss->cfg.allow_domains = NULL;
}

/* config.json and the code file of this run replace the last run's. */
static int rewrite_bundle(struct sandbox_session *ss, struct error *err)
{
	_cleanup_free_ char *interpreter = NULL, *json = NULL, *config = NULL;
	const char *code_file = sandbox_code_file(ss->cfg.lang);

	/* A command line (the CLI's `session run -- CMD`) needs no interpreter. */
	if (ss->cfg.lang == SANDBOX_LANG_NONE && (!ss->cfg.args || !ss->cfg.args[0]))
		return error_set(err, "sandbox session: no command to run");
	if (ss->cfg.lang != SANDBOX_LANG_NONE &&
	    sandbox_find_interpreter(ss->cfg.rootfs, ss->cfg.lang, &interpreter, err) < 0)
		return -1;
	json = sandbox_spec_json(&ss->cfg, interpreter, err);
	if (!json)
		return -1;
	config = xasprintf("%s/config.json", ss->sb.dir);
	if (unlink(config) < 0 && errno != ENOENT)
		return error_sys(err, "sandbox session: remove %s", config);
	if (code_file && unlinkat(ss->sb.code_dirfd, code_file, 0) < 0 && errno != ENOENT)
		return error_sys(err, "sandbox session: remove /%s/%s", SANDBOX_CODE_DIR, code_file);
	return sandbox_write_bundle_config(&ss->sb, json, err);
}

int sandbox_session_run(const struct global_opts *g, struct sandbox_session *ss,
			enum sandbox_lang lang, const struct sandbox_input *in,
			struct sandbox_result *res, struct error *err)
{
	int r;

	memset(res, 0, sizeof(*res));
	ss->cfg.lang = lang;
	ss->sb.lang = lang;
	sandbox_new_id(&ss->sb);
	if (rewrite_bundle(ss, err) < 0) {
		sandbox_release_container(g, &ss->sb);
		return -1;
	}
	/* What is in /outputs now is not this run's news: taken before the
	 * create, which starts the program. */
	sandbox_outputs_snapshot(&ss->sb);
	if (sandbox_code_before_create(&ss->cfg, &ss->sb, in, err) < 0 ||
	    sandbox_create_with_pipes(g, &ss->cfg, &ss->sb, err) < 0) {
		sandbox_outputs_forget(&ss->sb);
		sandbox_release_container(g, &ss->sb);
		return -1;
	}
	r = sandbox_run(g, &ss->sb, in, -1, res, err);
	sandbox_outputs_forget(&ss->sb);
	sandbox_release_container(g, &ss->sb);
	return r;
}

/* ---- files ------------------------------------------------------------------ */

/* "/workspace/a/b" or "a/b" -> "a/b" (in files/), "/outputs/a" -> "a"
 * (in outputs/); NULL for a path elsewhere.  *outputs says which. */
static const char *split_path(const char *path, bool *outputs)
{
	size_t n = strlen(SANDBOX_SESSION_DIR), o = strlen(SANDBOX_OUTPUTS_DIR);

	*outputs = !strncmp(path, SANDBOX_OUTPUTS_DIR, o) && (path[o] == '/' || !path[o]);
	if (*outputs)
		path += o;
	else if (!strncmp(path, SANDBOX_SESSION_DIR, n) && (path[n] == '/' || !path[n]))
		path += n;
	else if (path[0] == '/')
		return NULL;
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

const char *sandbox_session_rel(const char *path)
{
	bool outputs;

	return split_path(path, &outputs);
}

/* The directory fd path is resolved in, and path relative to it. */
static int dir_of(struct sandbox_session *ss, const char *path, const char **rel)
{
	bool outputs;

	*rel = split_path(path, &outputs);
	return outputs ? ss->outputs_fd : ss->files_fd;
}

/* What the host puts into the session becomes its code's: fd (a file or a
 * directory, O_PATH or not) chowned to uid, the one its runs have.  0 (root
 * stays root: rootless, or a policy without an identity) changes nothing. */
static int give_to_code(int fd, uid_t uid)
{
	if (!uid)
		return 0;
	return fchownat(fd, "", uid, uid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
}

/* mkdir -p of rel's parents, each step beneath the last (no symlinks); a
 * directory made here is uid's (give_to_code). */
static int make_parents(int files_fd, const char *rel, uid_t uid, int *parent, const char **leaf,
			struct error *err)
{
	_cleanup_free_ char *copy = xstrdup(rel);
	char *p = copy, *slash;
	int fd = fcntl(files_fd, F_DUPFD_CLOEXEC, 3);

	if (fd < 0)
		return error_sys(err, "dup");
	while ((slash = strchr(p, '/'))) {
		struct open_how how = {
			.flags = O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW,
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV,
		};
		bool made = false;
		int next;

		*slash = '\0';
		if (*p && strcmp(p, ".")) {
			if (mkdirat(fd, p, 0755) == 0)
				made = true;
			else if (errno != EEXIST) {
				error_sys(err, "mkdir %s", p);
				close(fd);
				return -1;
			}
		}
		next = *p ? (int)syscall(SYS_openat2, fd, p, &how, sizeof(how)) : fd;
		if (next < 0) {
			error_sys(err, "open %s", p);
			close(fd);
			return -1;
		}
		/* The one just made (or whatever the code put in its place since:
		 * a directory of its own, never a symlink, RESOLVE_NO_SYMLINKS). */
		if (made && give_to_code(next, uid) < 0) {
			error_sys(err, "chown %s to uid %u", p, (unsigned)uid);
			if (next != fd)
				close(next);
			close(fd);
			return -1;
		}
		if (next != fd)
			close(fd);
		fd = next;
		p = slash + 1;
	}
	*parent = fd;
	*leaf = rel + (p - copy);
	return 0;
}

int sandbox_session_write_file(struct sandbox_session *ss, const char *path, const char *data,
			       size_t len, struct error *err)
{
	const char *rel, *leaf = NULL;
	int root = dir_of(ss, path, &rel);
	_cleanup_close_ int parent = -1, fd = -1;
	struct stat st;

	if (!rel || !strcmp(rel, "."))
		return error_set(err, "%s: a file under %s or %s is expected", path,
				 SANDBOX_SESSION_DIR, SANDBOX_OUTPUTS_DIR);
	if (make_parents(root, rel, ss->sb.uid, &parent, &leaf, err) < 0)
		return error_prefix(err, "%s", path);
	fd = open_in(parent, leaf, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK, 0644);
	if (fd < 0)
		return error_sys(err, "%s: open", path);
	if (fstat(fd, &st) < 0)
		return error_sys(err, "%s: stat", path);
	if (!S_ISREG(st.st_mode))
		return error_set(err, "%s: not a regular file", path);
	/* The code's, whoever made it: a file it wrote stays its own, one the
	 * host made becomes its own (through the fd: the name may have moved). */
	if (give_to_code(fd, ss->sb.uid) < 0)
		return error_sys(err, "%s: chown to uid %u", path, (unsigned)ss->sb.uid);
	if (len && write_all(fd, data, len) < 0)
		return error_sys(err, "%s: write", path);
	return 0;
}

int sandbox_session_read_file(struct sandbox_session *ss, const char *path, size_t max,
			      char **out, size_t *len, struct error *err)
{
	const char *rel;
	int root = dir_of(ss, path, &rel);
	_cleanup_close_ int fd = -1;

	if (!rel)
		return error_set(err, "%s: only files under %s and %s are kept", path,
				 SANDBOX_SESSION_DIR, SANDBOX_OUTPUTS_DIR);
	/* O_NONBLOCK: a FIFO must not hang us before fstat refuses it. */
	fd = open_in(root, rel, O_RDONLY | O_NONBLOCK, 0);
	if (fd < 0)
		return error_sys(err, "%s", path);
	fcntl(fd, F_SETFL, 0);
	return read_regular_fd(fd, path, max, out, len, err);
}

int sandbox_session_list(struct sandbox_session *ss, const char *path,
			 struct sandbox_dirent **out, size_t *n, size_t max, struct error *err)
{
	const char *rel;
	int root = dir_of(ss, path, &rel);
	struct dirent *de;
	size_t cap = 0;
	int fd;
	DIR *d;

	*out = NULL;
	*n = 0;
	if (!rel)
		return error_set(err, "%s: only files under %s and %s are kept", path,
				 SANDBOX_SESSION_DIR, SANDBOX_OUTPUTS_DIR);
	fd = open_in(root, rel, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return error_sys(err, "%s", path);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return error_sys(err, "%s: fdopendir", path);
	}
	while ((de = readdir(d)) && *n < max) {
		struct sandbox_dirent *e;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		*out = xgrow(*out, &cap, *n + 1, sizeof(**out));
		e = &(*out)[(*n)++];
		snprintf(e->name, sizeof(e->name), "%s", de->d_name);
		e->type = S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode) ? "directory" :
						 S_ISLNK(st.st_mode)	     ? "symlink" :
									       "other";
		e->size = (unsigned long long)st.st_size;
	}
	closedir(d);
	return 0;
}
