/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The systemd cgroup manager (--systemd-cgroup): the container's cgroup is
 * a transient scope unit started over D-Bus with libsystemd's sd-bus; the
 * limits systemd knows become unit properties, the rest is written to the
 * files (v2.c / v1.c), and everything that only reads or
 * signals (kill, ps, pause, exec, stats) works on the files directly.
 * See systemd.h.
 */
#include "systemd.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "../../lib/cleanup.h"
#include "../../lib/dynlib.h"
#include "../../lib/log.h"
#include "../../lib/util.h"

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER SD_DEST ".Manager"
#define SD_UNIT_IFACE SD_DEST ".Unit"
#define SD_SCOPE_IFACE SD_DEST ".Scope"
#define SD_JOB_IFACE SD_DEST ".Job"
#define SD_NO_SUCH_UNIT SD_DEST ".NoSuchUnit"
#define SD_PRIVATE_ADDR "unix:path=/run/systemd/private"
#define SD_POLL_MS 250 /* a look at the job when no JobRemoved came */

/*
 * libsystemd, opened by the first call that talks to systemd (dlopen,
 * lib/dynlib.h): only --systemd-cgroup needs it, and linking it made every
 * call pay for its ~10 libraries.  Every sd_bus_* call below goes through
 * this table.
 */
static struct {
	__typeof__(sd_bus_call) *sd_bus_call;
	__typeof__(sd_bus_call_method) *sd_bus_call_method;
	__typeof__(sd_bus_error_has_name) *sd_bus_error_has_name;
	__typeof__(sd_bus_error_is_set) *sd_bus_error_is_set;
	__typeof__(sd_bus_flush_close_unref) *sd_bus_flush_close_unref;
	__typeof__(sd_bus_get_property_string) *sd_bus_get_property_string;
	__typeof__(sd_bus_get_property_trivial) *sd_bus_get_property_trivial;
	__typeof__(sd_bus_match_signal) *sd_bus_match_signal;
	__typeof__(sd_bus_message_append) *sd_bus_message_append;
	__typeof__(sd_bus_message_append_array) *sd_bus_message_append_array;
	__typeof__(sd_bus_message_append_strv) *sd_bus_message_append_strv;
	__typeof__(sd_bus_message_close_container) *sd_bus_message_close_container;
	__typeof__(sd_bus_message_new_method_call) *sd_bus_message_new_method_call;
	__typeof__(sd_bus_message_open_container) *sd_bus_message_open_container;
	__typeof__(sd_bus_message_read) *sd_bus_message_read;
	__typeof__(sd_bus_new) *sd_bus_new;
	__typeof__(sd_bus_open_system) *sd_bus_open_system;
	__typeof__(sd_bus_path_encode) *sd_bus_path_encode;
	__typeof__(sd_bus_process) *sd_bus_process;
	__typeof__(sd_bus_set_address) *sd_bus_set_address;
	__typeof__(sd_bus_slot_unref) *sd_bus_slot_unref;
	__typeof__(sd_bus_start) *sd_bus_start;
	__typeof__(sd_bus_unref) *sd_bus_unref;
	__typeof__(sd_bus_wait) *sd_bus_wait;
	__typeof__(sd_bus_message_unref) *sd_bus_message_unref;
	__typeof__(sd_bus_error_free) *sd_bus_error_free;
} sdl;
static void *sdl_handle;

static int sd_load(struct error *err)
{
#define SYM(f)                      \
	{                           \
#f, (void **)&sdl.f \
	}
	const struct dynlib_sym syms[] = {
		SYM(sd_bus_call),
		SYM(sd_bus_call_method),
		SYM(sd_bus_error_has_name),
		SYM(sd_bus_error_is_set),
		SYM(sd_bus_flush_close_unref),
		SYM(sd_bus_get_property_string),
		SYM(sd_bus_get_property_trivial),
		SYM(sd_bus_match_signal),
		SYM(sd_bus_message_append),
		SYM(sd_bus_message_append_array),
		SYM(sd_bus_message_append_strv),
		SYM(sd_bus_message_close_container),
		SYM(sd_bus_message_new_method_call),
		SYM(sd_bus_message_open_container),
		SYM(sd_bus_message_read),
		SYM(sd_bus_new),
		SYM(sd_bus_open_system),
		SYM(sd_bus_path_encode),
		SYM(sd_bus_process),
		SYM(sd_bus_set_address),
		SYM(sd_bus_slot_unref),
		SYM(sd_bus_start),
		SYM(sd_bus_unref),
		SYM(sd_bus_wait),
		SYM(sd_bus_message_unref),
		SYM(sd_bus_error_free),
	};
#undef SYM

	return dynlib_load(&sdl_handle, "libsystemd.so.0",
			   "--systemd-cgroup (the systemd cgroup manager)",
			   "Debian: libsystemd0", syms,
			   sizeof(syms) / sizeof(*syms), err);
}

