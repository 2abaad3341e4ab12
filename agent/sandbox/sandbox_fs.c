/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A sandbox's files: the image directory, the interpreter in it, and the
 * per-call workspace -- a size-capped tmpfs at SANDBOX_WORK_DIR/ID holding
 * config.json, the overlay's upper and work directories and its mount
 * point, rootfs/.  The image is the overlay's lower layer and is never
 * written; the code goes to /.agentsbx in the upper layer.  All of it is
 * mounted in the sandbox process's private mount namespace.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "sandbox_private.h"

static const char *const bin_dirs[] = {
	"/usr/local/bin",
	"/usr/bin",
	"/bin",
	"/usr/local/sbin",
	"/usr/sbin",
	"/sbin",
	NULL,
};

static const char *const interpreters[SANDBOX_LANG_MAX][3] = {
	[SANDBOX_LANG_PYTHON] = { "python3", "python", NULL },
	[SANDBOX_LANG_SH] = { "sh", "bash", NULL },
	[SANDBOX_LANG_NODE] = { "node", "nodejs", NULL },
};

static int openat2_fd(int dirfd, const char *path, int flags, unsigned long long resolve)
{
	struct open_how how = {
		.flags = (unsigned long long)(flags | O_CLOEXEC),
		.resolve = resolve,
	};

	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/* ---- images -------------------------------------------------------------- */

static int check_directory(const char *what, const char *path, char **out,
			   struct error *err)
{
	char real[PATH_MAX];
	struct stat st;

	if (!realpath(path, real))
		return error_sys(err, "%s %s", what, path);
	if (stat(real, &st) < 0)
		return error_sys(err, "%s %s", what, real);
	if (!S_ISDIR(st.st_mode))
		return error_set(err, "%s %s: not a directory", what, real);
	if (!strcmp(real, "/"))
		return error_set(err, "%s %s: the host's root is not an image", what, path);
	/* The path goes into overlayfs's option string. */
	if (strpbrk(real, ",:\\\n"))
		return error_set(err, "%s %s: the path may not contain ',', ':' or '\\'",
				 what, real);
	*out = xstrdup(real);
	return 0;
}

static bool image_name_valid(const char *name)
{
	if (!*name || strlen(name) > 128 || name[0] == '.')
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("._-", *p)))
			return false;
	return true;
}

/* A plain user's images: $XDG_DATA_HOME/agentsbx/images, by default
 * ~/.local/share/agentsbx/images (NULL without either variable). */
static char *user_image_root(void)
{
	const char *data = getenv("XDG_DATA_HOME"), *home = getenv("HOME");

	if (data && data[0] == '/')
		return xasprintf("%s/agentsbx/images", data);
	if (home && home[0] == '/')
		return xasprintf("%s/.local/share/agentsbx/images", home);
	return NULL;
}

int sandbox_image_path(const char *root, const char *name, char **out,
		       struct error *err)
{
	_cleanup_free_ char *path = NULL, *user_root = NULL;

	if (!root || !*root)
		root = getenv(SANDBOX_IMAGE_ROOT_ENV);
	if ((!root || !*root) && geteuid() != 0)
		root = user_root = user_image_root();
	if (!root || !*root)
		root = SANDBOX_IMAGE_ROOT;
	if (!image_name_valid(name))
		return error_set(err, "--image %s: an image name is [A-Za-z0-9][A-Za-z0-9._-]*", name);
	path = xasprintf("%s/%s", root, name);
	if (check_directory("image", path, out, err) < 0) {
		if (err->code == ENOENT)
			return error_set(err, "image \"%s\" not found: no directory %s (see `agentsbx sandbox --help` for the one-line set-up, or --image-root / $%s)",
					 name, path, SANDBOX_IMAGE_ROOT_ENV);
		return -1;
	}
	return 0;
}

int sandbox_rootfs_path(const char *dir, char **out, struct error *err)
{
	return check_directory("rootfs", dir, out, err);
}

