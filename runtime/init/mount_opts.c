/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A mount's options split as libmount splits them (mnt_split_optstr, then
 * mnt_optstr_get_flags with MNT_LINUX_MAP): MS_* flags, and the data the
 * filesystem gets.  The options of nearly every spec (the OCI default's
 * nosuid, mode=755, newinstance, ...) are in a built-in table; libmount is
 * opened (dlopen, lib/dynlib.h) only for a spec with another option, so
 * that a call does not load it and its libraries (blkid, selinux, pcre2)
 * for nothing.  tests/unit/test_mounts.c checks the table against libmount.
 */
#include "mounts.h"

#include <errno.h>
#include <libmount.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "../../lib/cleanup.h"
#include "../../lib/dynlib.h"
#include "../../lib/util.h"

struct vfs_opt {
	const char *name;
	unsigned long flags;
	bool clear; /* MNT_INVERT */
};

/* libmount's MNT_LINUX_MAP entries a spec uses. */
static const struct vfs_opt vfs_opts[] = {
	{ "defaults", 0, false },
	{ "ro", MS_RDONLY, false },
	{ "rw", MS_RDONLY, true },
	{ "nosuid", MS_NOSUID, false },
	{ "suid", MS_NOSUID, true },
	{ "nodev", MS_NODEV, false },
	{ "dev", MS_NODEV, true },
	{ "noexec", MS_NOEXEC, false },
	{ "exec", MS_NOEXEC, true },
	{ "sync", MS_SYNCHRONOUS, false },
	{ "async", MS_SYNCHRONOUS, true },
	{ "dirsync", MS_DIRSYNC, false },
	{ "mand", MS_MANDLOCK, false },
	{ "nomand", MS_MANDLOCK, true },
	{ "noatime", MS_NOATIME, false },
	{ "atime", MS_NOATIME, true },
	{ "nodiratime", MS_NODIRATIME, false },
	{ "diratime", MS_NODIRATIME, true },
	{ "relatime", MS_RELATIME, false },
	{ "norelatime", MS_RELATIME, true },
	{ "strictatime", MS_STRICTATIME, false },
	{ "nostrictatime", MS_STRICTATIME, true },
	{ "bind", MS_BIND, false },
	{ "rbind", MS_BIND | MS_REC, false },
	{ "private", MS_PRIVATE, false },
	{ "rprivate", MS_PRIVATE | MS_REC, false },
	{ "slave", MS_SLAVE, false },
	{ "rslave", MS_SLAVE | MS_REC, false },
	{ "shared", MS_SHARED, false },
	{ "rshared", MS_SHARED | MS_REC, false },
	{ "unbindable", MS_UNBINDABLE, false },
	{ "runbindable", MS_UNBINDABLE | MS_REC, false },
};

/* Filesystem data that is in no libmount map: passed on as it is. */
static const char *const data_keys[] = {
	"mode", "size", "uid", "gid", "ptmxmode", "nr_inodes", "nr_blocks",
	"max", /* devpts: the policy's limits.ptys */
};
static const char *const data_words[] = { "newinstance" };

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* A value libmount would take as it is (no quotes, no separators). */
static bool plain_value(const char *v)
{
	return *v && !v[strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-+%")];
}

static bool is_data(const char *opt, size_t len)
{
	const char *eq = memchr(opt, '=', len);

	if (!eq) {
		for (size_t i = 0; i < N(data_words); i++)
			if (strlen(data_words[i]) == len && !strncmp(opt, data_words[i], len))
				return true;
		return false;
	}
	for (size_t i = 0; i < N(data_keys); i++) {
		size_t k = strlen(data_keys[i]);
		_cleanup_free_ char *v = NULL;

		if (k != (size_t)(eq - opt) || strncmp(opt, data_keys[i], k))
			continue;
		v = xstrndup(eq + 1, len - k - 1);
		return plain_value(v);
	}
	return false;
}

int mount_optstr_builtin(const char *optstr, unsigned long *flags, char **data)
{
	_cleanup_free_ char *out = xstrdup("");
	unsigned long fl = 0;
	size_t used = 0;

	for (const char *p = optstr; *p;) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < N(vfs_opts); i++)
			if (strlen(vfs_opts[i].name) == len && !strncmp(p, vfs_opts[i].name, len))
				break;
		if (i < N(vfs_opts)) {
			if (vfs_opts[i].clear)
				fl &= ~vfs_opts[i].flags;
			else
				fl |= vfs_opts[i].flags;
		} else if (len && is_data(p, len)) {
			out = xrealloc(out, used + len + 2);
			if (used)
				out[used++] = ',';
			memcpy(out + used, p, len);
			out[used += len] = '\0';
		} else {
			return 1; /* libmount decides */
		}
		p += len;
		p += *p == ',';
	}
	*flags = fl;
	*data = used ? take_ptr(out) : NULL;
	return 0;
}

/* ---- libmount, for the rest ------------------------------------------------ */

static struct {
	__typeof__(mnt_split_optstr) *split_optstr;
	__typeof__(mnt_optstr_get_flags) *optstr_get_flags;
	__typeof__(mnt_get_builtin_optmap) *get_builtin_optmap;
} mntl;
static void *mntl_handle;

int mount_optstr_libmount(const char *optstr, unsigned long *flags,
			  char **data, struct error *err)
{
	const struct dynlib_sym syms[] = {
		{ "mnt_split_optstr", (void **)&mntl.split_optstr },
		{ "mnt_optstr_get_flags", (void **)&mntl.optstr_get_flags },
		{ "mnt_get_builtin_optmap", (void **)&mntl.get_builtin_optmap },
	};
	char *vfs = NULL, *fs = NULL;
	unsigned long fl = 0;
	int r;

	if (dynlib_load(&mntl_handle, "libmount.so.1", "the mount options",
			"Debian: libmount1", syms, N(syms), err) < 0)
		return -1;
	r = mntl.split_optstr(optstr, NULL, &vfs, &fs, 0, 0);
	if (r < 0)
		return error_setc(err, -r, "parse options \"%s\"", optstr);
	if (vfs && mntl.optstr_get_flags(vfs, &fl,
					 mntl.get_builtin_optmap(MNT_LINUX_MAP)) < 0) {
		free(vfs);
		free(fs);
		return error_set(err, "parse options \"%s\"", optstr);
	}
	free(vfs);
	*flags = fl;
	*data = fs;
	return 0;
}

int mount_optstr_split(const char *optstr, unsigned long *flags, char **data,
		       struct error *err)
{
	if (mount_optstr_builtin(optstr, flags, data) == 0)
		return 0;
	return mount_optstr_libmount(optstr, flags, data, err);
}
