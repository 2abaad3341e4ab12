/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The container process: rlimits, oom score, personality, io priority,
 * scheduler, the user and its groups, capabilities, no_new_privs, cwd, the
 * executable found in the container's PATH, and finally execve.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <grp.h>
#include <linux/close_range.h>
#include <linux/ioprio.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/fds.h"
#include "../../lib/log.h"
#include "../../lib/signals.h"
#include "../../lib/util.h"
#include "weak.h"
#include "pathres.h"
#include "trampoline.h"
#include "../internal.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

int process_set_rlimits(const struct oci_process *p, struct error *err)
{
	for (size_t i = 0; i < p->n_rlimits; i++) {
		const struct oci_rlimit *r = &p->rlimits[i];
		struct rlimit rl = { .rlim_cur = r->soft, .rlim_max = r->hard };

		if (setrlimit(r->resource, &rl) < 0)
			return error_sys(err, "set %s to %llu/%llu", r->type,
					 (unsigned long long)r->soft,
					 (unsigned long long)r->hard);
	}
	return 0;
}

static int set_oom_score_adj(const struct oci_process *p, int procfd,
			     struct error *err)
{
	char buf[32];

	if (!p->oom_score_adj.set)
		return 0;
	snprintf(buf, sizeof(buf), "%lld", (long long)p->oom_score_adj.v);
	return write_file_at(procfd, "self/oom_score_adj", buf, err);
}

static int set_personality(const struct oci_personality *pers, struct error *err)
{
	unsigned long persona;

	if (!pers->set)
		return 0;
	persona = pers->domain && !strcmp(pers->domain, "LINUX32") ? PER_LINUX32 : PER_LINUX;
	if (personality(persona) < 0)
		return error_sys(err, "set personality %s", pers->domain);
	return 0;
}

static int set_io_priority(const struct oci_io_priority *io, struct error *err)
{
	if (!io->set)
		return 0;
	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
		    IOPRIO_PRIO_VALUE(io->class, io->priority)) < 0)
		return error_sys(err, "set io priority %s %lld", io->class_name,
				 (long long)io->priority);
	return 0;
}

static const struct {
	const char *name;
	int policy;
} sched_policies[] = {
	{ "SCHED_OTHER", SCHED_OTHER },
	{ "SCHED_FIFO", SCHED_FIFO },
	{ "SCHED_RR", SCHED_RR },
	{ "SCHED_BATCH", SCHED_BATCH },
	{ "SCHED_ISO", 4 },
	{ "SCHED_IDLE", SCHED_IDLE },
	{ "SCHED_DEADLINE", SCHED_DEADLINE },
};

static const struct {
	const char *name;
	uint64_t flag;
} sched_flags[] = {
	{ "SCHED_FLAG_RESET_ON_FORK", 0x01 },
	{ "SCHED_FLAG_RECLAIM", 0x02 },
	{ "SCHED_FLAG_DL_OVERRUN", 0x04 },
	{ "SCHED_FLAG_KEEP_POLICY", 0x08 },
	{ "SCHED_FLAG_KEEP_PARAMS", 0x10 },
	{ "SCHED_FLAG_UTIL_CLAMP_MIN", 0x20 },
	{ "SCHED_FLAG_UTIL_CLAMP_MAX", 0x40 },
};

/* sched_setattr(2)'s argument; glibc 2.36 has no declaration of it and
 * <linux/sched/types.h> clashes with <sched.h>. */
struct sched_attr_v1 {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
};

static int set_scheduler(const struct oci_scheduler *s, struct error *err)
{
	struct sched_attr_v1 attr = { .size = sizeof(attr) };
	bool found = false;

	if (!s->set)
		return 0;
	for (size_t i = 0; i < sizeof(sched_policies) / sizeof(sched_policies[0]); i++)
		if (!strcmp(sched_policies[i].name, s->policy)) {
			attr.sched_policy = (uint32_t)sched_policies[i].policy;
			found = true;
		}
	if (!found)
		return error_set(err, "process.scheduler.policy: unknown policy \"%s\"",
				 s->policy);
	for (size_t i = 0; i < s->flags.len; i++)
		for (size_t j = 0; j < sizeof(sched_flags) / sizeof(sched_flags[0]); j++)
			if (!strcmp(sched_flags[j].name, s->flags.items[i]))
				attr.sched_flags |= sched_flags[j].flag;
	attr.sched_nice = s->nice.set ? (int32_t)s->nice.v : 0;
	attr.sched_priority = s->priority.set ? (uint32_t)s->priority.v : 0;
	attr.sched_runtime = s->runtime.set ? s->runtime.v : 0;
	attr.sched_deadline = s->deadline.set ? s->deadline.v : 0;
	attr.sched_period = s->period.set ? s->period.v : 0;
	if (syscall(SYS_sched_setattr, 0, &attr, 0) < 0) {
		/* With RT group scheduling (cgroup v1) a realtime task needs a
		 * budget in its cgroup, which starts with none. */
		if (errno == EPERM && (attr.sched_policy == SCHED_FIFO ||
				       attr.sched_policy == SCHED_RR))
			return error_sys(err, "set scheduler %s (with RT group scheduling, a cgroup v1 host also needs linux.resources.cpu.realtimeRuntime)",
					 s->policy);
		return error_sys(err, "set scheduler %s", s->policy);
	}
	return 0;
}

