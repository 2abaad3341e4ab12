/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SCMP_ACT_NOTIFY end to end: a child loads a filter with a listener, sends
 * it with seccomp_send_listener() to an "agent" (this process) listening
 * on a unix socket, -1, and the agent answers the child's notified syscalls.
 * Plus the Container Process State JSON.
 */
#include "test_seccomp_helpers.h"

#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#define NOTIFIED_VALUE 4242

struct agent {
	char *dir;
	char *path;
	int sock; /* listening */
};

static void agent_listen(struct agent *a, const char *subdir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char *dir;

	a->dir = tsc_mkdtemp();
	dir = subdir ? xasprintf("%s/%s", a->dir, subdir) : xstrdup(a->dir);
	if (subdir)
		assert_int_equal(mkdir(dir, 0700), 0);
	a->path = xasprintf("%s/agent.sock", dir);
	a->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(a->sock >= 0);
	/* bind() has the same 108-byte limit: go through the directory */
	{
		int dfd = open(dir, O_PATH | O_DIRECTORY);
		assert_true(dfd >= 0);
		snprintf(sa.sun_path, sizeof(sa.sun_path),
			 "/proc/self/fd/%d/agent.sock", dfd);
		assert_int_equal(bind(a->sock, (struct sockaddr *)&sa,
				      sizeof(sa)), 0);
		close(dfd);
	}
	assert_int_equal(listen(a->sock, 4), 0);
	free(dir);
}

static void agent_close(struct agent *a)
{
	close(a->sock);
	tsc_rm_rf(a->dir);
	free(a->dir);
	free(a->path);
}

/* Accept one connection: the payload (until EOF) and the fd it carried. */
static char *agent_receive(struct agent *a, int *fd)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} ctl;
	char buf[65536];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) - 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = ctl.b,
			      .msg_controllen = sizeof(ctl.b) };
	struct cmsghdr *c;
	int conn = accept4(a->sock, NULL, NULL, SOCK_CLOEXEC);
	ssize_t n, total;

	assert_true(conn >= 0);
	n = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
	assert_true(n > 0);
	c = CMSG_FIRSTHDR(&msg);
	assert_non_null(c);
	assert_int_equal(c->cmsg_type, SCM_RIGHTS);
	assert_int_equal(c->cmsg_len, CMSG_LEN(sizeof(int)));
	memcpy(fd, CMSG_DATA(c), sizeof(int));
	for (total = n; (n = read(conn, buf + total,
				   sizeof(buf) - 1 - (size_t)total)) > 0;)
		total += n;
	assert_int_equal(n, 0); /* closed after one state */
	buf[total] = '\0';
	close(conn);
	return xstrdup(buf);
}

static const char *jstr(yajl_val root, const char *a, const char *b)
{
	const char *path[] = { a, b, NULL };
	yajl_val v = yajl_tree_get(root, path, yajl_t_string);

	return v ? YAJL_GET_STRING(v) : "(absent)";
}

static long long jint(yajl_val root, const char *a, const char *b)
{
	const char *path[] = { a, b, NULL };
	yajl_val v = yajl_tree_get(root, path, yajl_t_number);

	return v && YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : -1;
}

/* The Container Process State as config-linux.md describes it. */
static void check_process_state(const char *json, pid_t pid,
				const char *metadata)
{
	char ebuf[256];
	yajl_val root = yajl_tree_parse(json, ebuf, sizeof(ebuf));
	const char *fds_path[] = { "fds", NULL };
	yajl_val fds;

	assert_non_null(root);
	assert_string_equal(jstr(root, "ociVersion", NULL), OCI_VERSION_MAX);
	fds = yajl_tree_get(root, fds_path, yajl_t_array);
	assert_non_null(fds);
	assert_int_equal(fds->u.array.len, 1);
	assert_string_equal(YAJL_GET_STRING(fds->u.array.values[0]),
			    "seccompFd");
	assert_int_equal(jint(root, "pid", NULL), pid);
	assert_string_equal(jstr(root, "metadata", NULL),
			    metadata ? metadata : "(absent)");
	assert_string_equal(jstr(root, "state", "ociVersion"), OCI_VERSION_MAX);
	assert_string_equal(jstr(root, "state", "id"), "ctr-1");
	assert_string_equal(jstr(root, "state", "status"), "creating");
	assert_int_equal(jint(root, "state", "pid"), pid);
	assert_string_equal(jstr(root, "state", "bundle"), "/bundles/ctr-1");
	{
		const char *ann[] = { "state", "annotations", "k\"q", NULL };
		yajl_val v = yajl_tree_get(root, ann, yajl_t_string);
		assert_non_null(v);
		assert_string_equal(YAJL_GET_STRING(v), "v\n1");
	}
	yajl_tree_free(root);
}

