/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The engine's own directories for this container join its bindPrefixes
 * (which ones: spec/policy/policy_engine.c).  Read here: the shim's `work`
 * link in the bundle (containerd's root for this task), and whether the
 * pod's sandbox named by the CRI annotation is a container under the same
 * --root (an unknown one names no directory).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../internal.h"

#define CRI_SANDBOX_ID "io.kubernetes.cri.sandbox-id"
#define CRI_SANDBOX_UID "io.kubernetes.cri.sandbox-uid"

/* A container state dir named id under --root. */
static bool container_known(const struct ctx_handles *h, const char *id)
{
	struct stat st;

	if (!*id || strchr(id, '/') || id[0] == '.')
		return false;
	return fstatat(h->root_fd, id, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

static void move_into(struct str_array *add, struct str_array *to, const char *field)
{
	for (size_t i = 0; i < add->len; i++) {
		log_debug("policy: %s += %s (the engine's, for this container)", field,
			  add->items[i]);
		policy_strv_add(to, add->items[i]);
		free(add->items[i]);
	}
	free(add->items);
	*add = (struct str_array){ 0 };
}

/* A CRI container of a known pod: the kubelet's directory of that pod
 * (its volumes, etc-hosts, termination logs), by the pod uid containerd
 * wrote beside the sandbox id; a container of no known pod gets none. */
static void add_pod_dir(const struct ctx_decided *d, const char *bundle, const char *sid,
			struct str_array *add)
{
	const char *uid = str_map_get(&d->spec.annotations, CRI_SANDBOX_UID);
	_cleanup_free_ char *dir = NULL;

	if (!sid || !uid)
		return;
	dir = policy_engine_pod_dir(bundle, d->id, uid);
	if (dir)
		policy_strv_add(add, dir);
}

int policy_add_engine_dirs(struct ctx_decided *d, const struct ctx_handles *h,
			   struct error *err)
{
	const char *path = d->bundle ? d->bundle : d->exec_bundle;
	_cleanup_close_ int bundle = -1;
	const char *sid = str_map_get(&d->spec.annotations, CRI_SANDBOX_ID);
	struct str_array add = { 0 };
	char work[PATH_MAX];
	ssize_t n;

	if (!path)
		return 0;
	bundle = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (bundle < 0)
		return error_sys(err, "open bundle %s", path);
	n = readlinkat(bundle, "work", work, sizeof(work) - 1);
	if (n < 0 && errno != ENOENT && errno != EINVAL && errno != ENOTDIR)
		return error_sys(err, "read the link %s/work", path);
	work[n < 0 ? 0 : n] = '\0';
	if (sid && strcmp(sid, d->id) && !container_known(h, sid)) {
		log_info("policy: annotation %s=%s names no container under --root %s: its directories are not bind sources",
			 CRI_SANDBOX_ID, sid, d->g->root);
		sid = NULL;
	}
	policy_engine_bind_prefixes(path, n > 0 ? work : NULL, d->id, sid, &add);
	add_pod_dir(d, path, sid, &add);
	move_into(&add, &d->policy.bind_prefixes, "bindPrefixes");
	policy_engine_volume_dirs(path, n > 0 ? work : NULL, d->id, &add);
	move_into(&add, &d->policy.bind_volume_dirs, "bindVolumeDirs");
	policy_engine_layer_dirs(path, n > 0 ? work : NULL, d->id, &add);
	move_into(&add, &d->policy.engine_layer_dirs, "the engine's layer directories");
	return 0;
}