/* process.execCPUAffinity (exec only; the validator checked the list's
 * form): "0-3,7" as the calling thread's affinity. */
#define AFFINITY_CPUS 8192

int process_cpu_affinity(const char *list, const char *field, struct error *err)
{
	cpu_set_t *set;
	size_t size = CPU_ALLOC_SIZE(AFFINITY_CPUS);
	const char *p = list;
	int r;

	if (!list || !*list)
		return 0;
	set = CPU_ALLOC(AFFINITY_CPUS);
	if (!set)
		return error_set(err, "out of memory");
	CPU_ZERO_S(size, set);
	while (*p) {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b = a;

		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		for (unsigned long n = a; n <= b && n < AFFINITY_CPUS; n++)
			CPU_SET_S(n, size, set);
		p = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			break;
	}
	r = sched_setaffinity(0, size, set);
	CPU_FREE(set);
	if (r < 0)
		return error_sys(err, "process.execCPUAffinity.%s %s", field, list);
	return 0;
}

/* Before pivot_root: the runtime's procfs is still reachable and trusted. */
int process_setup_early(const struct ctx_decided *d, const struct ctx_handles *h,
			struct error *err)
{
	const struct oci_process *p = &d->spec.process;

	if (process_set_rlimits(p, err) < 0 || mempolicy_apply(&d->spec, err) < 0 ||
	    set_oom_score_adj(p, h->host_proc_fd, err) < 0 ||
	    set_personality(&d->spec.linux.personality, err) < 0 ||
	    set_io_priority(&p->io_priority, err) < 0 ||
	    set_scheduler(&p->scheduler, err) < 0)
		return -1;
	return 0;
}

/* An exec'd process: its own scheduler and I/O priority, as runc's setns
 * init sets them (its rlimits: process_set_rlimits). */
int process_setup_exec(const struct ctx_decided *d, struct error *err)
{
	const struct oci_process *p = &d->spec.process;

	if (set_io_priority(&p->io_priority, err) < 0 ||
	    set_scheduler(&p->scheduler, err) < 0)
		return -1;
	return 0;
}

/* ---- the executable ------------------------------------------------------ */

static const char *env_get(const struct str_array *env, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < env->len; i++)
		if (!strncmp(env->items[i], name, n) && env->items[i][n] == '=')
			return env->items[i] + n + 1;
	return NULL;
}

/* 0, or the errno execve would give: ENOENT, EACCES. */
static int check_executable(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return errno;
	if (!S_ISREG(st.st_mode) || !(st.st_mode & 0111))
		return EACCES;
	return 0;
}

/* The wording callers match on: Docker maps "no such file or directory"
 * and "executable file not found" to 127 and "permission denied" to 126,
 * in Go's lower case. */
static const char *exec_errno_text(int e)
{
	switch (e) {
	case ENOENT:
		return "no such file or directory";
	case EACCES:
		return "permission denied";
	case ENOTDIR:
		return "not a directory";
	default:
		return strerror(e);
	}
}