static void bus_error_free(sd_bus_error *e)
{
	if (sdl_handle)
		sdl.sd_bus_error_free(e);
}

static void bus_msg_unrefp(sd_bus_message **m)
{
	if (*m)
		sdl.sd_bus_message_unref(*m);
}

#define _cleanup_bus_error_ __attribute__((cleanup(bus_error_free)))
#define _cleanup_bus_msg_ __attribute__((cleanup(bus_msg_unrefp)))

/* ---- the bus ---------------------------------------------------------------- */

struct sd_conn {
	sd_bus *bus;
	struct cgsd_unit unit;
	char *unit_path; /* the unit's D-Bus object */
	struct cgsd_caps caps;
};

static void conn_close(struct sd_conn *c)
{
	if (c->bus)
		sdl.sd_bus_flush_close_unref(c->bus);
	cgsd_unit_free(&c->unit);
	free(c->unit_path);
	memset(c, 0, sizeof(*c));
}

static int check_running(struct error *err)
{
	if (access(CGSD_RUN_DIR, F_OK) == 0)
		return 0;
	error_set(err, "systemd cgroup manager: systemd is not running (no %s)",
		  CGSD_RUN_DIR);
	err->code = ENOENT;
	return -1;
}

/* "systemd cgroup manager: METHOD UNIT: message (error name)". */
static int bus_fail(struct error *err, int r, const sd_bus_error *e,
		    const char *method, const char *unit)
{
	if (e && sdl.sd_bus_error_is_set(e))
		error_set(err, "systemd cgroup manager: %s %s: %s (%s)", method,
			  unit, e->message ? e->message : "", e->name);
	else
		error_setc(err, r < 0 ? -r : EIO, "systemd cgroup manager: %s %s",
			   method, unit);
	err->code = r < 0 ? -r : EIO;
	return -1;
}

/* systemd's own socket, when no dbus-daemon runs (root only). */
static int open_private(sd_bus **out)
{
	sd_bus *bus = NULL;
	int r = sdl.sd_bus_new(&bus);

	if (r >= 0)
		r = sdl.sd_bus_set_address(bus, SD_PRIVATE_ADDR);
	if (r >= 0)
		r = sdl.sd_bus_start(bus);
	if (r < 0) {
		sdl.sd_bus_unref(bus);
		return r;
	}
	*out = bus;
	return 0;
}

static int bus_open(sd_bus **out, struct error *err)
{
	int r = sdl.sd_bus_open_system(out);

	if (r >= 0)
		return 0;
	if (geteuid() == 0 && open_private(out) == 0) {
		log_debug("systemd cgroup manager: no system bus (%s), using %s",
			  strerror(-r), SD_PRIVATE_ADDR);
		return 0;
	}
	error_setc(err, -r,
		   "systemd cgroup manager: cannot connect to the system bus");
	return -1;
}

static int read_version(struct sd_conn *c, struct error *err)
{
	_cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_free_ char *v = NULL;
	int r = sdl.sd_bus_get_property_string(c->bus, SD_DEST, SD_PATH,
					       SD_MANAGER, "Version", &e, &v);

	if (r < 0)
		return bus_fail(err, r, &e, "Get", "Manager.Version");
	c->caps.version = cgsd_parse_version(v);
	return 0;
}

/* Connected, with the unit named by path and what systemd offers. */
static int conn_open(struct sd_conn *c, const struct cg_host *h,
		     const char *path, struct error *err)
{
	int r;

	memset(c, 0, sizeof(*c));
	if (sd_load(err) < 0 || check_running(err) < 0 ||
	    cgsd_unit_from_path(path, &c->unit, err) < 0)
		return -1;
	r = sdl.sd_bus_path_encode(SD_PATH "/unit", c->unit.name, &c->unit_path);
	if (r < 0)
		return bus_fail(err, r, NULL, "encode the object path of",
				c->unit.name);
	if (bus_open(&c->bus, err) < 0 || read_version(c, err) < 0)
		return -1;
	c->caps.unified = h->mode == CGROUP_MODE_V2;
	return 0;
}