static char *state_for(pid_t pid)
{
	char *keys[] = { "k\"q" }, *values[] = { "v\n1" };
	struct str_map ann = { .keys = keys, .values = values, .len = 1 };
	struct seccomp_state_info st = { .id = "ctr-1", .pid = pid,
					 .bundle = "/bundles/ctr-1",
					 .annotations = &ann };
	struct error err;
	char *json = NULL;

	if (seccomp_state_json(&st, &json, &err) < 0)
		return NULL;
	return json;
}

/* ---- end to end ---------------------------------------------------------- */

static void child_notified(void *arg, int listener)
{
	const struct agent *a = arg;
	struct error err;
	char *state;
	long r;

	TSC_CHECK(listener >= 0);
	TSC_CHECK(fcntl(listener, F_GETFD) & FD_CLOEXEC);
	state = state_for(getpid());
	TSC_CHECK(state != NULL);
	if (seccomp_send_listener(a->path, -1, "agent-metadata", listener, state,
				  &err) < 0)
		tsc_child_fail(__FILE__, __LINE__, err.msg, -1, err.code);
	free(state);
	close(listener);
	r = syscall(SYS_getppid);
	TSC_CHECK(r == NOTIFIED_VALUE);
	errno = 0;
	r = syscall(SYS_getppid);
	TSC_CHECK(r == -1 && errno == EOPNOTSUPP);
	TSC_EXPECT_OK(syscall(SYS_getpid)); /* not notified */
}

static void answer(int fd, pid_t pid, long long val, int error)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;

	memset(&req, 0, sizeof(req)); /* the kernel wants it zeroed */
	assert_int_equal(ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req), 0);
	assert_int_equal(req.data.nr, SYS_getppid);
	assert_int_equal(req.pid, pid);
	memset(&resp, 0, sizeof(resp));
	resp.id = req.id;
	resp.val = val;
	resp.error = error;
	assert_int_equal(ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp), 0);
}

static void roundtrip(const char *json, const char *subdir,
		      unsigned int want_flags)
{
	struct seccomp_prog prog;
	struct tsc_child child;
	struct tsc_result r;
	struct agent a;
	char *payload;
	int fd = -1;

	tsc_prepare(json, NULL, &prog);
	assert_true(prog.needs_listener);
	assert_int_equal(prog.flags, want_flags);
	agent_listen(&a, subdir);
	tsc_spawn(&prog, child_notified, &a, &child);
	payload = agent_receive(&a, &fd);
	check_process_state(payload, child.pid, "agent-metadata");
	answer(fd, child.pid, NOTIFIED_VALUE, 0);
	answer(fd, child.pid, -1, -EOPNOTSUPP);
	tsc_wait(&child, &r);
	tsc_assert_exited_ok(&r);
	close(fd);
	free(payload);
	agent_close(&a);
	seccomp_prog_free(&prog);
}

static void test_notify_roundtrip(void **state)
{
	roundtrip("{\"defaultAction\": \"SCMP_ACT_ALLOW\","
		  " \"listenerPath\": \"/unused\", \"syscalls\": ["
		  " {\"names\": [\"getppid\"], \"action\": \"SCMP_ACT_NOTIFY\"}]}",
		  NULL, SECCOMP_FILTER_FLAG_NEW_LISTENER);
}

/* TSYNC with a listener needs TSYNC_ESRCH; WAIT_KILLABLE_RECV is kept;
 * a listenerPath longer than sun_path works. */
static void test_notify_flags_long_path(void **state)
{
	char sub[201];

	memset(sub, 'd', sizeof(sub) - 1);
	sub[sizeof(sub) - 1] = '\0';
	roundtrip("{\"defaultAction\": \"SCMP_ACT_ERRNO\","
		  " \"flags\": [\"SECCOMP_FILTER_FLAG_TSYNC\","
		  "  \"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV\"],"
		  " \"syscalls\": ["
		  " {\"names\": [\"getppid\"], \"action\": \"SCMP_ACT_NOTIFY\"},"
		  " {\"names\": [\"getppid\"], \"action\": \"SCMP_ACT_NOTIFY\"},"
		  " {\"names\": [\"read\", \"write\", \"close\", \"exit_group\","
		  "  \"exit\", \"socket\", \"connect\", \"sendmsg\", \"sendto\","
		  "  \"setsockopt\", \"getpid\", \"brk\", \"mmap\", \"munmap\","
		  "  \"mremap\", \"openat\", \"open\", \"fcntl\", \"rt_sigreturn\","
		  "  \"futex\", \"madvise\", \"newfstatat\", \"fstat\", \"sigaltstack\"],"
		  "  \"action\": \"SCMP_ACT_ALLOW\"}]}",
		  sub,
		  SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_TSYNC |
			  SECCOMP_FILTER_FLAG_TSYNC_ESRCH |
			  SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV);
}