/* After pivot_root: "/" is the container's, so a plain lookup is inside. */
int process_resolve_exec(const struct ctx_decided *d, struct ctx_init *i, struct error *err)
{
	const struct oci_process *p = &d->spec.process;
	const char *arg0 = p->args.items[0];
	const char *path;
	_cleanup_free_ char *copy = NULL;
	char *save = NULL;

	/* Here, before any seccomp filter: whether the trampoline may be
	 * reached through /proc when execveat is refused (trampoline.h). */
	i->proc_fallback_ok = trampoline_proc_fallback_ok();
	if (strchr(arg0, '/')) {
		int e = check_executable(arg0);
		if (e) {
			error_set(err, "exec: \"%s\": stat %s: %s", arg0, arg0, exec_errno_text(e));
			err->code = e;
			return -1;
		}
		i->exec_path = xstrdup(arg0);
		return 0;
	}
	path = env_get(&p->env, "PATH");
	copy = xstrdup(path ? path : DEFAULT_PATH);
	for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		_cleanup_free_ char *cand = xasprintf("%s/%s", *dir ? dir : ".", arg0);
		if (check_executable(cand) == 0) {
			i->exec_path = take_ptr(cand);
			return 0;
		}
	}
	return error_set(err, "exec: \"%s\": executable file not found in $PATH", arg0);
}

/* ---- credentials ---------------------------------------------------------- */

static int set_user(const struct oci_user *u, struct error *err)
{
	gid_t gids[256] = { 0 };
	size_t n = u->n_additional_gids;

	if (n > sizeof(gids) / sizeof(gids[0]))
		return error_set(err, "process.user.additionalGids: more than %zu groups",
				 sizeof(gids) / sizeof(gids[0]));
	for (size_t i = 0; i < n; i++)
		gids[i] = u->additional_gids[i];
	/* setgroups is refused in a user namespace whose setgroups file says
	 * deny; with no groups asked for, that is not an error. */
	if (setgroups(n, gids) < 0 && !(errno == EPERM && n == 0))
		return error_sys(err, "setgroups");
	if (setresgid(u->gid, u->gid, u->gid) < 0)
		return error_sys(err, "setresgid %u", u->gid);
	/* Keep the permitted set across the uid change; caps_apply() then
	 * sets exactly what the spec asks for. */
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return error_sys(err, "prctl(PR_SET_KEEPCAPS)");
	if (setresuid(u->uid, u->uid, u->uid) < 0)
		return error_sys(err, "setresuid %u", u->uid);
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
		return error_sys(err, "prctl(PR_SET_KEEPCAPS)");
	return 0;
}

/*
 * The cwd, resolved in the container's root: a magic link such as
 * /proc/self/fd/N (a leaked host fd, CVE-2024-21626) or a symlink out of the
 * root cannot make it a host directory.  Resolved before the spec's seccomp
 * filter (process_open_cwd: openat2, which a profile written for runc may
 * not list), entered after the user change (fchdir checks search permission
 * on it as the container's user, as runc's chdir after setuid does).
 */
int process_open_cwd(const struct ctx_decided *d, struct ctx_init *i, struct error *err)
{
	_cleanup_close_ int root = -1;
	int fd = -1;

	if (i->cwd_open || WEAK_CWD_IN_ROOT)
		return 0;
	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return error_sys(err, "open /");
	if (path_open_in_root(root, d->spec.process.cwd, O_PATH | O_DIRECTORY,
			      false, &fd, err) < 0) {
		/* A directory on the way only the container's user may
		 * search (runc retries its chdir after setuid too): looked
		 * up again after the user change. */
		if (err->code == EACCES) {
			error_clear(err);
			return 0;
		}
		return error_prefix(err, "process.cwd");
	}
	i->cwd_fd = fd;
	i->cwd_open = true;
	return 0;
}

/* After a filter that refuses openat2 (ENOSYS or EPERM) and only when the
 * runtime's own lookup was refused: chdir, then getcwd must show the
 * directory reachable from the container's root ("(unreachable)" or
 * ENOENT when a magic link led outside it). */
static int chdir_checked(const char *cwd, struct error *err)
{
	char buf[4096];

	if (chdir(cwd) < 0)
		return error_sys(err, "chdir to cwd %s", cwd);
	if (!getcwd(buf, sizeof(buf)) || buf[0] != '/') {
		if (chdir("/") < 0) {
			/* the process exits on the error below anyway */
		}
		return error_set(err, "process.cwd: %s leads outside the container's root", cwd);
	}
	return 0;
}