static int append_variant(sd_bus_message *m, const struct cgsd_prop *p)
{
	const char *sig = p->type == CGSD_STRV ? "as" : "ay";
	int r = sdl.sd_bus_message_open_container(m, 'r', "sv");

	if (r >= 0)
		r = sdl.sd_bus_message_append(m, "s", p->name);
	if (r >= 0)
		r = sdl.sd_bus_message_open_container(m, 'v', sig);
	if (r >= 0 && p->type == CGSD_STRV)
		r = sdl.sd_bus_message_append_strv(m, p->strv);
	else if (r >= 0)
		r = sdl.sd_bus_message_append_array(m, 'y', p->bytes, p->n_bytes);
	if (r >= 0)
		r = sdl.sd_bus_message_close_container(m);
	if (r >= 0)
		r = sdl.sd_bus_message_close_container(m);
	return r;
}

static int append_pairs(sd_bus_message *m, const struct cgsd_prop *p)
{
	int r = sdl.sd_bus_message_open_container(m, 'r', "sv");

	if (r >= 0)
		r = sdl.sd_bus_message_append(m, "s", p->name);
	if (r >= 0)
		r = sdl.sd_bus_message_open_container(m, 'v', "a(ss)");
	if (r >= 0)
		r = sdl.sd_bus_message_open_container(m, 'a', "(ss)");
	for (size_t i = 0; r >= 0 && p->strv[i] && p->strv[i + 1]; i += 2)
		r = sdl.sd_bus_message_append(m, "(ss)", p->strv[i], p->strv[i + 1]);
	for (int k = 0; r >= 0 && k < 3; k++)
		r = sdl.sd_bus_message_close_container(m);
	return r;
}

static int append_prop(sd_bus_message *m, const struct cgsd_prop *p)
{
	switch (p->type) {
	case CGSD_BOOL:
		return sdl.sd_bus_message_append(m, "(sv)", p->name, "b",
						 (int)(p->u != 0));
	case CGSD_U64:
		return sdl.sd_bus_message_append(m, "(sv)", p->name, "t", p->u);
	case CGSD_STR:
		return sdl.sd_bus_message_append(m, "(sv)", p->name, "s", p->s);
	case CGSD_PIDS:
		return sdl.sd_bus_message_append(m, "(sv)", p->name, "au", 1,
						 (uint32_t)p->u);
	case CGSD_STRV:
	case CGSD_BYTES:
		return append_variant(m, p);
	case CGSD_PAIRS:
		return append_pairs(m, p);
	}
	return -EINVAL;
}

static int append_props(sd_bus_message *m, const struct cgsd_props *props)
{
	int r = sdl.sd_bus_message_open_container(m, 'a', "(sv)");

	for (size_t i = 0; r >= 0 && i < props->n; i++)
		r = append_prop(m, &props->items[i]);
	if (r >= 0)
		r = sdl.sd_bus_message_close_container(m);
	return r;
}

/* A job being waited for: JobRemoved tells its result. */
struct job_wait {
	char *job;
	char *result;
	bool done;
};

static int on_job_removed(sd_bus_message *m, void *data, sd_bus_error *ret)
{
	struct job_wait *w = data;
	const char *job, *unit, *result;
	uint32_t id;

	(void)ret;
	if (!w->job || sdl.sd_bus_message_read(m, "uoss", &id, &job, &unit,
					       &result) < 0)
		return 0;
	if (strcmp(job, w->job) == 0) {
		free(w->result);
		w->result = xstrdup(result);
		w->done = true;
	}
	return 0;
}

/* Signals go out only to subscribers; without them, the polling does. */
static int watch_jobs(struct sd_conn *c, struct job_wait *w,
		      sd_bus_slot **slot, struct error *err)
{
	_cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = sdl.sd_bus_match_signal(c->bus, slot, SD_DEST, SD_PATH, SD_MANAGER,
					"JobRemoved", on_job_removed, w);

	if (r < 0)
		return bus_fail(err, r, NULL, "AddMatch JobRemoved for",
				c->unit.name);
	r = sdl.sd_bus_call_method(c->bus, SD_DEST, SD_PATH, SD_MANAGER,
				   "Subscribe", &e, NULL, "");
	if (r < 0)
		log_debug("systemd cgroup manager: Subscribe: %s",
			  e.message ? e.message : strerror(-r));
	return 0;
}

static bool job_gone(struct sd_conn *c, const char *job)
{
	_cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
	uint32_t id;

	return sdl.sd_bus_get_property_trivial(c->bus, SD_DEST, job, SD_JOB_IFACE,
					       "Id", &e, 'u', &id) < 0 &&
	       sdl.sd_bus_error_is_set(&e);
}

