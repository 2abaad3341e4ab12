/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_AUDIT_LOG_H
#define AGENTSBX_AUDIT_LOG_H

/*
 * The policy's audit log: every decision the policy makes on a
 * container -- each change to its spec, each request it refused or clamped
 * -- appended as one JSON line to a file that outlives the container
 * (policy field auditLog, default /var/log/agentsbx/policy.log).  Each line
 * is one write() on an O_APPEND fd opened anew for every batch, so that
 * logrotate's rename-and-create needs no signal; the fd is O_NONBLOCK and a
 * failed or short write is a warning in the runtime's log, never a failed
 * create.
 */

#include <stdbool.h>

#include "../../spec/policy/policy.h"

#define AUDIT_LOG_ENV "AGENTSBX_POLICY_LOG"

/* The file in force: $AGENTSBX_POLICY_LOG when set to an absolute path
 * (the test suites point it at a temp file: no test writes /var/log, even
 * with a policy file that names it, as policy.json.example does), else
 * auditLog of the policy, else the default: /var/log/agentsbx/policy.log
 * for root, $XDG_STATE_HOME/agentsbx/policy.log (~/.local/state/...) for a
 * plain user.  NULL: auditLog is "" (none), or a user without HOME. */
const char *audit_log_path(const struct policy *p);

/* The log in force, opened for appending (made with its directories when
 * missing): for a process that writes it for long (the egress proxy); -1
 * when there is none or it cannot be opened (said in the runtime's log). */
int audit_log_open(const struct policy *p);

/* What the decisions are about. */
struct audit_subject {
	const char *id;		     /* the container */
	const char *op;		     /* "create", "exec", "update" */
	const struct oci_spec *spec; /* its annotations and engine; may be NULL */
};

/* applied: false in audit mode (the line says so). action: "applied",
 * "refused", "clamped". */
void audit_log_changes(const struct policy *p, const struct audit_subject *s,
		       const struct policy_changes *ch, const char *action, bool applied);
void audit_log_requests(const struct policy *p, const struct audit_subject *s,
			const struct policy_requests *r, const char *action, bool applied);

/* limit_report.c.  At create: keep the audit log's path in the state
 * directory (nothing when the policy keeps none).  At release, before the
 * cgroup goes: a line for each limit that acted (OOM kills, refused forks). */
int audit_log_note(int state_dir_fd, const struct policy *p, const char *id, struct error *err);
void audit_log_limit_hits(int state_dir_fd, const char *id, const char *cgroup_path);

#endif