static int change_cwd(struct ctx_init *i, const char *cwd, struct error *err)
{
	_cleanup_close_ int root = -1, dir = -1;

	if (WEAK_CWD_IN_ROOT) {
		if (chdir(cwd) < 0)
			return error_sys(err, "chdir to cwd %s", cwd);
		return 0;
	}
	if (i->cwd_open) {
		int r = fchdir(i->cwd_fd);
		int e = errno;

		close(i->cwd_fd);
		i->cwd_open = false;
		errno = e;
		if (r < 0)
			return error_sys(err, "chdir to cwd %s", cwd);
		return 0;
	}
	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return error_sys(err, "open /");
	if (path_open_in_root(root, cwd, O_PATH | O_DIRECTORY, false, &dir, err) < 0) {
		if (err->code == ENOSYS || err->code == EPERM) {
			error_clear(err);
			return chdir_checked(cwd, err);
		}
		return error_prefix(err, "process.cwd");
	}
	if (fchdir(dir) < 0)
		return error_sys(err, "chdir to cwd %s", cwd);
	return 0;
}

int process_apply_credentials(const struct ctx_decided *d, struct ctx_init *i,
			      struct error *err)
{
	const struct oci_process *p = &d->spec.process;

	if (caps_drop_bounding(&d->caps, err) < 0 || set_user(&p->user, err) < 0 ||
	    caps_apply(&d->caps, err) < 0)
		return -1;
	umask(p->user.umask.set ? (mode_t)p->user.umask.v : 0022);
	if (change_cwd(i, p->cwd, err) < 0) {
		/* An image's root-only WORKDIR (/root is 0700): say why. */
		if (err->code == EACCES && d->policy_loaded &&
		    d->policy.mode == POLICY_ENFORCE && d->decision.identity) {
			char was[ERROR_MSG_MAX];
			snprintf(was, sizeof(was), "%s", err->msg);
			error_set(err, "%s: the policy runs the process as uid %u, the container's own, not host root (policy field \"identities\"; null, with \"uid\": null, keeps root)",
				  was, p->user.uid);
			err->code = EACCES;
		} else if (err->code == EACCES && d->policy_loaded &&
			   d->policy.mode == POLICY_ENFORCE && d->policy.uid.set &&
			   p->user.uid == d->policy.uid.v) {
			char was[ERROR_MSG_MAX];
			snprintf(was, sizeof(was), "%s", err->msg);
			error_set(err, "%s: the policy runs the process as uid %u, not host root (policy field \"uid\"; null keeps root)",
				  was, p->user.uid);
			err->code = EACCES;
		}
		return -1;
	}
	if (p->no_new_privileges && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return error_sys(err, "prctl(PR_SET_NO_NEW_PRIVS)");
	return 0;
}

/* ---- seccomp ---------------------------------------------------------------- */

/* The spec's filter, then the policy's agent profile on top of it: the
 * kernel runs both and the stricter answer wins.  Each is loaded once
 * (i->seccomp_loaded, i->agent_seccomp_loaded). */
int process_load_seccomp(const struct ctx_decided *d, struct ctx_init *i, int *listener,
			 struct error *err)
{
	int fd = -1, none = -1;

	if (d->seccomp.len && !i->seccomp_loaded) {
		if (seccomp_prog_load(&d->seccomp, &fd, err) < 0)
			return -1;
		i->seccomp_loaded = true;
	}
	if (!i->agent_seccomp_loaded)
		for (unsigned k = 0; k < POLICY_AGENT_FILTERS; k++)
			if (d->agent_seccomp[k].len &&
			    seccomp_prog_load(&d->agent_seccomp[k], &none, err) < 0)
				return error_prefix(err, "policy: the agent seccomp profile");
	i->agent_seccomp_loaded = true;
	if (listener)
		*listener = fd;
	else if (fd >= 0)
		close(fd);
	return 0;
}

/* ---- exec ------------------------------------------------------------------ */

/* The largest /etc/passwd read for HOME: a real one is a few KiB. */
#define PASSWD_MAX (4u << 20)

/* The home directory of uid in passwd text ("/" if it has none). */
static char *home_in_passwd(char *text, uid_t uid)
{
	char *home = NULL, *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line && !home;
	     line = strtok_r(NULL, "\n", &save)) {
		char *fields[7], *cursor = line, *tok;
		int n = 0;

		/* strsep keeps empty fields, unlike strtok. */
		while (n < 7 && (tok = strsep(&cursor, ":")))
			fields[n++] = tok;
		if (n == 7 && (uid_t)strtoul(fields[2], NULL, 10) == uid && *fields[5])
			home = xstrdup(fields[5]);
	}
	return home ? home : xstrdup("/");
}

