/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a spec explicitly asks for above the floor, told apart from what the
 * engine filled in without being asked.  `docker run --cap-add
 * NET_ADMIN` and a plain `docker run` both carry capabilities the floor
 * drops; only the first is a request the user made and will miss.  Such a
 * request is refused at create with one error naming it, the rule, the
 * policy file and the field that would allow it (onRequestAboveFloor:
 * refuse, the default), or tightened like any default and logged (clamp).
 *
 * How a request is recognised (docs/policy.md, "Asked for, or filled in by the engine"):
 *  - capabilities outside the engines' default set (Docker's 14, which is
 *    also containerd's (ctr, CRI); podman's 11 and `runc spec`'s 3 are
 *    subsets of it) and outside the policy's own list;
 *  - no seccomp profile from Docker or podman (they always send their
 *    default profile unless told seccomp=unconfined or --privileged); CRI
 *    and ctr send none by default (Kubernetes' Unconfined), so there it is
 *    a default;
 *  - a device node that is not one of the default ones (--device);
 *  - no pid, ipc, uts or network namespace, or the host's network
 *    namespace by path (--pid=host, --network host, hostNetwork);
 *  - a memory, pids or cpu limit set above the policy's cap (unset is the
 *    engine default: no limit);
 *  - an rlimit above the cap, except from podman, which sends its own
 *    (RLIMIT_NOFILE 1048576) or containers.conf's default_ulimits unasked,
 *    as it sends containers.conf's pids_limit (2048): not told from
 *    --ulimit / --pids-limit, so tightened quietly;
 *  - a tmpfs with an explicit size above its cap, but /dev (every engine's)
 *    and a /dev/shm of Docker's and containerd's default 64 MiB.
 * Misjudging one of these changes only the message: refused or clamped,
 * the floor holds either way.  Pure data, like the rest of spec/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../../lib/cleanup.h"
#include "../internal.h"
#include "../../lib/util.h"
#include "weak.h"
#include "policy.h"

/* Docker's default capability set (moby oci/caps), containerd's too. */
static const char *const engine_default_caps[] = {
	"CAP_CHOWN",
	"CAP_DAC_OVERRIDE",
	"CAP_FSETID",
	"CAP_FOWNER",
	"CAP_MKNOD",
	"CAP_NET_RAW",
	"CAP_SETGID",
	"CAP_SETUID",
	"CAP_SETFCAP",
	"CAP_SETPCAP",
	"CAP_NET_BIND_SERVICE",
	"CAP_SYS_CHROOT",
	"CAP_KILL",
	"CAP_AUDIT_WRITE",
	NULL,
};

/* The /dev/shm size Docker and containerd give unasked. */
#define ENGINE_SHM_SIZE (64ull << 20)

/* From this many capabilities in the bounding set on, the request is
 * "every capability" (--privileged: Docker 20.10 sends 38, newer 41). */
#define PRIVILEGED_CAPS 36

const char *policy_engine_name(enum policy_engine e)
{
	static const char *const names[] = { "unknown", "docker", "podman", "cri" };

	return names[e];
}

const char *policy_annotation(const struct oci_spec *s, const char *key)
{
	for (size_t i = 0; i < s->annotations.len; i++)
		if (!strcmp(s->annotations.keys[i], key))
			return s->annotations.values[i];
	return NULL;
}

/* Docker binds /etc/hostname, hosts and resolv.conf from
 * <data-root>/containers/<id>/, the id being the one create is given. */
static bool docker_binds(const struct oci_spec *s, const char *id)
{
	_cleanup_free_ char *needle = NULL;

	if (!id || !*id)
		return false;
	needle = xasprintf("/containers/%s/", id);
	for (size_t i = 0; i < s->n_mounts; i++) {
		const struct oci_mount *m = &s->mounts[i];
		if (m->destination && m->source && strstr(m->source, needle) &&
		    (!strcmp(m->destination, "/etc/hostname") ||
		     !strcmp(m->destination, "/etc/hosts") ||
		     !strcmp(m->destination, "/etc/resolv.conf")))
			return true;
	}
	return false;
}

enum policy_engine policy_engine_of(const struct oci_spec *s, const char *id)
{
	const char *mgr = policy_annotation(s, "io.container.manager");

	/* podman also sets io.kubernetes.cri-o.* annotations: asked first. */
	if (mgr && !strcmp(mgr, "libpod"))
		return ENGINE_PODMAN;
	if (policy_annotation(s, "io.kubernetes.cri.container-type") ||
	    policy_annotation(s, "io.kubernetes.cri-o.ContainerType"))
		return ENGINE_CRI;
	if (docker_binds(s, id))
		return ENGINE_DOCKER;
	return ENGINE_UNKNOWN;
}

/* ---- the list ------------------------------------------------------------- */

static struct policy_request *add(struct policy_requests *r, const char *rule, const char *allow,
				  char *what)
{
	struct policy_request *q;

	r->items = xrealloc(r->items, (r->len + 1) * sizeof(*r->items));
	q = &r->items[r->len++];
	q->rule = xstrdup(rule);
	q->allow = allow ? xstrdup(allow) : NULL;
	q->what = what;
	q->unclampable = false;
	return q;
}

void policy_requests_free(struct policy_requests *r)
{
	for (size_t i = 0; i < r->len; i++) {
		free(r->items[i].rule);
		free(r->items[i].allow);
		free(r->items[i].what);
	}
	free(r->items);
	memset(r, 0, sizeof(*r));
}

static bool in_list(const char *const *list, const char *s)
{
	for (size_t i = 0; list[i]; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

/* "a, b, c" of at most 4 items, then "and N more". */
static char *join_some(const struct str_array *a)
{
	char *out = xstrdup("");

	for (size_t i = 0; i < a->len && i < 4; i++) {
		char *n = xasprintf("%s%s%s", out, i ? ", " : "", a->items[i]);
		free(out);
		out = n;
	}
	if (a->len > 4) {
		char *n = xasprintf("%s and %zu more", out, a->len - 4);
		free(out);
		out = n;
	}
	return out;
}

static void add_caps_of(const struct policy *p, const struct str_array *set,
			struct str_array *extra)
{
	for (size_t i = 0; i < set->len; i++) {
		const char *cap = set->items[i];
		if (in_list(engine_default_caps, cap) ||
		    policy_strv_has(&p->capabilities, cap) || policy_strv_has(extra, cap))
			continue;
		policy_strv_add(extra, cap);
	}
}

static void req_caps(const struct policy *p, const struct oci_spec *s, bool eng,
		     struct policy_requests *r)
{
	const struct oci_capabilities *c = &s->process.capabilities;
	struct str_array extra = { 0 };
	_cleanup_free_ char *list = NULL, *allow = NULL;

	if (!s->process.has_capabilities)
		return;
	add_caps_of(p, &c->bounding, &extra);
	add_caps_of(p, &c->effective, &extra);
	add_caps_of(p, &c->permitted, &extra);
	add_caps_of(p, &c->inheritable, &extra);
	add_caps_of(p, &c->ambient, &extra);
	if (!extra.len)
		return;
	list = join_some(&extra);
	/* The policy's uid (not root) holds no capability: both fields. */
	allow = xasprintf("\"capabilities\" (list %s)%s", extra.len == 1 ? extra.items[0] : "them",
			  p->identity_count ? " with \"identities\": null and \"uid\": null (a uid of the container's own holds no capabilities)" :
			  p->uid.set	    ? " with \"uid\": null (the policy's uid holds no capabilities)" :
					      "");
	if (c->bounding.len >= PRIVILEGED_CAPS)
		add(r, "capabilities", allow,
		    xasprintf("every capability (%zu; %zu beyond the engine's default set: %s%s)",
			      c->bounding.len, extra.len, list, eng ? "; --privileged" : ""));
	else
		add(r, "capabilities", allow,
		    xasprintf("capabilities beyond the engine's default set: %s%s", list,
			      eng ? " (--cap-add)" : ""));
	spec_str_array_free(&extra);
}

static void req_seccomp(const struct policy *p, const struct oci_spec *s,
			enum policy_engine e, struct policy_requests *r)
{
	if (!p->strict_seccomp || s->linux.seccomp.present ||
	    (e != ENGINE_DOCKER && e != ENGINE_PODMAN))
		return;
	add(r, "seccomp", "\"strictSeccomp\": false",
	    xstrdup("no seccomp filter (--security-opt seccomp=unconfined, or --privileged)"));
}

static void req_devices(const struct policy *p, const struct oci_spec *s, bool eng,
			struct policy_requests *r)
{
	struct str_array asked = { 0 };
	_cleanup_free_ char *list = NULL;

	if (!p->default_devices_only)
		return;
	for (size_t i = 0; i < s->linux.n_devices; i++)
		if (!policy_device_is_default(&s->linux.devices[i]))
			policy_strv_add(&asked, s->linux.devices[i].path);
	if (!asked.len)
		return;
	list = join_some(&asked);
	add(r, "devices", "\"defaultDevicesOnly\": false",
	    xasprintf("device%s %s%s", asked.len > 1 ? "s" : "", list,
		      eng ? (asked.len > 20 ? " (--privileged)" : " (--device)") : ""));
	spec_str_array_free(&asked);
}

static void req_namespaces(const struct oci_spec *s, bool host_netns, bool eng,
			   struct policy_requests *r)
{
	static const struct {
		enum ns_type t;
		const char *flag;
	} needed[] = {
		{ NS_PID, "--pid=host" },
		{ NS_IPC, "--ipc=host" },
		{ NS_UTS, "--uts=host" },
	};

	if (WEAK_NS_ABSENT)
		return; /* the host's namespaces let through (tests) */
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
		if (!spec_find_namespace(s, needed[i].t))
			add(r, "namespaces", NULL,
			    xasprintf("the host's %s namespace%s%s%s", ns_type_name(needed[i].t),
				      eng ? " (" : "", eng ? needed[i].flag : "", eng ? ")" : ""));
	/* A missing entry is clamped to a new namespace; the host's joined
	 * by path is refused by the namespace judge in any case. */
	if (!spec_find_namespace(s, NS_NETWORK) || host_netns)
		add(r, "network", NULL,
		    xasprintf("the host's network namespace%s",
			      eng ? " (--network host)" : ""))
			->unclampable = host_netns;
}

static void req_limits(const struct policy *p, const struct oci_spec *s,
		       enum policy_engine e, struct policy_requests *r)
{
	bool eng = e == ENGINE_DOCKER || e == ENGINE_PODMAN;
	const struct oci_resources *res = &s->linux.resources;
	const struct oci_cpu *cpu = &res->cpu;

	if (res->memory.limit.set && res->memory.limit.v > 0 &&
	    (uint64_t)res->memory.limit.v > p->memory)
		add(r, "limits", "\"limits\": {\"memory\": ...}",
		    xasprintf("a memory limit of %lld bytes%s, above the cap limits.memory = %llu",
			      (long long)res->memory.limit.v, eng ? " (--memory)" : "",
			      (unsigned long long)p->memory));
	/* podman's pids limit is containers.conf's pids_limit (2048) unless
	 * --pids-limit: the two cannot be told apart, so not a request. */
	if (res->pids_limit.set && res->pids_limit.v > p->pids && e != ENGINE_PODMAN)
		add(r, "limits", "\"limits\": {\"pids\": ...}",
		    xasprintf("a pids limit of %lld%s, above the cap limits.pids = %lld",
			      (long long)res->pids_limit.v, eng ? " (--pids-limit)" : "",
			      (long long)p->pids));
	/* quota/period > cap_quota/cap_period, compared without division. */
	if (cpu->quota.set && cpu->quota.v > 0 && cpu->period.set && cpu->period.v > 0 &&
	    (unsigned __int128)cpu->quota.v * p->cpu_period >
		    (unsigned __int128)p->cpu_quota * cpu->period.v)
		add(r, "limits", "\"limits\": {\"cpuQuota\": ...} (per cpuPeriod)",
		    xasprintf("a cpu quota of %lld per %llu us%s, above the cap limits.cpuQuota = %llu per %llu us",
			      (long long)cpu->quota.v, (unsigned long long)cpu->period.v,
			      eng ? " (--cpus)" : "", (unsigned long long)p->cpu_quota,
			      (unsigned long long)p->cpu_period));
}

static void req_rlimits(const struct policy *p, const struct oci_spec *s,
			enum policy_engine e, struct policy_requests *r)
{
	static const struct {
		int res;
		const char *field, *flag;
	} capped[] = {
		{ RLIMIT_NOFILE, "rlimitNofile", "nofile" },
		{ RLIMIT_FSIZE, "rlimitFsize", "fsize" },
		{ RLIMIT_CPU, "rlimitCpu", "cpu" },
	};
	bool eng = e != ENGINE_UNKNOWN && e != ENGINE_CRI;

	for (size_t i = 0; i < s->process.n_rlimits; i++) {
		const struct oci_rlimit *rl = &s->process.rlimits[i];
		for (size_t k = 0; k < sizeof(capped) / sizeof(capped[0]); k++) {
			uint64_t cap = capped[k].res == RLIMIT_NOFILE ? p->rlimit_nofile :
				       capped[k].res == RLIMIT_FSIZE  ? p->rlimit_fsize :
									p->rlimit_cpu;
			_cleanup_free_ char *allow = NULL;

			if (rl->resource != capped[k].res || !cap || rl->hard <= cap)
				continue;
			/* podman sends rlimits unasked: its own (RLIMIT_NOFILE
			 * 1048576) or containers.conf's default_ulimits, which
			 * cannot be told from --ulimit: not requests. */
			if (e == ENGINE_PODMAN)
				continue;
			allow = xasprintf("\"limits\": {\"%s\": ...}", capped[k].field);
			add(r, "limits", allow,
			    xasprintf("%s %llu%s%s%s, above the cap limits.%s = %llu", rl->type,
				      (unsigned long long)rl->hard, eng ? " (--ulimit " : "",
				      eng ? capped[k].flag : "", eng ? ")" : "", capped[k].field,
				      (unsigned long long)cap));
		}
	}
}

static const struct policy_tmpfs *tmpfs_at(const struct policy *p, const char *dest)
{
	for (size_t i = 0; i < p->n_tmpfs; i++)
		if (!strcmp(p->tmpfs[i].path, dest))
			return &p->tmpfs[i];
	return NULL;
}

static void req_tmpfs(const struct policy *p, const struct oci_spec *s, bool eng,
		      struct policy_requests *r)
{
	for (size_t i = 0; i < s->n_mounts; i++) {
		const struct oci_mount *m = &s->mounts[i];
		const struct policy_tmpfs *t;
		uint64_t cap, v = 0;
		bool asked = false;

		if (!m->type || strcmp(m->type, "tmpfs") || policy_mount_is_bind(m) ||
		    !m->destination || !strcmp(m->destination, "/dev"))
			continue; /* /dev: every engine's own (65536k), never asked */
		t = tmpfs_at(p, m->destination);
		cap = t ? t->size : p->memory;
		/* The kernel takes the last size option; an explicit size above
		 * the cap is a request, "no size" and RAM-relative ones are not. */
		for (size_t j = 0; j < m->options.len; j++) {
			uint64_t b;
			if (!policy_tmpfs_size_option(m->options.items[j]))
				continue;
			if (policy_tmpfs_size(m->options.items[j], 0, 4096, &b) == 0 && b) {
				v = b;
				asked = b > cap;
			} else {
				asked = false;
			}
		}
		/* Docker's and containerd's /dev/shm is 64 MiB unless --shm-size. */
		if (!asked || (!t && !strcmp(m->destination, "/dev/shm") && v == ENGINE_SHM_SIZE))
			continue;
		{
			_cleanup_free_ char *allow =
				t ? xasprintf("\"tmpfs\": [{\"path\": \"%s\", \"size\": %llu}]",
					      t->path, (unsigned long long)v) :
				    xstrdup("\"limits\": {\"memory\": ...} (a tmpfs outside the policy's list is capped at the memory limit)");
			add(r, "tmpfs", allow,
			    xasprintf("a tmpfs of %llu bytes on %s%s, above its cap of %llu",
				      (unsigned long long)v, m->destination,
				      eng ? " (--tmpfs / --shm-size)" : "", (unsigned long long)cap));
		}
	}
}

void policy_requests(const struct policy *p, const struct oci_spec *s, const char *id,
		     bool host_netns, struct policy_requests *out)
{
	enum policy_engine e = policy_engine_of(s, id);
	bool eng = e == ENGINE_DOCKER || e == ENGINE_PODMAN; /* flags to name */

	memset(out, 0, sizeof(*out));
	if (p->mode == POLICY_OFF || !s->has_process)
		return;
	req_caps(p, s, eng, out);
	req_seccomp(p, s, e, out);
	req_devices(p, s, eng, out);
	req_namespaces(s, host_netns, eng, out);
	req_limits(p, s, e, out);
	req_rlimits(p, s, e, out);
	req_tmpfs(p, s, eng, out);
}

/* The policy file in force, as an operator would look for it. */
static const char *source_of(const struct policy *p)
{
	return p->source ? p->source : "built-in default";
}

int policy_requests_refuse(const struct policy *p, const struct policy_requests *r,
			   struct error *err)
{
	char buf[ERROR_MSG_MAX];
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < r->len && n < sizeof(buf); i++) {
		const struct policy_request *q = &r->items[i];
		int w;

		if (q->allow)
			w = snprintf(buf + n, sizeof(buf) - n, "%s%s [rule %s; the policy field %s would allow it]",
				     i ? "; " : "", q->what, q->rule, q->allow);
		else
			w = snprintf(buf + n, sizeof(buf) - n, "%s%s [rule %s; no policy field allows it%s]",
				     i ? "; " : "", q->what, q->rule,
				     !strcmp(q->rule, "network") ?
					     " (\"networkAllowed\": true gives the container a network of its own)" :
					     "");
		if (w < 0)
			break;
		n += (size_t)w;
	}
	for (size_t i = 0; i < r->len; i++)
		if (r->items[i].unclampable)
			return error_set(err, "policy: refused: the container asks for %s. The policy in force (%s) does not grant %s; nothing was created. %s is refused whatever onRequestAboveFloor says (`agentsbx policy show` prints the policy)",
					 buf, source_of(p), r->len > 1 ? "these" : "this", r->items[i].what);
	return error_set(err, "policy: refused: the container asks for %s. The policy in force (%s) does not grant %s; nothing was created. With \"onRequestAboveFloor\": \"clamp\" it would run tightened to the floor instead (`agentsbx policy show` prints the policy)",
			 buf, source_of(p), r->len > 1 ? "these" : "this");
}

/* Under clamp: the requests clamp cannot tighten, moved out of r. */
void policy_requests_take_unclampable(struct policy_requests *r, struct policy_requests *out)
{
	size_t keep = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < r->len; i++) {
		if (!r->items[i].unclampable) {
			r->items[keep++] = r->items[i];
			continue;
		}
		out->items = xrealloc(out->items, (out->len + 1) * sizeof(*out->items));
		out->items[out->len++] = r->items[i];
	}
	r->len = keep;
}