static int wait_job(struct sd_conn *c, struct job_wait *w, const char *method,
		    struct error *err)
{
	long long deadline = cg_now_ms() + CGSD_JOB_TIMEOUT_MS;
	long long next_poll = cg_now_ms() + SD_POLL_MS;

	while (!w->done) {
		long long now;
		int r = sdl.sd_bus_process(c->bus, NULL);

		if (r < 0)
			return bus_fail(err, r, NULL, method, c->unit.name);
		if (r > 0)
			continue;
		now = cg_now_ms();
		if (now >= next_poll) {
			if (job_gone(c, w->job))
				break;
			next_poll = now + SD_POLL_MS;
		}
		if (now >= deadline)
			return error_setc(err, ETIMEDOUT,
					  "systemd cgroup manager: %s %s: job %s not done after %d ms",
					  method, c->unit.name, w->job,
					  CGSD_JOB_TIMEOUT_MS);
		r = sdl.sd_bus_wait(c->bus, (uint64_t)(next_poll - now) * 1000);
		if (r < 0 && r != -EINTR)
			return bus_fail(err, r, NULL, method, c->unit.name);
	}
	log_debug("systemd cgroup manager: %s %s: job %s: %s", method,
		  c->unit.name, w->job, w->result ? w->result : "gone (polled)");
	if (w->result && strcmp(w->result, "done") != 0)
		return error_set(err,
				 "systemd cgroup manager: %s %s: the job ended \"%s\" (journalctl -u %s)",
				 method, c->unit.name, w->result, c->unit.name);
	return 0;
}

static void job_wait_free(struct job_wait *w)
{
	free(w->job);
	free(w->result);
}

/* The job path of a reply, then the wait for it. */
static int follow_job(struct sd_conn *c, sd_bus_message *reply,
		      struct job_wait *w, const char *method, struct error *err)
{
	const char *job;
	int r = sdl.sd_bus_message_read(reply, "o", &job);

	if (r < 0)
		return bus_fail(err, r, NULL, method, c->unit.name);
	w->job = xstrdup(job);
	return wait_job(c, w, method, err);
}

static int unit_property(struct sd_conn *c, const char *iface,
			 const char *name, char **out, struct error *err)
{
	_cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = sdl.sd_bus_get_property_string(c->bus, SD_DEST, c->unit_path, iface,
					       name, &e, out);

	if (r < 0) {
		_cleanup_free_ char *what = xasprintf("Get %s of", name);

		return bus_fail(err, r, &e, what, c->unit.name);
	}
	return 0;
}

static int start_scope(struct sd_conn *c, const struct cgsd_props *props,
		       struct error *err)
{
	_cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_bus_msg_ sd_bus_message *m = NULL;
	_cleanup_bus_msg_ sd_bus_message *reply = NULL;
	_cleanup_free_ char *state = NULL;
	sd_bus_slot *slot = NULL;
	struct job_wait w = { 0 };
	int r;

	if (watch_jobs(c, &w, &slot, err) < 0)
		return -1;
	r = sdl.sd_bus_message_new_method_call(c->bus, &m, SD_DEST, SD_PATH,
					       SD_MANAGER, "StartTransientUnit");
	if (r >= 0)
		r = sdl.sd_bus_message_append(m, "ss", c->unit.name, "fail");
	if (r >= 0)
		r = append_props(m, props);
	if (r >= 0)
		r = sdl.sd_bus_message_append(m, "a(sa(sv))", 0);
	if (r < 0)
		r = bus_fail(err, r, NULL, "build StartTransientUnit for",
			     c->unit.name);
	else if ((r = sdl.sd_bus_call(c->bus, m, CGSD_JOB_TIMEOUT_MS * 1000ULL, &e,
				      &reply)) < 0)
		r = bus_fail(err, r, &e, "StartTransientUnit", c->unit.name);
	else
		r = follow_job(c, reply, &w, "StartTransientUnit", err);
	sdl.sd_bus_slot_unref(slot);
	job_wait_free(&w);
	if (r < 0)
		return -1;
	if (unit_property(c, SD_UNIT_IFACE, "ActiveState", &state, err) < 0)
		return -1;
	if (strcmp(state, "active") != 0)
		return error_set(err,
				 "systemd cgroup manager: StartTransientUnit %s: the scope is %s, not active",
				 c->unit.name, state);
	return 0;
}

