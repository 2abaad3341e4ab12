/* SPDX-License-Identifier: Apache-2.0 */
/*
 * When a limit acted on a container ("a CPU-busy service dies,
 * and nothing says why"), its audit log says which: at create the path of
 * the policy's audit log is kept in the state directory; when the container
 * is released (delete, run's own end), the memory cgroup's OOM-kill count
 * and the pids cgroup's refused forks are read before the cgroup goes, and
 * each non-zero one becomes a line.  Nothing is read or written for a
 * container whose policy keeps no log, and a failure here is only a
 * warning: the container is released whatever.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../cgroup/cgroup.h"
#include "audit_log.h"

#define STATE_AUDIT_LOG_FILE "policy-log"

int audit_log_note(int state_dir_fd, const struct policy *p, const char *id, struct error *err)
{
	const char *path = p->mode == POLICY_OFF ? NULL : audit_log_path(p);
	_cleanup_close_ int fd = -1;

	if (!path)
		return 0;
	fd = openat(state_dir_fd, STATE_AUDIT_LOG_FILE,
		    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || write_all(fd, path, strlen(path)) < 0)
		return error_sys(err, "save the audit log path for %s", id);
	return 0;
}

/* "key N" in a cgroup file; 0 if it is not there. */
static unsigned long long keyed(const char *path, const char *key)
{
	_cleanup_free_ char *buf = NULL;
	struct error err;

	if (read_file_at(AT_FDCWD, path, 1 << 16, &buf, NULL, &err) < 0)
		return 0;
	return keyed_value(buf, key);
}

static void add_hit(struct policy_changes *ch, const char *field, const char *counter,
		    unsigned long long n, const char *what)
{
	char from[96], to[160];

	if (!n)
		return;
	snprintf(from, sizeof(from), "%s %llu", counter, n);
	snprintf(to, sizeof(to), "%llu %s", n, what);
	policy_change_add(ch, "limits", field, from, to);
}

void audit_log_limit_hits(int state_dir_fd, const char *id, const char *cgroup_path)
{
	_cleanup_free_ char *log = NULL, *mem = NULL, *pids = NULL;
	struct policy_changes ch = { 0 };
	enum cgroup_mode mode;
	struct error err;
	size_t len;

	if (!cgroup_path || cgroup_path[0] != '/' ||
	    read_file_at(state_dir_fd, STATE_AUDIT_LOG_FILE, 4096, &log, &len, &err) < 0 ||
	    cgroup_detect_mode(&mode, &err) < 0)
		return;
	if (mode == CGROUP_MODE_V2) {
		mem = xasprintf("/sys/fs/cgroup%s/memory.events", cgroup_path);
		pids = xasprintf("/sys/fs/cgroup%s/pids.events", cgroup_path);
	} else {
		mem = xasprintf("/sys/fs/cgroup/memory%s/memory.oom_control", cgroup_path);
		pids = xasprintf("/sys/fs/cgroup/pids%s/pids.events", cgroup_path);
	}
	add_hit(&ch, "linux.resources.memory.limit", "oom_kill", keyed(mem, "oom_kill"),
		"process(es) of the container killed by its memory limit (the OOM killer)");
	add_hit(&ch, "linux.resources.pids.limit", "pids.events max", keyed(pids, "max"),
		"fork/clone call(s) refused by its pids limit (EAGAIN)");
	if (ch.len) {
		struct policy p = { .mode = POLICY_ENFORCE, .source = (char *)"(as at create)", .audit_log = log };
		struct audit_subject subj = { id, "delete", NULL };
		audit_log_changes(&p, &subj, &ch, "applied", true);
	}
	policy_changes_free(&ch);
}
