/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_JUDGE_H
#define AGENTSBX_JUDGE_H

/*
 * The judge: the one place that opens a host object a spec or a caller
 * names (a bind source, the rootfs, a hook binary, a namespace file, a
 * seccomp listener socket), finds out what and where it really is, and
 * hands back the fd that everything after acts on.  It decides nothing
 * against the policy: the callers compare the located path and the type
 * with their rules.  It uses lib/ only, so the policy (runtime/policy/)
 * and the init (runtime/init/) both sit above it.
 *
 * "Where" is the object's path in *this* mount namespace, confirmed on the
 * kernel's objects: the path /proc/self/fd/N names is opened again from our
 * root with no symlink and no magic link on the way, and must be the same
 * device, inode and mount.  A path from another mount namespace (what
 * /proc/PID/root/... opens to), a deleted file, or an object moved or
 * swapped meanwhile does not match, and is refused.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "../../lib/error.h"

/* How the path given is walked. */
enum judge_walk {
	JUDGE_NO_LINKS,	  /* no symlink, no magic link anywhere */
	JUDGE_SYMLINKS,	  /* symlinks followed, magic links not */
	JUDGE_FOLLOW_ALL, /* magic links too (/proc/<dockerd>/exe) */
};

/* What kinds of file the caller takes (S_IFMT values as bits). */
#define JUDGE_TYPE_REG (1u << 0)
#define JUDGE_TYPE_DIR (1u << 1)
#define JUDGE_TYPE_SOCK (1u << 2)
#define JUDGE_TYPE_FIFO (1u << 3)
#define JUDGE_TYPE_CHR (1u << 4)
#define JUDGE_TYPE_BLK (1u << 5)
#define JUDGE_TYPE_LNK (1u << 6)
#define JUDGE_TYPES_PLAIN (JUDGE_TYPE_REG | JUDGE_TYPE_DIR)

struct judged {
	int fd; /* O_PATH | O_CLOEXEC, owned */
	struct stat st;
	uint64_t mnt_id; /* statx STATX_MNT_ID */
	char where[PATH_MAX];
};

/* what: how errors name the object ("mounts[2].source", "hooks.prestart[0]"). */

/* Open path (absolute) once as walk says, then judge_locate() it. */
int judge_open(const char *what, const char *path, enum judge_walk walk,
	       struct judged *o, struct error *err);

/* The same open where nothing is judged (the policy is off): o->where is
 * the path as given, not located. */
int judge_open_unlocated(const char *what, const char *path, enum judge_walk walk,
			 struct judged *o, struct error *err);

/* Locate an fd the caller opened (dup'ed; the caller keeps its own). */
int judge_locate_fd(const char *what, int fd, struct judged *o, struct error *err);

/* The file's type is one of types; else an error naming the type found
 * and the policy field that would allow it (allow_field may be NULL). */
int judge_require_type(const char *what, const struct judged *o, unsigned types,
		       const char *allow_field, struct error *err);
unsigned judge_type_bit(mode_t mode);
const char *judge_type_name(mode_t mode);

void judged_close(struct judged *o);

/* The object judged_fd is, opened again by its path in *this* mount
 * namespace (after an unshare, a mount wants an fd of the new namespace's
 * copy): a directory, the same device and inode, or an error.  *st (may be
 * NULL) gets the new fd's stat. */
int judge_reopen_same(const char *what, const char *path, int judged_fd, int *out,
		      struct stat *st, struct error *err);

/* ---- namespaces (nsfs objects: judged by what they are, not where) ---- */

/* Open path as a namespace of kind nstype (a CLONE_NEW* flag; name for
 * errors, "net"): on nsfs and of that kind (NS_GET_NSTYPE), or an error.
 * Magic links are followed: /proc/PID/ns/net is one. */
int judge_ns_open(const char *path, int nstype, const char *name, int *out,
		  struct error *err);

/* fd is the host's namespace of that kind: the runtime's own
 * (proc_fd/self/ns/<file>) or PID 1's. */
int judge_ns_is_host(int fd, int proc_fd, const char *file, bool *host,
		     struct error *err);

#endif