static int stop_unit(struct sd_conn *c, struct error *err)
{
	_cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_bus_msg_ sd_bus_message *reply = NULL;
	sd_bus_slot *slot = NULL;
	struct job_wait w = { 0 };
	int r;

	if (watch_jobs(c, &w, &slot, err) < 0)
		return -1;
	r = sdl.sd_bus_call_method(c->bus, SD_DEST, SD_PATH, SD_MANAGER, "StopUnit",
				   &e, &reply, "ss", c->unit.name, "replace");
	if (r < 0 && sdl.sd_bus_error_has_name(&e, SD_NO_SUCH_UNIT))
		r = 0; /* gone already (it stops by itself when empty) */
	else if (r < 0)
		r = bus_fail(err, r, &e, "StopUnit", c->unit.name);
	else
		r = follow_job(c, reply, &w, "StopUnit", err);
	sdl.sd_bus_slot_unref(slot);
	job_wait_free(&w);
	return r;
}

static void reset_failed(struct sd_conn *c)
{
	_cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = sdl.sd_bus_call_method(c->bus, SD_DEST, SD_PATH, SD_MANAGER,
				       "ResetFailedUnit", &e, NULL, "s",
				       c->unit.name);

	if (r < 0 && !sdl.sd_bus_error_has_name(&e, SD_NO_SUCH_UNIT))
		log_debug("systemd cgroup manager: ResetFailedUnit %s: %s",
			  c->unit.name, e.message ? e.message : strerror(-r));
}

static int set_properties(struct sd_conn *c, const struct cgsd_props *props,
			  struct error *err)
{
	_cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_bus_msg_ sd_bus_message *m = NULL;
	int r = sdl.sd_bus_message_new_method_call(c->bus, &m, SD_DEST, SD_PATH,
						   SD_MANAGER, "SetUnitProperties");

	if (r >= 0)
		r = sdl.sd_bus_message_append(m, "sb", c->unit.name, 1);
	if (r >= 0)
		r = append_props(m, props);
	if (r < 0)
		return bus_fail(err, r, NULL, "build SetUnitProperties for",
				c->unit.name);
	r = sdl.sd_bus_call(c->bus, m, CGSD_JOB_TIMEOUT_MS * 1000ULL, &e, NULL);
	if (r < 0)
		return bus_fail(err, r, &e, "SetUnitProperties", c->unit.name);
	return 0;
}

/* systemd's idea of the scope's cgroup must be the path we keep. */
static int check_cgroup(struct sd_conn *c, struct error *err)
{
	_cleanup_free_ char *cg = NULL;

	if (unit_property(c, SD_SCOPE_IFACE, "ControlGroup", &cg, err) < 0)
		return -1;
	if (strcmp(cg, c->unit.path) != 0)
		return error_set(err,
				 "systemd cgroup manager: %s is in cgroup \"%s\", not \"%s\" (systemd in another cgroup namespace?)",
				 c->unit.name, cg, c->unit.path);
	return 0;
}

/* ---- the files -------------------------------------------------------------- */

static int open_leaf(const char *mnt, bool v2, const char *path,
		     struct cg_dir *root, struct cg_dir *leaf,
		     struct error *err)
{
	if (cg_open_mount(mnt, v2, root, err) < 0)
		return -1;
	if (cg_walk(root, path, false, NULL, NULL, leaf, NULL, err) < 0) {
		if (err->code == ENOENT)
			error_setc(err, ENOENT, "cgroup %s%s does not exist",
				   mnt, path);
		return -1;
	}
	return 0;
}

/* The mount holding a setting's file (NULL: none). */
static const char *mount_for(const struct cg_host *h, const char *ctrl)
{
	const struct cg1_hier *hier;
	int c;

	if (h->mode == CGROUP_MODE_V2)
		return h->v2_mnt;
	c = ctrl ? cg1_ctrl_from_name(ctrl) : -1;
	hier = c >= 0 ? cg1_host_hier(h, (enum cg1_ctrl)c) : NULL;
	return hier ? hier->mnt : NULL;
}

static int read_u64_file(const struct cg_host *h, const char *path,
			 const char *ctrl, const char *file, char **out)
{
	_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
	_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;
	const char *mnt = mount_for(h, ctrl);
	struct error ignored;

	if (!mnt || open_leaf(mnt, h->mode == CGROUP_MODE_V2, path, &root, &leaf, &ignored) < 0 ||
	    cg_read(&leaf, file, out, &ignored) < 0)
		return -1;
	(*out)[strcspn(*out, "\n")] = '\0';
	return 0;
}

