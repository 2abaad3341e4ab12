/* SPDX-License-Identifier: Apache-2.0 */
#include "terminal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/forward_signals.h"
#include "../../lib/fdpass.h"
#include "../../lib/util.h"
#include "weak.h"
#include "pathres.h"
#include <sys/mount.h>
#include "../internal.h"

static int send_fd(int sock, int fd, struct error *err)
{
	if (fd_send(sock, "T", 1, fd) < 0)
		return error_sys(err, "send terminal master to console socket");
	return 0;
}

int terminal_recv_master(int sock, int *master, struct error *err)
{
	char data;
	ssize_t n = fd_recv(sock, &data, 1, master);

	if (n < 0)
		return error_sys(err, "receive terminal master");
	if (n == 0 || *master < 0)
		return error_set(err, "receive terminal master: no fd");
	return 0;
}

int terminal_connect_socket(const char *path, int *out, struct error *err)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;

	if (strlen(path) >= sizeof(addr.sun_path))
		return error_set(err, "console socket path too long: %s", path);
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_sys(err, "create console socket");
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return error_sys(err, "connect to console socket %s", path);
	*out = take_fd(fd);
	return 0;
}

/* A regular file of our own at /dev/console: whatever the image had there
 * (a symlink anywhere, a device) is removed first, and the file is created
 * with O_EXCL|O_NOFOLLOW in the container's /dev. */