/* ---- seccomp_send_listener on its own ------------------------------------ */

static void test_send_any_fd(void **state)
{
	struct agent a;
	struct error err;
	char *st = state_for(777);
	char *payload;
	int pipefd[2], got = -1;
	char c = 0;
	char name[251];

	memset(name, 'x', sizeof(name));
	name[sizeof(name) - 1] = '\0';
	agent_listen(&a, name); /* a 290-byte path */
	assert_true(strlen(a.path) > 108);
	assert_int_equal(pipe(pipefd), 0);
	/* The agent is this process: connect() and a small send complete
	 * into the backlog before accept(). */
	assert_int_equal(seccomp_send_listener(a.path, -1, NULL, pipefd[0], st,
					       &err), 0);
	payload = agent_receive(&a, &got);
	check_process_state(payload, 777, NULL);
	/* the received fd is the pipe's read end */
	assert_int_equal(write(pipefd[1], "!", 1), 1);
	assert_int_equal(read(got, &c, 1), 1);
	assert_int_equal(c, '!');
	close(got);
	close(pipefd[0]);
	close(pipefd[1]);
	free(payload);
	free(st);
	agent_close(&a);
}

static void test_send_errors(void **state)
{
	char *st = state_for(1);
	struct error err;

	assert_int_equal(seccomp_send_listener("/nonexistent/agent.sock", -1, NULL,
					       0, st, &err), -1);
	assert_non_null(strstr(err.msg, "connect to /nonexistent/agent.sock"));
	assert_int_equal(err.code, ENOENT);
	assert_int_equal(seccomp_send_listener("/x", -1, NULL, -1, st, &err), -1);
	assert_int_equal(seccomp_send_listener(NULL, -1, NULL, 0, st, &err), -1);
	assert_int_equal(seccomp_send_listener("/x", -1, NULL, 0, "{", &err), -1);
	assert_non_null(strstr(err.msg, "state JSON"));
	assert_int_equal(seccomp_send_listener("/x", -1, NULL, 0,
					       "{\"id\": \"a\"}", &err), -1);
	assert_non_null(strstr(err.msg, "no valid pid"));
	assert_int_equal(seccomp_send_listener("/x", -1, NULL, 0, "[1]", &err), -1);
	free(st);
}

/* The state object is embedded as given, extra fields included. */
static void test_process_state_embeds(void **state)
{
	struct error err;
	char *out = NULL;

	assert_int_equal(seccomp_process_state_json(
				 "{\"ociVersion\": \"1.2.0\", \"id\": \"x\","
				 " \"status\": \"creating\", \"pid\": 99,"
				 " \"bundle\": \"/b\", \"created\": 1.5e3,"
				 " \"extra\": {\"list\": [true, null, -1]}}",
				 "m", &out, &err),
			 0);
	assert_string_equal(out,
			    "{\"ociVersion\":\"" OCI_VERSION_MAX "\","
			    "\"fds\":[\"seccompFd\"],\"pid\":99,\"metadata\":\"m\","
			    "\"state\":{\"ociVersion\":\"1.2.0\",\"id\":\"x\","
			    "\"status\":\"creating\",\"pid\":99,\"bundle\":\"/b\","
			    "\"created\":1.5e3,\"extra\":{\"list\":[true,null,-1]}}}");
	free(out);
}

static void test_state_json(void **state)
{
	struct seccomp_state_info st = { .oci_version = "1.0.2", .id = "a",
					 .status = "created", .pid = 5,
					 .bundle = "/b" };
	struct error err;
	char *out = NULL;

	assert_int_equal(seccomp_state_json(&st, &out, &err), 0);
	assert_string_equal(out, "{\"ociVersion\":\"1.0.2\",\"id\":\"a\","
				 "\"status\":\"created\",\"pid\":5,"
				 "\"bundle\":\"/b\"}");
	free(out);
	st.bundle = NULL;
	assert_int_equal(seccomp_state_json(&st, &out, &err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notify_roundtrip),
		cmocka_unit_test(test_notify_flags_long_path),
		cmocka_unit_test(test_send_any_fd),
		cmocka_unit_test(test_send_errors),
		cmocka_unit_test(test_process_state_embeds),
		cmocka_unit_test(test_state_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
