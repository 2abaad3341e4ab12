/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Bind prefixes that follow the engine: the files an engine
 * binds into a container (hosts, hostname, resolv.conf, /dev/shm) live in
 * its own state and root directories, wherever it was told to keep them
 * (containerd --root/--state, k3s, dockerd --data-root).  Derived from the
 * bundle's own place, never from a list of guesses:
 *
 *   bundle  <S>/io.containerd.runtime.v2.task/<ns>/<id>          (state)
 *   work -> <R>/io.containerd.runtime.v2.task/<ns>/<id>          (root; the
 *           shim's link in the bundle, read by runtime/)
 *
 * allowed:  <S or R>/io.containerd.grpc.v1.cri/sandboxes/<sandbox id>
 *           <S or R>/io.containerd.grpc.v1.cri/containers/<id>   (CRI)
 *           <D>/containers/<id> when R is <D>/containerd/daemon (the
 *           containerd dockerd runs: D is its --data-root).
 *
 * Every derived prefix ends in this container's own id or its pod's
 * sandbox id (runtime/ passes one only when that container exists under
 * the same --root), so the policy's bindPrefixes widen by directories
 * the engine made for this container and its pod, nothing else.  The
 * bundle itself is not one: the caller picks its path (it could be "/"),
 * and no engine binds from it.
 */
#include <stdlib.h>
#include <string.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"
#include "policy.h"

#define TASK_DIR "io.containerd.runtime.v2.task"
#define CRI_DIR "io.containerd.grpc.v1.cri"

/* One path component a directory may be named by: no '/', not . or .. */
static bool plain_name(const char *s)
{
	return s && *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

/* path is <base>/io.containerd.runtime.v2.task/<ns>/<id>: *base (malloc'd)
 * and *ns (malloc'd).  path is clean and absolute. */
static bool split_task_dir(const char *path, const char *id, char **base, char **ns)
{
	const char *p[3]; /* the last three '/' */
	size_t n = strlen(path);
	int found = 0;

	for (size_t i = n; i-- > 0 && found < 3;)
		if (path[i] == '/')
			p[found++] = path + i;
	if (found < 3 || strcmp(p[0] + 1, id) || p[1] - p[2] - 1 != (long)strlen(TASK_DIR) ||
	    strncmp(p[2] + 1, TASK_DIR, strlen(TASK_DIR)))
		return false;
	*ns = xstrndup(p[1] + 1, (size_t)(p[0] - p[1] - 1));
	*base = p[2] == path ? xstrdup("/") : xstrndup(path, (size_t)(p[2] - path));
	return true;
}

#define PODMAN_RUNROOT "/run/containers/storage"
#define KUBELET_PODS "/var/lib/kubelet/pods"

static bool split_podman_bundle(const char *bundle, const char *id, char **graph);

static void add_cri(struct str_array *out, const char *base, const char *id, const char *sid)
{
	const char *sep = strcmp(base, "/") ? "/" : "";
	char *s = xasprintf("%s%s" CRI_DIR "/sandboxes/%s", base, sep, sid);

	policy_strv_add(out, s);
	free(s);
	s = xasprintf("%s%s" CRI_DIR "/containers/%s", base, sep, id);
	policy_strv_add(out, s);
	free(s);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix) && (n == m || s[n - m - 1] == '/');
}

/* The data-root of the Docker whose containerd made this task: the work
 * link is <D>/containerd/daemon/io.containerd.runtime.v2.task/<ns>/<id>. */
static char *docker_data_root(const char *bundle, const char *work, const char *id)
{
	_cleanup_free_ char *w = NULL, *root = NULL, *ns = NULL, *state = NULL, *bns = NULL;

	if (!work || work[0] != '/' || !split_task_dir(bundle, id, &state, &bns))
		return NULL;
	w = policy_clean_path(work);
	/* The same namespace and id: the link names this task's work dir. */
	if (!split_task_dir(w, id, &root, &ns) || strcmp(ns, bns) || !ends_with(root, "containerd/daemon") ||
	    strlen(root) <= strlen("/containerd/daemon"))
		return NULL;
	return xstrndup(root, strlen(root) - strlen("/containerd/daemon"));
}

void policy_engine_bind_prefixes(const char *bundle, const char *work, const char *id,
				 const char *sandbox_id, struct str_array *out)
{
	_cleanup_free_ char *b = NULL, *state = NULL, *ns = NULL;
	const char *sid = plain_name(sandbox_id) ? sandbox_id : id;

	if (!bundle || bundle[0] != '/' || !plain_name(id))
		return;
	b = policy_clean_path(bundle);
	if (split_podman_bundle(b, id, &state)) {
		/* podman: this container's userdata in its graph root (the
		 * bundle: /dev/shm) and in the default run root (hosts,
		 * resolv.conf, hostname, .containerenv). */
		_cleanup_free_ char *run = xasprintf(PODMAN_RUNROOT "/overlay-containers/%s/userdata", id);

		policy_strv_add(out, b);
		policy_strv_add(out, run);
		return;
	}
	if (!split_task_dir(b, id, &state, &ns))
		return;
	add_cri(out, state, id, sid);
	if (work && work[0] == '/') {
		_cleanup_free_ char *w = policy_clean_path(work);
		_cleanup_free_ char *root = NULL, *wns = NULL;

		/* The same namespace and id: the link names this task's work
		 * dir, not somewhere else the bundle's writer chose. */
		if (!split_task_dir(w, id, &root, &wns) || strcmp(ns, wns))
			return;
		add_cri(out, root, id, sid);
		/* dockerd runs its containerd with --root <data-root>/containerd/daemon
		 * and keeps the container's files in <data-root>/containers/<id>. */
		_cleanup_free_ char *d = docker_data_root(b, work, id);
		if (d) {
			_cleanup_free_ char *c = xasprintf("%s/containers/%s", d, id);
			policy_strv_add(out, c);
		}
	}
}

/* A podman bundle, <G>/overlay-containers/<id>/userdata: *graph is G. */
static bool split_podman_bundle(const char *bundle, const char *id, char **graph)
{
	_cleanup_free_ char *tail = xasprintf("/overlay-containers/%s/userdata", id);
	size_t n = strlen(bundle), m = strlen(tail);

	if (n <= m || strcmp(bundle + n - m, tail))
		return false;
	*graph = xstrndup(bundle, n - m);
	return true;
}

/* <dir>/<layer>/merged, the layer a hex id: one layer's mount, never the
 * directory of every layer. */
static bool layer_root_of(const struct str_array *dirs, const char *rootfs)
{
	for (size_t i = 0; i < dirs->len; i++) {
		size_t n = strlen(dirs->items[i]);
		const char *layer, *slash;

		if (strncmp(rootfs, dirs->items[i], n) || rootfs[n] != '/')
			continue;
		layer = rootfs + n + 1;
		slash = strchr(layer, '/');
		if (slash && slash > layer && !strcmp(slash, "/merged") &&
		    strspn(layer, "0123456789abcdef") == (size_t)(slash - layer))
			return true;
	}
	return false;
}

bool policy_rootfs_allowed(const struct policy *p, const char *bundle, const char *rootfs)
{
	if (bundle && policy_path_under(rootfs, bundle))
		return true;
	return policy_bind_allowed(&p->rootfs_prefixes, rootfs) ||
	       layer_root_of(&p->engine_layer_dirs, rootfs);
}

/* <data-root or graph root>/sub for this container's engine. */
static void engine_subdirs(const char *bundle, const char *work, const char *id,
			   const char *podman_sub, const char *const docker_subs[],
			   struct str_array *out)
{
	_cleanup_free_ char *b = NULL, *graph = NULL, *d = NULL;

	if (!bundle || bundle[0] != '/' || !plain_name(id))
		return;
	b = policy_clean_path(bundle);
	if (split_podman_bundle(b, id, &graph)) {
		_cleanup_free_ char *v = xasprintf("%s/%s", graph, podman_sub);
		policy_strv_add(out, v);
	} else if ((d = docker_data_root(b, work, id))) {
		for (size_t i = 0; docker_subs[i]; i++) {
			_cleanup_free_ char *v = xasprintf("%s/%s", d, docker_subs[i]);
			policy_strv_add(out, v);
		}
	}
}

void policy_engine_volume_dirs(const char *bundle, const char *work, const char *id,
			       struct str_array *out)
{
	static const char *const docker[] = { "volumes", NULL };

	engine_subdirs(bundle, work, id, "volumes", docker, out);
}

void policy_engine_layer_dirs(const char *bundle, const char *work, const char *id,
			      struct str_array *out)
{
	static const char *const docker[] = { "overlay2", "fuse-overlayfs", NULL };

	engine_subdirs(bundle, work, id, "overlay", docker, out);
}

bool policy_volume_allowed(const struct str_array *dirs, const char *where)
{
	for (size_t i = 0; i < dirs->len; i++) {
		size_t n = strlen(dirs->items[i]);
		const char *name, *slash;

		if (strncmp(where, dirs->items[i], n) || where[n] != '/')
			continue;
		name = where + n + 1;
		slash = strchr(name, '/');
		if (!slash || slash == name)
			continue;
		/* <dir>/<name>/_data or below: one volume's data, never the
		 * directory of every volume nor a volume's own metadata. */
		if (!strncmp(slash, "/_data", 6) && (slash[6] == '\0' || slash[6] == '/'))
			return true;
	}
	return false;
}

char *policy_engine_pod_dir(const char *bundle, const char *id, const char *pod_uid)
{
	_cleanup_free_ char *b = NULL, *state = NULL, *ns = NULL;

	if (!bundle || bundle[0] != '/' || !plain_name(id) || !plain_name(pod_uid))
		return NULL;
	b = policy_clean_path(bundle);
	if (!split_task_dir(b, id, &state, &ns))
		return NULL;
	return xasprintf(KUBELET_PODS "/%s", pod_uid);
}
