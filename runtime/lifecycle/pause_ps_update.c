/* SPDX-License-Identifier: Apache-2.0 */
/* pause, resume and ps: commands that act on the container's cgroup. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../../spec/policy/policy.h"
#include "../policy/audit_log.h"
#include "lifecycle.h"

/* A rootless container whose cgroups were not delegated has none. */
static void no_cgroup(const char *id, const char *what, struct error *err)
{
	error_set(err, "%s: container %s has no cgroup (created rootless, with no cgroup delegated to its user)",
		  what, id);
}

int container_pause(const struct global_opts *g, const char *id, bool freeze,
		    struct error *err)
{
	struct container_handle h;
	int r = -1;

	if (handle_open(g, id, true, &h, err) < 0)
		return -1;
	if (freeze && h.st.status != STATUS_RUNNING)
		error_set(err, "container %s is not running: %s", id, status_name(h.st.status));
	else if (!freeze && h.st.status != STATUS_PAUSED)
		error_set(err, "container %s is not paused: %s", id, status_name(h.st.status));
	else if (!h.st.cgroup_path)
		no_cgroup(id, freeze ? "pause" : "resume", err);
	else
		r = cgroup_freeze(h.st.cgroup_path, h.st.cgroup_manager, freeze, err);
	handle_close(&h);
	return r;
}

/* The policy in force judges an update as it judged the create: a new
 * limit no looser than the floor (policy_cap_update). */
static int policy_cap(const struct global_opts *g, const char *id, struct oci_resources *res,
		      struct error *err)
{
	struct policy p;
	struct policy_changes ch = { 0 };
	struct audit_subject subj = { id, "update", NULL };
	int r;

	if (policy_load(g->policy_path, &p, err) < 0)
		return -1;
	r = policy_cap_update(&p, res, &ch, err);
	if (r < 0)
		policy_change_add(&ch, "refusal", "update", err->msg, "(refused: nothing changed)");
	audit_log_changes(&p, &subj, &ch, r < 0 ? "refused" : "applied", true);
	for (size_t i = 0; i < ch.len; i++)
		log_info("policy: %s: %s: %s -> %s", ch.items[i].rule, ch.items[i].field,
			 ch.items[i].from, ch.items[i].to);
	policy_changes_free(&ch);
	policy_free(&p);
	return r;
}

int container_update(const struct global_opts *g, const char *id,
		     struct oci_resources *res, struct error *err)
{
	struct container_handle h;
	int r = -1;

	if (policy_cap(g, id, res, err) < 0)
		return -1;
	if (handle_open(g, id, true, &h, err) < 0)
		return -1;
	if (h.st.status == STATUS_STOPPED)
		error_set(err, "container %s is stopped", id);
	else if (!h.st.cgroup_path)
		no_cgroup(id, "update", err);
	else
		r = cgroup_update(h.st.cgroup_path, h.st.cgroup_manager, res, err);
	handle_close(&h);
	return r;
}

static bool pid_in(pid_t pid, const pid_t *pids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

/* Run ps(1) and keep the header and the lines of our pids. */
static int ps_table(const pid_t *pids, size_t n, char **ps_args, struct error *err)
{
	char *argv[64] = { "ps" };
	size_t argc = 1;
	int pipefd[2], status;
	_cleanup_fclose_ FILE *f = NULL;
	char *line = NULL;
	size_t cap = 0;
	int pid_col = -1;
	pid_t child;

	if (!ps_args || !*ps_args)
		argv[argc++] = "-ef";
	for (; ps_args && *ps_args && argc < 63; ps_args++)
		argv[argc++] = *ps_args;
	argv[argc] = NULL;
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return error_sys(err, "pipe for ps");
	child = fork();
	if (child < 0) {
		error_sys(err, "fork ps");
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (child == 0) {
		dup2(pipefd[1], STDOUT_FILENO);
		execvp("ps", argv);
		_exit(127);
	}
	close(pipefd[1]);
	f = fdopen(pipefd[0], "r");
	if (!f) {
		error_sys(err, "read the output of ps");
		close(pipefd[0]);
		while (waitpid(child, &status, 0) < 0 && errno == EINTR)
			;
		return -1;
	}
	for (bool header = true; getline(&line, &cap, f) > 0; header = false) {
		char *save = NULL, *copy = xstrdup(line), *tok;
		int col = 0;
		bool keep = header;

		for (tok = strtok_r(copy, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save), col++) {
			if (header && !strcmp(tok, "PID"))
				pid_col = col;
			else if (!header && col == pid_col)
				keep = pid_in((pid_t)atoi(tok), pids, n);
		}
		free(copy);
		if (keep)
			fputs(line, stdout);
	}
	free(line);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (pid_col < 0)
		return error_set(err, "ps: no PID column in the output of ps");
	return 0;
}

int container_ps(const struct global_opts *g, const char *id, bool json,
		 char **ps_args, struct error *err)
{
	struct container_handle h;
	_cleanup_free_ pid_t *pids = NULL;
	size_t n = 0;
	int r = -1;

	if (handle_open(g, id, false, &h, err) < 0)
		return -1;
	if (h.st.status == STATUS_STOPPED) {
		error_set(err, "container not running");
		goto out;
	}
	if (!h.st.cgroup_path) {
		no_cgroup(id, "ps", err);
		goto out;
	}
	if (cgroup_pids(h.st.cgroup_path, h.st.cgroup_manager, &pids, &n, err) < 0)
		goto out;
	if (json) {
		printf("[");
		for (size_t i = 0; i < n; i++)
			printf("%s%d", i ? "," : "", pids[i]);
		printf("]\n");
		r = 0;
	} else {
		r = ps_table(pids, n, ps_args, err);
	}
out:
	handle_close(&h);
	return r;
}