/* The quota in force, for an update that changes only one of the two. */
static void read_cpu_now(const struct cg_host *h, const char *path,
			 struct cgsd_cpu_now *now)
{
	_cleanup_free_ char *a = NULL, *b = NULL;
	char q[32] = "", p[32] = "";
	unsigned long long u;

	now->quota = UINT64_MAX;
	now->period = CGSD_DEFAULT_PERIOD;
	if (h->mode == CGROUP_MODE_V2) {
		if (read_u64_file(h, path, "cpu", "cpu.max", &a) < 0 ||
		    sscanf(a, "%31s %31s", q, p) != 2)
			return;
	} else {
		if (read_u64_file(h, path, "cpu", "cpu.cfs_quota_us", &a) < 0 ||
		    read_u64_file(h, path, "cpu", "cpu.cfs_period_us", &b) < 0)
			return;
		snprintf(q, sizeof(q), "%s", a);
		snprintf(p, sizeof(p), "%s", b);
	}
	if (parse_u64(q, &u) == 0)
		now->quota = u;
	if (parse_u64(p, &u) == 0 && u > 0)
		now->period = u;
}

/* checkBeforeUpdate, before systemd gets a limit (it would not check). */
static int check_usage(const struct cg_host *h, const char *path,
		       const struct cg_settings *set, struct error *err)
{
	for (size_t i = 0; i < set->n; i++) {
		const struct cg_setting *it = &set->items[i];
		_cleanup_free_ char *text = NULL;
		long long limit, usage;

		if (!it->usage_file || parse_i64(it->value, &limit) < 0 ||
		    read_u64_file(h, path, it->ctrl, it->usage_file, &text) < 0 ||
		    parse_i64(text, &usage) < 0 || limit < 0 || limit >= usage)
			continue;
		return error_set(err,
				 "linux.resources.%s: new limit %lld is below the current usage %lld (%s) and checkBeforeUpdate is set",
				 it->field, limit, usage, it->usage_file);
	}
	return 0;
}

/* cpuset refuses tasks while cpus or mems is empty: the parent's. */
static int cpuset_fill(const struct cg_dir *parent, const struct cg_dir *dir,
		       bool made, bool leaf, void *ctx, struct error *err)
{
	static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };

	if (!parent)
		return 0;
	for (size_t i = 0; i < 2; i++) {
		_cleanup_free_ char *mine = NULL, *theirs = NULL;

		if (cg_read(dir, files[i], &mine, err) < 0)
			return -1;
		if (mine[strspn(mine, " \n")])
			continue;
		if (cg_read(parent, files[i], &theirs, err) < 0)
			return -1;
		theirs[strcspn(theirs, "\n")] = '\0';
		if (cg_write(dir, files[i], theirs, err) < 0)
			return error_prefix(err, "initialise cpuset %s",
					    dir->path);
	}
	return 0;
}

/*
 * v1: systemd made the scope in the hierarchies it delegates (and in its
 * own); the container gets the same path in all the others (freezer,
 * cpuset, devices, net_cls, hugetlb, ...), as with cgroupfs.
 */
static int join_v1(const struct cg_host *h, const char *path, pid_t pid,
		   struct error *err)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%d", (int)pid);
	for (size_t i = 0; i < h->n_hier; i++) {
		_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
		_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;
		bool cpuset = h->hier[i].ctrls & (1u << CG1_CPUSET);

		if (cg_open_mount(h->hier[i].mnt, false, &root, err) < 0 ||
		    cg_walk(&root, path, true, cpuset ? cpuset_fill : NULL, NULL,
			    &leaf, NULL, err) < 0 ||
		    cg_write(&leaf, "cgroup.procs", buf, err) < 0)
			return -1;
	}
	return 0;
}

static bool in_hier(const char *ctrl, const void *ctx)
{
	const struct cg1_hier *hier = ctx;
	int c = ctrl ? cg1_ctrl_from_name(ctrl) : -1;

	return c >= 0 && (hier->ctrls & (1u << c));
}

static int apply_v1(const struct cg_host *h, const char *path,
		    const struct cg_settings *set, struct error *err)
{
	for (size_t k = 0; k < set->n; k++)
		if (!mount_for(h, set->items[k].ctrl))
			return error_set(err,
					 "linux.resources.%s: the %s controller is not mounted on this host (no %s)",
					 set->items[k].field,
					 set->items[k].ctrl ? set->items[k].ctrl : "?",
					 set->items[k].file);
	for (size_t i = 0; i < h->n_hier; i++) {
		_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
		_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;
		bool any = false;

		for (size_t k = 0; k < set->n; k++)
			any |= in_hier(set->items[k].ctrl, &h->hier[i]);
		if (!any)
			continue;
		if (open_leaf(h->hier[i].mnt, false, path, &root, &leaf, err) < 0 ||
		    cg_settings_apply(&leaf, set, in_hier, &h->hier[i], err) < 0)
			return -1;
	}
	return 0;
}

