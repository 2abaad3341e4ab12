/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The egress proxy's life (runtime/egress/ serves; this starts and stops
 * it): one process per container, forked by create once the init has
 * handed over the sockets it made in the container's namespace
 * (runtime/init/egress_net.c).  It runs on the host's side of the network,
 * as the container's own uid (identities; else nobody), no_new_privs, not
 * dumpable, in a session of its own, with nothing but its sockets and the
 * audit log open.
 *
 * Recorded before it does anything: the child waits on a pipe until its
 * pid and start time are in the state directory (STATE_EGRESS_FILE); a
 * create killed before that closes the pipe and the child exits.  So a
 * proxy alive is always one `delete` (or `delete --force` after a SIGKILL)
 * finds and stops.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/fds.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../egress/egress.h"
#include "../internal.h"
#include "audit_log.h"

#define STATE_EGRESS_FILE "egress-proxy"

void egress_fds_init(struct egress_fds *e)
{
	memset(e, 0, sizeof(*e));
	e->l.dns = e->l.proxy = -1;
}

void egress_fds_close(struct egress_fds *e)
{
	if (e->l.dns >= 0)
		close(e->l.dns);
	if (e->l.proxy >= 0)
		close(e->l.proxy);
	for (size_t i = 0; i < e->l.n; i++)
		close(e->l.port_fd[i]);
	egress_fds_init(e);
}

int egress_fds_take(struct egress_fds *e, const struct policy *p, int fd, long long port,
		    bool *complete, struct error *err)
{
	if (fd < 0)
		return error_set(err, "egress: a socket message without its socket");
	if (port == 0 && e->l.dns < 0)
		e->l.dns = fd;
	else if (port == POLICY_EGRESS_PROXY_PORT && e->l.proxy < 0)
		e->l.proxy = fd;
	else if (port > 0 && port < 65536 && e->l.n < p->n_egress_ports) {
		e->l.port_fd[e->l.n] = fd;
		e->l.port[e->l.n++] = (unsigned)port;
	} else {
		close(fd);
		return error_set(err, "egress: an unexpected socket (port %lld) from the init", port);
	}
	*complete = e->l.dns >= 0 && e->l.proxy >= 0 && e->l.n == p->n_egress_ports;
	return 0;
}

/* The child: wait to be recorded, shed what it does not need, serve. */
__attribute__((noreturn)) static void proxy_main(const struct egress_config *cfg,
						 const struct egress_listeners *l, int go,
						 uid_t uid)
{
	int keep[EGRESS_PORTS_MAX + 6], n = 0;
	struct error err;
	sigset_t none;
	char b;

	if (read(go, &b, 1) != 1)
		_exit(0); /* create died before recording us */
	close(go);
	keep[n++] = l->dns;
	keep[n++] = l->proxy;
	for (size_t i = 0; i < l->n; i++)
		keep[n++] = l->port_fd[i];
	if (cfg->audit_fd >= 0)
		keep[n++] = cfg->audit_fd;
	if (log_get_fd() > 2)
		keep[n++] = log_get_fd(); /* the runtime's --log */
	fds_close_all_but_list(keep, (size_t)n);
	/* not the caller's pipes: an engine waits for their end */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int i = 0; i < 3 && null >= 0; i++)
		dup2(null, i);
	if (null > 2)
		close(null);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (setsid() < 0 || chdir("/") < 0 || prctl(PR_SET_PDEATHSIG, 0) < 0 ||
	    (geteuid() == 0 &&
	     (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0) < 0) {
		log_error("egress proxy of %s: drop privileges: %s", cfg->id, strerror(errno));
		_exit(1);
	}
	if (egress_serve(cfg, l, &err) < 0) {
		log_error("egress proxy of %s: %s", cfg->id, err.msg);
		_exit(1);
	}
	_exit(0);
}

static int record(int state_dir_fd, pid_t pid, struct error *err)
{
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "%d %llu\n", pid, proc_start_time(pid));
	_cleanup_close_ int fd = openat(state_dir_fd, STATE_EGRESS_FILE,
					O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0 || write_all(fd, buf, (size_t)n) < 0)
		return error_sys(err, "egress: record the proxy in the state directory");
	return 0;
}

int egress_proxy_spawn(const struct egress_spawn *s, struct egress_fds *fds, struct error *err)
{
	struct egress_config cfg = {
		.id = s->id,
		.policy_source = s->policy->source,
		.names = { s->decision->egress_allow, s->policy->egress.deny },
		.n_ports = s->policy->n_egress_ports,
		.hosts = s->policy->egress_hosts,
		.allow = s->policy->allow_cidrs,
		.audit_fd = -1,
	};
	int go[2];
	pid_t pid;
	int r;

	memcpy(cfg.ports, s->policy->egress_ports, sizeof(cfg.ports));
	if (policy_egress_deny_list(&s->policy->deny_cidrs, &cfg.deny, err) < 0)
		return -1;
	cfg.audit_fd = audit_log_open(s->policy);
	if (pipe2(go, O_CLOEXEC) < 0) {
		r = error_sys(err, "egress: pipe");
		goto out;
	}
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		proxy_main(&cfg, &fds->l, go[0], s->uid);
	}
	close(go[0]);
	if (pid < 0) {
		r = error_sys(err, "egress: fork the proxy");
	} else if ((r = record(s->state_dir_fd, pid, err)) < 0) {
		kill(pid, SIGKILL);
	} else if (write(go[1], "g", 1) != 1) {
		r = error_sys(err, "egress: start the proxy");
		kill(pid, SIGKILL);
	} else {
		log_debug("egress: proxy %d serves container %s", pid, s->id);
	}
	close(go[1]);
out:
	if (cfg.audit_fd >= 0)
		close(cfg.audit_fd);
	for (size_t i = 0; i < cfg.deny.len; i++)
		free(cfg.deny.items[i]);
	free(cfg.deny.items);
	egress_fds_close(fds); /* the proxy has its copies */
	return r;
}

void egress_proxy_stop(int state_dir_fd, const char *id)
{
	_cleanup_free_ char *buf = NULL;
	struct error err;
	long long pid;
	unsigned long long start;

	if (read_file_at(state_dir_fd, STATE_EGRESS_FILE, 64, &buf, NULL, &err) < 0)
		return; /* none was started */
	if (sscanf(buf, "%lld %llu", &pid, &start) != 2 || pid <= 0)
		return;
	if (proc_is_same((pid_t)pid, start) && kill((pid_t)pid, SIGKILL) < 0 && errno != ESRCH)
		log_warn("delete %s: stop its egress proxy %lld: %s", id, pid, strerror(errno));
}