/*
 * HOME, when the spec sets none, from the container's /etc/passwd: read
 * before READY (never after the start byte, where a hang would hold up
 * `start`), resolved inside the root, and only from a regular file of a
 * sane size: the image is hostile, and a FIFO, a device or a huge file
 * there is a clear error, not a hang.
 */
int process_resolve_home(const struct ctx_decided *d, struct ctx_init *i, struct error *err)
{
	_cleanup_close_ int root = -1, fd = -1;
	_cleanup_free_ char *text = NULL;
	struct stat st;

	if (env_get(&d->spec.process.env, "HOME"))
		return 0;
	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return error_sys(err, "HOME: open the container's /");
	if (path_open_in_root(root, "/etc/passwd", O_RDONLY | O_NONBLOCK | O_NOCTTY,
			      false, &fd, err) < 0) {
		if (err->code != ENOENT)
			return error_prefix(err, "HOME: the container's /etc/passwd");
		error_clear(err);
		i->home = xstrdup("/");
		return 0;
	}
	if (fstat(fd, &st) < 0)
		return error_sys(err, "HOME: stat the container's /etc/passwd");
	if (!S_ISREG(st.st_mode))
		return error_set(err, "HOME: the container's /etc/passwd is not a regular file");
	if ((uint64_t)st.st_size > PASSWD_MAX)
		return error_set(err, "HOME: the container's /etc/passwd is too large: %lld bytes (at most %u)",
				 (long long)st.st_size, PASSWD_MAX);
	if (read_all_fd(fd, PASSWD_MAX, &text, NULL, err) < 0)
		return error_prefix(err, "HOME: read the container's /etc/passwd");
	i->home = home_in_passwd(text, d->spec.process.user.uid);
	return 0;
}

/* The environment: the spec's, plus HOME when the spec has none, plus
 * LISTEN_FDS/LISTEN_PID for socket activation passed through. */
static char **build_env(const struct ctx_decided *d, const struct ctx_init *i)
{
	const struct oci_process *p = &d->spec.process;
	char **env = xcalloc(p->env.len + 4, sizeof(char *));
	size_t n = 0;

	for (size_t k = 0; k < p->env.len; k++)
		env[n++] = p->env.items[k];
	if (!env_get(&p->env, "HOME"))
		env[n++] = xasprintf("HOME=%s", i->home ? i->home : "/");
	if (d->listen_fds > 0) {
		env[n++] = xasprintf("LISTEN_FDS=%d", d->listen_fds);
		env[n++] = "LISTEN_PID=1";
	}
	env[n] = NULL;
	return env;
}

/* fds 3..first-1 go to the process if the caller passed them; any of ours
 * that took a free number there is closed. */
static int pass_fds(unsigned int first, struct error *err)
{
	for (unsigned int fd = 3; fd < first; fd++) {
		if (!fds_was_open((int)fd)) {
			close((int)fd);
			continue;
		}
		int flags = fcntl((int)fd, F_GETFD);
		if (flags >= 0 && fcntl((int)fd, F_SETFD, flags & ~FD_CLOEXEC) < 0)
			return error_sys(err, "pass fd %u to the container", fd);
	}
	return 0;
}

/* `start` waits on exec.done: tell it why the process will not run. */
void process_report_start_failure(const struct ctx_handles *h, const struct error *err)
{
	if (h->done_fd >= 0 && write_all(h->done_fd, err->msg, strlen(err->msg)) < 0) {
		/* start then sees the init exit without a reason */
	}
}

__attribute__((noreturn)) static void exec_fail(const struct ctx_handles *h, struct error *err)
{
	process_report_start_failure(h, err);
	dprintf(STDERR_FILENO, "agentsbx: %s\n", err->msg);
	_exit(127);
}

/* Move *fd to the lowest free number >= first (close-on-exec), if below. */
static int move_above(int *fd, unsigned int first, const char *what, struct error *err)
{
	int moved;

	if (*fd < 0 || *fd >= (int)first)
		return 0;
	moved = fcntl(*fd, F_DUPFD_CLOEXEC, (int)first);
	if (moved < 0)
		return error_sys(err, "move the %s fd", what);
	/* the old number is below first: pass_fds() closes it */
	*fd = moved;
	return 0;
}

/* close_range(from, to) for a kernel without it (before 5.9) or a filter
 * that refuses it: the fds listed in /proc/self/fd (the list read first,
 * then closed), else every number up to the fd limit. */
