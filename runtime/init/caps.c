/* SPDX-License-Identifier: Apache-2.0 */
#include "caps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "../../lib/log.h"
#include "../../lib/util.h"

static int read_last_cap(void)
{
	char *buf = NULL;
	struct error err;
	long long v;
	int last = CAP_LAST_CAP;

	if (read_file_at(AT_FDCWD, "/proc/sys/kernel/cap_last_cap", 64, &buf,
			 NULL, &err) == 0) {
		buf[strcspn(buf, "\n")] = '\0';
		if (parse_i64(buf, &v) == 0 && v >= 0 && v < 64)
			last = (int)v;
	}
	free(buf);
	return last;
}

/* The runtime's own bounding set: what any process it makes can have. */
static uint64_t own_bounding(int last_cap)
{
	uint64_t m = 0;

	for (int cap = 0; cap <= last_cap; cap++)
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1)
			m |= 1ULL << cap;
	return m;
}

static int names_to_mask(const struct str_array *names, const char *set,
			 int last_cap, uint64_t own, uint64_t *mask, struct error *err)
{
	*mask = 0;
	for (size_t i = 0; i < names->len; i++) {
		const char *name = names->items[i];
		cap_value_t cap;

		if (cap_from_name(name, &cap) < 0 || strncasecmp(name, "CAP_", 4))
			return error_set(err, "process.capabilities.%s[%zu]: unknown capability \"%s\"",
					 set, i, name);
		if (cap > last_cap) {
			log_warn("capability %s is not known to the running kernel: skipped",
				 name);
			continue;
		}
		/* A limit of the host (CAP_SYS_RESOURCE on some machines): said
		 * out loud, never a silent pass nor a bare EPERM at capset. */
		if (!(own & (1ULL << cap))) {
			log_warn("process.capabilities.%s: %s is not in the runtime's own bounding set on this host: the container cannot have it",
				 set, name);
			continue;
		}
		*mask |= 1ULL << cap;
	}
	return 0;
}

int caps_prepare(const struct oci_capabilities *c, bool present,
		 struct caps_plan *out, struct error *err)
{
	uint64_t own;

	memset(out, 0, sizeof(*out));
	out->last_cap = read_last_cap();
	/* No process.capabilities at all is five empty sets, as runc and crun
	 * do (a set left out is empty): never the runtime's own full set. */
	out->set = true;
	if (!present)
		return 0;
	own = own_bounding(out->last_cap);
	if (names_to_mask(&c->bounding, "bounding", out->last_cap, own, &out->bounding, err) < 0 ||
	    names_to_mask(&c->effective, "effective", out->last_cap, own, &out->effective, err) < 0 ||
	    names_to_mask(&c->permitted, "permitted", out->last_cap, own, &out->permitted, err) < 0 ||
	    names_to_mask(&c->inheritable, "inheritable", out->last_cap, own, &out->inheritable, err) < 0 ||
	    names_to_mask(&c->ambient, "ambient", out->last_cap, own, &out->ambient, err) < 0)
		return -1;
	return 0;
}

int caps_drop_bounding(const struct caps_plan *p, struct error *err)
{
	if (!p->set)
		return 0;
	for (int cap = 0; cap <= p->last_cap; cap++) {
		if (p->bounding & (1ULL << cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return error_sys(err, "drop capability %d from bounding set", cap);
	}
	return 0;
}

static int set_flag_from_mask(cap_t caps, cap_flag_t flag, uint64_t mask,
			      int last_cap)
{
	for (int cap = 0; cap <= last_cap; cap++) {
		cap_value_t v = cap;
		if (!(mask & (1ULL << cap)))
			continue;
		if (cap_set_flag(caps, flag, 1, &v, CAP_SET) < 0)
			return -1;
	}
	return 0;
}

static int apply_ambient(const struct caps_plan *p, struct error *err)
{
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
	    errno != EINVAL)
		return error_sys(err, "clear ambient capabilities");
	for (int cap = 0; cap <= p->last_cap; cap++) {
		uint64_t bit = 1ULL << cap;
		if (!(p->ambient & bit))
			continue;
		/* The kernel requires it in permitted and inheritable. */
		if (!(p->permitted & bit) || !(p->inheritable & bit)) {
			char *name = cap_to_name(cap);
			log_debug("ambient capability %s not raised: not in permitted and inheritable",
				  name ? name : "?");
			cap_free(name);
			continue;
		}
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0)
			return error_sys(err, "raise ambient capability %d", cap);
	}
	return 0;
}

int caps_apply(const struct caps_plan *p, struct error *err)
{
	cap_t caps;
	int r;

	if (!p->set)
		return 0;
	caps = cap_init();
	if (!caps)
		return error_sys(err, "allocate capability state");
	if (set_flag_from_mask(caps, CAP_EFFECTIVE, p->effective, p->last_cap) < 0 ||
	    set_flag_from_mask(caps, CAP_PERMITTED, p->permitted, p->last_cap) < 0 ||
	    set_flag_from_mask(caps, CAP_INHERITABLE, p->inheritable, p->last_cap) < 0) {
		cap_free(caps);
		return error_sys(err, "build capability sets");
	}
	r = cap_set_proc(caps);
	cap_free(caps);
	if (r < 0)
		return error_sys(err, "set capabilities");
	return apply_ambient(p, err);
}