/* What systemd does not manage: limits, and the device filter (v2). */
struct fs_rest {
	struct cg_settings main; /* v2, or the v1 hierarchies */
	struct cg_settings side; /* hybrid: the cgroup2 side */
};

static void fs_rest_free(struct fs_rest *r)
{
	cg_settings_free(&r->main);
	cg_settings_free(&r->side);
}

static int apply_rest(const struct cg_host *h, const char *path,
		      const struct fs_rest *rest,
		      const struct oci_resources *res, struct error *err)
{
	if (h->mode == CGROUP_MODE_V2)
		return cg2_update(h->v2_mnt, path, &rest->main, res, err);
	if (apply_v1(h, path, &rest->main, err) < 0)
		return -1;
	if (rest->side.n > 0)
		return cg2_update(h->v2_mnt, path, &rest->side, NULL, err);
	return 0;
}

/* v1: the device rules go to systemd too, or it resets them (see
 * cgsd_device_props); rules it cannot hold are refused, not weakened. */
static int v1_device_props(const struct oci_resources *res,
			   struct cgsd_props *props, struct error *err)
{
	_cleanup_free_ char *text = NULL;
	struct error e;
	int r;

	if (read_file_at(AT_FDCWD, "/proc/devices", 1u << 16, &text, NULL,
			 &e) < 0) {
		log_warn("systemd cgroup manager: %s: DeviceAllow= by device number only",
			 e.msg);
		text = xstrdup("");
	}
	r = cgsd_device_props(res->devices, res->n_devices, text, props, err);
	if (r == 0)
		return error_set(err,
				 "linux.resources.devices: with --systemd-cgroup on cgroup v1 the rules must be an allow list (deny all, then allows): systemd rewrites a scope's devices cgroup at every daemon-reload from DeviceAllow=, which cannot deny");
	return r < 0 ? -1 : 0;
}

/* Settings as cgroupfs would write them, then the split. */
static int build_split(const struct cg_host *h, const char *path,
		       const struct cgsd_caps *caps,
		       const struct oci_resources *res, bool update,
		       struct cgsd_props *props, struct fs_rest *rest,
		       struct error *err)
{
	struct cg_settings all = { 0 };
	struct cgsd_cpu_now now = { UINT64_MAX, CGSD_DEFAULT_PERIOD };
	int r;

	if (h->mode == CGROUP_MODE_V2)
		r = cg2_build_settings(res, update, &all, err);
	else
		r = cg1_build_settings(res, update, h, &all, &rest->side, err);
	if (r < 0)
		return -1;
	if (update)
		read_cpu_now(h, path, &now);
	r = update ? check_usage(h, path, &all, err) : 0;
	if (r == 0)
		r = cgsd_split_settings(&all, caps, &now, props, &rest->main,
					err);
	if (r == 0 && !caps->unified && res && res->n_devices > 0)
		r = v1_device_props(res, props, err);
	cg_settings_free(&all);
	return r;
}

static int fs_kill(const struct cg_host *h, const char *path, int sig,
		   struct error *err)
{
	if (h->mode == CGROUP_MODE_V2)
		return cg2_kill(h->v2_mnt, path, sig, err);
	return cg1_kill(h, path, sig, err);
}

static int fs_destroy(const struct cg_host *h, const char *path, bool force,
		      struct error *err)
{
	if (h->mode == CGROUP_MODE_V2)
		return cg2_destroy(h->v2_mnt, path, force, err);
	return cg1_destroy(h, path, force, err);
}

/* Does the cgroup still hold processes?  (destroy without force) */
static int fs_busy(const struct cg_host *h, const char *path,
		   struct error *err)
{
	_cleanup_free_ pid_t *pids = NULL;
	size_t n = 0;
	int r = h->mode == CGROUP_MODE_V2 ?
			cg2_pids(h->v2_mnt, path, &pids, &n, err) :
			cg1_pids(h, path, &pids, &n, err);

	if (r < 0)
		return err->code == ENOENT ? 0 : -1;
	if (n)
		return error_setc(err, EBUSY, "cgroup %s still has %zu process(es)",
				  path, n);
	return 0;
}