static int close_fds(unsigned int from, unsigned int to)
{
	DIR *d;
	struct dirent *e;
	int open_fds[1024];
	size_t n = 0;
	long max;

	if (syscall(SYS_close_range, from, to, 0) == 0)
		return 0;
	if (errno != ENOSYS && errno != EPERM)
		return -1;
	d = opendir("/proc/self/fd");
	if (d) {
		bool full = false;

		while ((e = readdir(d))) {
			long fd = strtol(e->d_name, NULL, 10);

			if (e->d_name[0] == '.' || fd == dirfd(d) ||
			    fd < (long)from || (unsigned long)fd > to)
				continue;
			if (n == sizeof(open_fds) / sizeof(open_fds[0])) {
				full = true;
				break;
			}
			open_fds[n++] = (int)fd;
		}
		closedir(d);
		if (!full) {
			for (size_t i = 0; i < n; i++)
				close(open_fds[i]);
			return 0;
		}
	}
	max = sysconf(_SC_OPEN_MAX);
	for (long fd = from; fd < max && (unsigned long)fd <= to; fd++)
		close((int)fd);
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/*
 * The fds the process gets: 0-2, the caller's 3..first-1 (--preserve-fds,
 * LISTEN_FDS), nothing else of the runtime's (CVE-2024-21626): every fd past
 * them is closed, not only marked, but the few this process still needs
 * until its execve (all close-on-exec): the trampoline, exec.done, the cwd
 * not yet entered, the sync socket (exec), the log.  Done before the spec's
 * seccomp filter when that comes first (close_range may not be in it).
 */
int process_prepare_fds(const struct ctx_decided *d, struct ctx_handles *h,
			struct ctx_init *i, struct error *err)
{
	unsigned int first = 3 + (unsigned int)d->opts->preserve_fds +
			     (unsigned int)d->listen_fds;
	int log_fd = log_get_fd(), keep[5];
	size_t n = 0;
	unsigned int from = first;

	if (i->fds_ready)
		return 0;
	if (log_fd == STDERR_FILENO || !(fcntl(log_fd, F_GETFD) & FD_CLOEXEC))
		log_fd = -1;
	if (move_above(&h->trampoline_fd, first, "exec trampoline", err) < 0 ||
	    move_above(&h->done_fd, first, "exec.done", err) < 0 ||
	    move_above(&h->sync_child, first, "sync socket", err) < 0 ||
	    (i->cwd_open && move_above(&i->cwd_fd, first, "cwd", err) < 0) ||
	    move_above(&log_fd, first, "log", err) < 0)
		return -1;
	if (log_fd >= 0 && log_fd != log_get_fd())
		log_redirect(log_fd);
	if (pass_fds(first, err) < 0)
		return -1;
	keep[n++] = h->trampoline_fd;
	if (h->done_fd >= 0)
		keep[n++] = h->done_fd;
	if (h->sync_child >= 0)
		keep[n++] = h->sync_child;
	if (i->cwd_open)
		keep[n++] = i->cwd_fd;
	if (log_fd >= 0)
		keep[n++] = log_fd;
	qsort(keep, n, sizeof(keep[0]), cmp_int);
	for (size_t k = 0; k <= n; k++) {
		unsigned int to = k < n ? (unsigned int)keep[k] : ~0U;

		if (to > from && close_fds(from, to - 1 + (k == n)) < 0)
			return error_sys(err, "close file descriptors %u-%u", from, to);
		if (k < n)
			from = to + 1;
	}
	i->fds_ready = true;
	return 0;
}

void process_exec(const struct ctx_decided *d, struct ctx_handles *h, struct ctx_init *i)
{
	const struct oci_process *p = &d->spec.process;
	char **argv = xcalloc(p->args.len + 1, sizeof(char *));
	char **envp = build_env(d, i);
	struct error err;

	for (size_t k = 0; k < p->args.len; k++)
		argv[k] = p->args.items[k];
	if (process_prepare_fds(d, h, i, &err) < 0)
		exec_fail(h, &err);
	signals_reset_for_exec();
	if (process_load_seccomp(d, i, NULL, &err) < 0)
		exec_fail(h, &err);
	if (WEAK_DUMPABLE) {
		execve(i->exec_path, argv, envp);
		error_sys(&err, "exec %s", i->exec_path);
		exec_fail(h, &err);
	}
	trampoline_exec(h->trampoline_fd, i->exec_path, argv, envp, i->proc_fallback_ok, &err);
	exec_fail(h, &err);
}