static int make_console_file(int *out, struct error *err)
{
	_cleanup_close_ int root = -1, dev = -1, fd = -1;

	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return error_sys(err, "open /");
	if (path_mkdir_in_root(root, "/dev", 0755, &dev, err) < 0)
		return error_prefix(err, "create /dev/console");
	if (unlinkat(dev, "console", 0) < 0 && errno != ENOENT)
		return error_sys(err, "remove the image's /dev/console");
	fd = openat(dev, "console", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return error_sys(err, "create /dev/console");
	*out = openat(dev, "console", O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (*out < 0)
		return error_sys(err, "reopen /dev/console");
	return 0;
}

/*
 * /dev/console: the pty peer, bound by fd onto a file created without
 * following symlinks (CVE-2025-52565: a /dev/pts/N or /dev/console symlink
 * planted in the rootfs must not redirect the bind).
 */
static int bind_console(int slave, struct error *err)
{
	_cleanup_close_ int dst = -1, tree = -1;

	if (WEAK_CONSOLE_NOFOLLOW) {
		dst = open("/dev/console", O_PATH | O_CREAT | O_CLOEXEC, 0600);
		if (dst < 0)
			return error_sys(err, "create /dev/console");
	} else if (make_console_file(&dst, err) < 0) {
		return -1;
	}
	tree = open_tree(slave, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0)
		return error_sys(err, "clone the console pty");
	if (move_mount(tree, "", dst, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return error_sys(err, "bind the console pty on /dev/console");
	return 0;
}

int terminal_setup(int console_sock, const struct oci_console_size *size,
		   bool is_init, struct error *err)
{
	_cleanup_close_ int master = -1, slave = -1;

	/* The container's devpts instance, through its /dev/ptmx. */
	master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0)
		return error_sys(err, "open /dev/ptmx in the container");
	if (unlockpt(master) < 0)
		return error_sys(err, "unlock pty");
	/* The peer straight from the master: no /dev/pts/N path lookup that a
	 * symlink could redirect (CVE-2025-52565). */
	slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0)
		return error_sys(err, "open pty peer");
	if (size && size->set) {
		struct winsize ws = { .ws_row = (unsigned short)size->height,
				      .ws_col = (unsigned short)size->width };
		if (ioctl(slave, TIOCSWINSZ, &ws) < 0)
			return error_sys(err, "set console size");
	}
	if (is_init && bind_console(slave, err) < 0)
		return -1;
	if (send_fd(console_sock, master, err) < 0)
		return -1;
	if (setsid() < 0)
		return error_sys(err, "setsid");
	if (ioctl(slave, TIOCSCTTY, 0) < 0)
		return error_sys(err, "set controlling terminal");
	for (int fd = 0; fd < 3; fd++)
		if (dup2(slave, fd) < 0)
			return error_sys(err, "dup pty to fd %d", fd);
	return 0;
}

int terminal_setup_child(const struct ctx_decided *d, struct ctx_handles *h,
			 struct error *err)
{
	if (!d->spec.process.terminal)
		return 0;
	if (h->console_sock < 0)
		return error_set(err, "process.terminal is set but there is no console socket");
	if (terminal_setup(h->console_sock, &d->spec.process.console_size,
			   !d->is_exec, err) < 0)
		return -1;
	close(h->console_sock);
	h->console_sock = -1;
	return 0;
}

/* ---- the foreground proxy ------------------------------------------------- */

static void copy_winsize(int from, int to)
{
	struct winsize ws;

	if (ioctl(from, TIOCGWINSZ, &ws) == 0)
		ioctl(to, TIOCSWINSZ, &ws);
}

/* Copy what is readable from in to out; false on EOF or error. */
static bool pump(int in, int out)
{
	char buf[8192];
	ssize_t n = read(in, buf, sizeof(buf));

	if (n <= 0)
		return n < 0 && (errno == EINTR || errno == EAGAIN);
	return write_all(out, buf, (size_t)n) == 0;
}

/* After the process exited: what is still buffered in the master, without
 * waiting for other holders of the pty to close it. */
static void drain_master(int master)
{
	int fl = fcntl(master, F_GETFL);

	if (fl < 0 || fcntl(master, F_SETFL, fl | O_NONBLOCK) < 0)
		return;
	while (pump(master, STDOUT_FILENO)) {
		struct pollfd p = { .fd = master, .events = POLLIN };
		if (poll(&p, 1, 0) <= 0)
			break;
	}
}

/* A signal for the proxy: SIGWINCH resizes, SIGCHLD may end it (true when
 * pid has exited, *status set), everything else goes to the process. */
static bool handle_signal(const struct signalfd_siginfo *si, int master,
			  bool is_tty, pid_t pid, int *status)
{
	switch (si->ssi_signo) {
	case SIGWINCH:
		if (is_tty)
			copy_winsize(STDIN_FILENO, master);
		return false;
	case SIGCHLD:
		return waitpid(pid, status, WNOHANG) == pid;
	default:
		kill(pid, (int)si->ssi_signo);
		return false;
	}
}

/*
 * The caller has the forwarded signals (forwarded_signals_mask) blocked:
 * they are read here from a signalfd and passed on to pid, as runc does in
 * tty mode, so that a shim's SIGTERM or a closing terminal's SIGHUP reaches
 * the container instead of killing us with the terminal left raw.
 */
int terminal_proxy(int master, pid_t pid, int *status, struct error *err)
{
	struct termios saved, raw;
	bool is_tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
	bool stdin_open = true, exited = false;
	sigset_t mask;
	_cleanup_close_ int sfd = -1;

	forwarded_signals_mask(&mask);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return error_sys(err, "signalfd");
	if (is_tty) {
		raw = saved;
		cfmakeraw(&raw);
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
		copy_winsize(STDIN_FILENO, master);
	}
	while (!exited) {
		struct pollfd p[3] = {
			{ .fd = master, .events = POLLIN },
			{ .fd = stdin_open ? STDIN_FILENO : -1, .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
		};
		if (poll(p, 3, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (!pump(master, STDOUT_FILENO))
				break;
		}
		if (p[1].revents & (POLLIN | POLLHUP)) {
			if (!pump(STDIN_FILENO, master))
				stdin_open = false;
		}
		if (p[2].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (!exited && read(sfd, &si, sizeof(si)) == sizeof(si))
				exited = handle_signal(&si, master, is_tty, pid, status);
		}
	}
	if (exited)
		drain_master(master);
	if (is_tty)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	/* The pty closed first: the process may still run, signals still go
	 * to it. */
	if (!exited)
		return wait_forwarding_signals(pid, status, err);
	return 0;
}