/* An executable regular file at path, resolved without leaving the image. */
static bool image_has_executable(int rootfd, const char *path)
{
	_cleanup_close_ int fd = openat2_fd(rootfd, path, O_PATH,
					    RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
}

int sandbox_find_interpreter(const char *rootfs, enum sandbox_lang lang,
			     char **out, struct error *err)
{
	_cleanup_close_ int rootfd = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (lang <= SANDBOX_LANG_NONE || lang >= SANDBOX_LANG_MAX)
		return error_set(err, "no interpreter for this language");
	if (rootfd < 0)
		return error_sys(err, "open image %s", rootfs);
	for (const char *const *name = interpreters[lang]; *name; name++)
		for (const char *const *dir = bin_dirs; *dir; dir++) {
			_cleanup_free_ char *path = xasprintf("%s/%s", *dir, *name);
			if (image_has_executable(rootfd, path)) {
				*out = take_ptr(path);
				return 0;
			}
		}
	return error_set(err, "image %s has no %s interpreter (looked for %s in %s)",
			 rootfs, sandbox_lang_name(lang), interpreters[lang][0],
			 "/usr/local/bin, /usr/bin, /bin, and the sbin directories");
}

/* ---- the workspace ------------------------------------------------------- */

static int make_subdirs(int dirfd, uid_t uid, struct error *err)
{
	static const struct {
		const char *name;
		mode_t mode;
	} dirs[] = {
		/* upper's attributes are the container root's */
		{ "upper", 0755 },
		{ "upper/" SANDBOX_CODE_DIR, 0755 },
		{ "upper/" SANDBOX_CODE_DIR "/" SANDBOX_META_DIR, 0755 },
		{ "work", 0700 },
		{ "rootfs", 0755 },
		/* bound on /outputs and /.agentsbx/meta: writable by any uid, as /tmp */
		{ SANDBOX_OUTPUTS_NAME, 01777 },
		{ SANDBOX_META_DIR, 01777 },
	};

	_cleanup_close_ int code_dir = -1;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (mkdirat(dirfd, dirs[i].name, dirs[i].mode) < 0 ||
		    fchmodat(dirfd, dirs[i].name, dirs[i].mode, 0) < 0)
			return error_sys(err, "sandbox workspace: mkdir %s", dirs[i].name);
	/* A writable root (a policy with readonlyRoot false) is writable by
	 * the process even when the policy runs it as a non-root uid. */
	if (uid && fchownat(dirfd, "upper", uid, uid, AT_SYMLINK_NOFOLLOW) < 0)
		return error_sys(err, "sandbox workspace: chown upper to %u", (unsigned)uid);
	/* Opaque: whatever the image has at /.agentsbx is hidden. */
	code_dir = openat(dirfd, "upper/" SANDBOX_CODE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* In a user namespace (rootless) overlayfs reads user.* xattrs
	 * (userxattr, sandbox_overlay_mount): trusted.* is root's. */
	if (code_dir < 0 || fsetxattr(code_dir, geteuid() == 0 ? "trusted.overlay.opaque" : "user.overlay.opaque",
				      "y", 1, 0) < 0)
		return error_sys(err, "sandbox workspace: make /%s opaque", SANDBOX_CODE_DIR);
	return 0;
}

int sandbox_workspace_make(const struct global_opts *g, struct sandbox *sb, uint64_t disk,
			   struct error *err)
{
	_cleanup_free_ char *opts = xasprintf("size=%llu,mode=0700,nr_inodes=65536",
					      (unsigned long long)(disk ? disk : SANDBOX_DISK_DEFAULT));
	_cleanup_close_ int dirfd = -1;

	sb->dir = xasprintf("%s/%s", sandbox_work_dir(), sb->id);
	if (mkdir(sb->dir, 0700) < 0)
		return error_sys(err, "sandbox workspace: mkdir %s", sb->dir);
	sb->dir_made = true;
	if (mount("agentsbx-sandbox", sb->dir, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		return error_sys(err, "sandbox workspace: mount a tmpfs on %s", sb->dir);
	sb->dir_mounted = true;
	dirfd = open(sb->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0)
		return error_sys(err, "sandbox workspace: open %s", sb->dir);
	if (container_identity_hold(g, sb->dir, &sb->uid, err) < 0)
		return -1;
	sb->identity_held = true;
	return make_subdirs(dirfd, sb->uid, err);
}

int sandbox_overlay_mount(struct sandbox *sb, const char *image, struct error *err)
{
	_cleanup_free_ char *target = xasprintf("%s/rootfs", sb->dir);
	_cleanup_free_ char *opts = xasprintf("lowerdir=%s,upperdir=%s/upper,workdir=%s/work%s",
					      image, sb->dir, sb->dir,
					      geteuid() == 0 ? "" : ",userxattr");
	_cleanup_close_ int rootfd = -1;

	if (mount("overlay", target, "overlay", 0, opts) < 0)
		return error_sys(err, "sandbox: mount an overlay of %s", image);
	sb->overlay_mounted = true;
	rootfd = open(target, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rootfd < 0)
		return error_sys(err, "sandbox: open %s", target);
	sb->code_dirfd = openat2_fd(rootfd, SANDBOX_CODE_DIR, O_RDONLY | O_DIRECTORY,
				    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					    RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV);
	if (sb->code_dirfd < 0)
		return error_sys(err, "sandbox: open /%s in the overlay", SANDBOX_CODE_DIR);
	return 0;
}

int sandbox_write_code(struct sandbox *sb, const char *code, size_t len,
		       struct error *err)
{
	const char *name = sandbox_code_file(sb->lang);
	_cleanup_close_ int fd = -1;

	if (!name)
		return 0;
	fd = openat(sb->code_dirfd, name,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return error_sys(err, "sandbox: create /%s/%s", SANDBOX_CODE_DIR, name);
	if (len && write_all(fd, code, len) < 0)
		return error_sys(err, "sandbox: write /%s/%s", SANDBOX_CODE_DIR, name);
	return 0;
}

int sandbox_write_bundle_config(struct sandbox *sb, const char *json,
				struct error *err)
{
	_cleanup_free_ char *path = xasprintf("%s/config.json", sb->dir);
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0 || write_all(fd, json, strlen(json)) < 0)
		return error_sys(err, "sandbox: write %s", path);
	return 0;
}

void sandbox_workspace_remove(struct sandbox *sb)
{
	if (sb->code_dirfd >= 0)
		close(sb->code_dirfd);
	sb->code_dirfd = -1;
	if (sb->overlay_mounted) {
		_cleanup_free_ char *target = xasprintf("%s/rootfs", sb->dir);
		if (umount2(target, MNT_DETACH) < 0)
			log_warn("sandbox %s: unmount %s: %s", sb->id, target, strerror(errno));
		sb->overlay_mounted = false;
	}
	if (sb->identity_held) {
		container_identity_release(sb->dir);
		sb->identity_held = false;
	}
	if (sb->dir_mounted) {
		if (umount2(sb->dir, MNT_DETACH) < 0)
			log_warn("sandbox %s: unmount %s: %s", sb->id, sb->dir, strerror(errno));
		sb->dir_mounted = false;
	}
	if (sb->dir_made) {
		if (rmdir(sb->dir) < 0)
			log_warn("sandbox %s: remove %s: %s", sb->id, sb->dir, strerror(errno));
		sb->dir_made = false;
	}
	free(sb->dir);
	sb->dir = NULL;
}