/* ---- the manager -------------------------------------------------------------- */

int cgsd_resolve_path(const char *cgroups_path, const char *id, char **out,
		      struct error *err)
{
	struct cgsd_unit u;
	sd_bus *bus = NULL;

	if (sd_load(err) < 0 || check_running(err) < 0 ||
	    bus_open(&bus, err) < 0)
		return -1;
	sdl.sd_bus_flush_close_unref(bus);
	if (cgsd_parse_path(cgroups_path, id, &u, err) < 0)
		return -1;
	*out = take_ptr(u.path);
	cgsd_unit_free(&u);
	return 0;
}

int cgsd_kill(const struct cg_host *h, const char *path, int sig,
	      struct error *err)
{
	if (fs_kill(h, path, sig, err) == 0)
		return 0;
	/* systemd removes a scope's cgroups as soon as it is empty: when
	 * they vanish under the signalling, every process is gone. */
	return err->code == ENOENT ? 0 : -1;
}

/* A create that failed half way: nothing may be left. */
static void undo_scope(struct sd_conn *c, const struct cg_host *h,
		       const char *path)
{
	struct error e;

	if (fs_kill(h, path, SIGKILL, &e) < 0 && e.code != ENOENT)
		log_debug("cgroup: %s", e.msg);
	if (stop_unit(c, &e) < 0)
		log_warn("cleanup after a failed create: %s", e.msg);
	else if (fs_destroy(h, path, true, &e) < 0)
		log_warn("cleanup after a failed create: %s", e.msg);
	reset_failed(c);
}

int cgsd_create(const struct cg_host *h, const char *path,
		const struct oci_resources *res, pid_t pid, struct error *err)
{
	struct sd_conn c;
	struct cgsd_props props = { 0 };
	struct fs_rest rest = { { 0 }, { 0 } };
	int ret = -1;

	if (conn_open(&c, h, path, err) < 0)
		goto out;
	cgsd_scope_props(&c.unit, pid, &c.caps, &props);
	if (build_split(h, path, &c.caps, res, false, &props, &rest, err) < 0)
		goto out;
	/* A failed scope of a former container of that name is in the way. */
	reset_failed(&c);
	if (start_scope(&c, &props, err) < 0)
		goto out;
	if (check_cgroup(&c, err) < 0 ||
	    (!c.caps.unified && join_v1(h, path, pid, err) < 0) ||
	    apply_rest(h, path, &rest, res, err) < 0) {
		undo_scope(&c, h, path);
		goto out;
	}
	ret = 0;
out:
	cgsd_props_free(&props);
	fs_rest_free(&rest);
	conn_close(&c);
	return ret;
}

int cgsd_update(const struct cg_host *h, const char *path,
		const struct oci_resources *res, struct error *err)
{
	struct sd_conn c;
	struct cgsd_props props = { 0 };
	struct fs_rest rest = { { 0 }, { 0 } };
	int ret = -1;

	if (conn_open(&c, h, path, err) < 0 ||
	    build_split(h, path, &c.caps, res, true, &props, &rest, err) < 0)
		goto out;
	/* systemd does not report a value the kernel refuses (it logs it):
	 * on v1, where the memory limit is written here too (memsw order),
	 * the files go first so that such a value is not recorded. */
	if (!c.caps.unified && apply_rest(h, path, &rest, res, err) < 0)
		goto out;
	if (props.n > 0 && set_properties(&c, &props, err) < 0)
		goto out;
	ret = c.caps.unified ? apply_rest(h, path, &rest, res, err) : 0;
out:
	cgsd_props_free(&props);
	fs_rest_free(&rest);
	conn_close(&c);
	return ret;
}

int cgsd_destroy(const struct cg_host *h, const char *path, bool force,
		 struct error *err)
{
	struct sd_conn c;
	struct error e;
	int ret = -1;

	if (check_running(&e) < 0) {
		log_warn("%s: removing %s as cgroupfs would", e.msg, path);
		return fs_destroy(h, path, force, err);
	}
	if (!force && fs_busy(h, path, err) < 0)
		return -1;
	if (conn_open(&c, h, path, err) < 0)
		goto out;
	if (force && fs_kill(h, path, SIGKILL, err) < 0 && err->code != ENOENT)
		goto out;
	if (stop_unit(&c, err) < 0)
		goto out;
	reset_failed(&c);
	/* What systemd leaves: v1 hierarchies of ours, a stray child. */
	ret = fs_destroy(h, path, true, err);
out:
	conn_close(&c);
	return ret;
}
