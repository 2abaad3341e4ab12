/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_SANDBOX_H
#define AGENTSBX_SANDBOX_H

/*
 * The sandbox room (agent/sandbox/): runs an agent's program in a fresh
 * container and gives back what it did (stdout, stderr, the exit code,
 * whether it timed out or ran out of memory, how long it took, a Python
 * program's value and exception, the files it left in /outputs), with
 * nothing left behind on the host; in one call (sandbox_call, or prepare,
 * run and destroy apart for a warm pool), or in a workspace kept between
 * runs (sandbox_session_*).  `agentsbx sandbox` is it on the command line;
 * the MCP server (agent/mcp/) and the CLI sessions (agent/session/) are
 * built on it.  This header is the room's whole interface: the other rooms
 * and cmd/ include only it (sandbox_private.h is the room's own).
 */

/*
 * A call is: a private workspace (a size-capped tmpfs in this process's own
 * mount namespace) holding an overlay whose lower layer is the image (so
 * the image never changes) and config.json; a container created from it
 * under the policy in force; the code written into /.agentsbx of the
 * overlay; start; stdout and stderr read through pipes up to a cap; a
 * wall-clock deadline after which the whole container is killed; the
 * memory cgroup's OOM counter read; then the container deleted and the
 * workspace unmounted.  Every mount lives in the sandbox process's private
 * mount namespace, so even a killed sandbox process leaves no mount on the
 * host.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <yajl/yajl_gen.h>

#include "../../lib/error.h"
#include "../../runtime/container.h"

#define SANDBOX_IMAGE_ROOT "/var/lib/agentsbx/images"
#define SANDBOX_IMAGE_ROOT_ENV "AGENTSBX_IMAGE_ROOT"
#define SANDBOX_SESSION_DIR "/workspace"	    /* a session's files, kept between runs */
#define SANDBOX_OUTPUTS_DIR "/outputs"		    /* files a run leaves for the caller */
#define SANDBOX_OUTPUT_LIMIT (1024u * 1024)	    /* bytes kept per stream */
#define SANDBOX_DISK_DEFAULT (256ull * 1024 * 1024) /* the writable layer */
#define SANDBOX_TIMEOUT_DEFAULT 30.0		    /* seconds */
#define SANDBOX_TICK_MS 200			    /* on_tick's period */

enum sandbox_lang {
	SANDBOX_LANG_NONE, /* a command line */
	SANDBOX_LANG_PYTHON,
	SANDBOX_LANG_SH,
	SANDBOX_LANG_NODE,
	SANDBOX_LANG_MAX,
};

/* "python", "sh", "node"; -1 for anything else. */
int sandbox_lang_from_name(const char *name);
const char *sandbox_lang_name(enum sandbox_lang lang);

/* What the container is made with (fixed at create). */
struct sandbox_config {
	const char *rootfs;	/* the image directory, absolute */
	char **args;		/* the command, NULL-terminated (LANG_NONE) */
	enum sandbox_lang lang; /* else: the interpreter runs the code file */
	char **env;		/* extra K=V, NULL-terminated, may be NULL */
	const char *cwd;	/* NULL: /tmp */
	uint64_t memory;	/* bytes; 0: the policy's */
	uint64_t cpu_quota;	/* microseconds per 100000; 0: the policy's */
	int64_t pids;		/* 0: the policy's */
	const char *netns;	/* NULL: no network; else a netns path */
	bool netns_annotate;	/* ask the policy to allow it (annotation) */
	/* egress by name: "a,b" (within the policy's egress.allowDomains:
	 * the agentsbx.egress.allow annotation); NULL: the policy's own */
	const char *allow_domains;
	uint64_t disk; /* bytes of the writable layer; 0: default */
	int stdin_fd;  /* >= 0: the container's stdin; else a pipe */
	bool session;  /* bind the workspace's files/ on SANDBOX_SESSION_DIR */
	/* A language's interpreter started by sandbox_prepare (Python with
	 * its site imported), waiting on its stdin pipe for a byte: the go
	 * that sandbox_run gives once the code is in place (needs stdin_fd < 0). */
	bool warm;
};

/* What one call brings (may come after create: the warm pool). */
struct sandbox_input {
	const char *code; /* for a language; NULL with LANG_NONE */
	size_t code_len;
	const char *stdin_data; /* written to the stdin pipe; may be NULL */
	size_t stdin_len;
	double timeout;	     /* seconds, > 0 */
	size_t output_limit; /* per stream; 0: SANDBOX_OUTPUT_LIMIT */
	int cancel_fd;	     /* >= 0: once readable, the container is killed */
	/* Optional: each piece of output as it arrives (stream 1 or 2), and a
	 * tick at least every SANDBOX_TICK_MS while the program runs. */
	void (*on_output)(void *arg, int stream, const char *buf, size_t n);
	void (*on_tick)(void *arg);
	void *cb_arg;
};

struct sandbox_seen;

/* A file the run left in SANDBOX_OUTPUTS_DIR (sandbox_outputs.c). */
struct sandbox_output {
	char *path; /* "/outputs/REL" */
	unsigned long long size;
	char *content_base64; /* a one-call sandbox's, within a cap; else NULL */
};

struct sandbox_result {
	char *out; /* what the code wrote, trimmed with a marker past the cap */
	size_t out_len;
	char *err;
	size_t err_len;
	int exit_code; /* 128+N for a signal */
	bool timed_out;
	bool truncated;
	bool oom_killed;
	double seconds; /* from start to the exit of the container's init */
	int signal;	/* the sandbox itself was told to stop (SIGTERM...) */
	bool cancelled; /* killed because cancel_fd became readable */
	bool python;	/* the program was Python: look for its exception */
	char *value;	/* Python: repr() of the last expression's value, or NULL */
	size_t value_len;
	struct sandbox_output *outputs; /* created or changed in /outputs */
	size_t n_outputs;
	bool outputs_truncated; /* more files than were listed */
};

/* A created container waiting for its code (warm, or about to run). */
struct sandbox {
	char id[64];
	char *dir; /* SANDBOX_WORK_DIR/ID: the bundle, on its own tmpfs */
	bool dir_made, dir_mounted, overlay_mounted;
	bool identity_held; /* dir holds the identity its containers share */
	uint32_t uid;	    /* their process's host uid (0: root, rootless) */
	int code_dirfd;	    /* /.agentsbx in the overlay */
	enum sandbox_lang lang;
	int out_fd, err_fd; /* our read ends */
	int in_fd;	    /* our write end of the stdin pipe, or -1 */
	pid_t pid;	    /* the container init, our child */
	int pidfd;
	bool created, reaped;
	bool started; /* warm: its interpreter waits for the go */
	/* cold: to be started by its create (the code in place), then running
	 * since run_started_ns (0: not started so); sandbox_run only waits */
	bool start_on_create;
	long long run_started_ns;
	struct container_known known; /* from its create: its cgroup, the delete's */
	bool background;	      /* made at a lower priority (a pool's): normal at the go */
	bool session;		      /* a session's: its outputs stay between runs */
	struct sandbox_seen *seen;    /* ... as they were before this run (sorted) */
	size_t n_seen, seen_cap;
};

/*
 * Once per process, before any sandbox: become a child subreaper, move
 * into a private mount namespace with a tmpfs on SANDBOX_WORK_DIR, make
 * sure fds 0-2 are open, block the termination signals (SIGINT, SIGTERM,
 * SIGHUP, SIGQUIT, SIGPIPE), which arrive on *sigfd instead (the
 * containers get the signal mask the process had), and start the
 * watchdog that deletes this process's containers if it is killed.
 */
int sandbox_env_init(const struct global_opts *g, int *sigfd, struct error *err);
/* Before a normal exit, every sandbox destroyed: stop the watchdog. */
void sandbox_env_fini(void);
/* The state root made (once per process), as the runtime's create would
 * make it, before the first container (sandbox.c says why). */
int sandbox_make_state_root(const struct global_opts *g, struct error *err);
/* For a process that will have threads: before the first thread, fork
 * the single-threaded creator that sandbox_prepare() then asks to create
 * containers (see sandbox_creator.c).  Stopped by sandbox_creator_stop(). */
int sandbox_creator_start(const struct global_opts *g, struct error *err);
void sandbox_creator_stop(void);

/* The image directory for --image NAME under root (NULL: the environment
 * or SANDBOX_IMAGE_ROOT), or --rootfs DIR.  Heap string, absolute. */
int sandbox_image_path(const char *root, const char *name, char **out,
		       struct error *err);
int sandbox_rootfs_path(const char *dir, char **out, struct error *err);
/* The interpreter for lang in the image ("/usr/bin/python3"), found in
 * the usual bin directories without leaving the image. */
int sandbox_find_interpreter(const char *rootfs, enum sandbox_lang lang,
			     char **out, struct error *err);

/* Workspace, overlay, config.json, pipes, then create (not start). */
int sandbox_prepare(const struct global_opts *g, const struct sandbox_config *cfg,
		    struct sandbox *sb, struct error *err);
/* A cold call's: the same with in's code in place, and the container
 * started by its create, as `run` starts (no second read of its state);
 * sandbox_run(in) then only waits.  A warm cfg: as sandbox_prepare. */
int sandbox_prepare_started(const struct global_opts *g, const struct sandbox_config *cfg,
			    const struct sandbox_input *in, struct sandbox *sb, struct error *err);
/* Write the code, start, capture, enforce the deadline, read the OOM
 * counter.  The container has exited (or been killed) on return. */
int sandbox_run(const struct global_opts *g, struct sandbox *sb,
		const struct sandbox_input *in, int sigfd,
		struct sandbox_result *res, struct error *err);
/* Kill what is left, delete the container, unmount, remove; never fails
 * (problems are logged).  Safe on a half-prepared sandbox. */
void sandbox_destroy(const struct global_opts *g, struct sandbox *sb);
/* A warm sandbox is still usable (its init waits for start, or its warm
 * interpreter for the go). */
bool sandbox_is_alive(const struct sandbox *sb);

/* ---- sessions (sandbox_session.c) ------------------------------------------
 * A workspace kept between runs: files/ in it is SANDBOX_SESSION_DIR,
 * read-write, in each run's container; each run is a new container. */
struct sandbox_session {
	struct sandbox sb; /* the workspace; a container only during a run */
	struct sandbox_config cfg;
	char *allow_domains; /* cfg.allow_domains, the session's own copy */
	int files_fd;
	int outputs_fd; /* the workspace's outputs/, on /outputs */
};

struct sandbox_dirent {
	char name[256];
	const char *type; /* "file", "directory", "symlink", "other" */
	unsigned long long size;
};

int sandbox_session_open(const struct global_opts *g, const struct sandbox_config *cfg,
			 struct sandbox_session *ss, struct error *err);
int sandbox_session_run(const struct global_opts *g, struct sandbox_session *ss,
			enum sandbox_lang lang, const struct sandbox_input *in,
			struct sandbox_result *res, struct error *err);
void sandbox_session_close(const struct global_opts *g, struct sandbox_session *ss);
/* Paths are SANDBOX_SESSION_DIR/REL or REL, resolved inside files/, or
 * SANDBOX_OUTPUTS_DIR/REL, inside outputs/; the rel part, NULL if neither. */
const char *sandbox_session_rel(const char *path);
int sandbox_session_write_file(struct sandbox_session *ss, const char *path, const char *data,
			       size_t len, struct error *err);
int sandbox_session_read_file(struct sandbox_session *ss, const char *path, size_t max,
			      char **out, size_t *len, struct error *err);
int sandbox_session_list(struct sandbox_session *ss, const char *path,
			 struct sandbox_dirent **out, size_t *n, size_t max, struct error *err);

/* ---- warm pools (sandbox_pool.c) ------------------------------------------
 * For a long-lived caller: up to want warm sandboxes of cfg (cfg->warm is
 * implied; a language, stdin a pipe), kept ready by a thread of the pool's
 * own that makes a new one whenever one is taken.  cfg's strings must
 * outlive the pool; sandbox_creator_start() must have been called.  A
 * taken sandbox runs one program (sandbox_run) and is destroyed
 * (sandbox_destroy) by the caller. */
struct sandbox_pool;
int sandbox_pool_start(const struct global_opts *g, const struct sandbox_config *cfg, int want,
		       struct sandbox_pool **out, struct error *err);
/* The oldest ready sandbox that is still alive into *out; false if there
 * is none now (never waits).  NULL pool: false. */
bool sandbox_pool_take(struct sandbox_pool *p, struct sandbox *out);
/* The caller is done with a taken sandbox (destroyed it): the pool's
 * refill waits for that while it has one ready, so as not to compete with
 * the run for the CPU. */
void sandbox_pool_done(struct sandbox_pool *p);
/* Stop the thread, destroy what is ready, free.  NULL: nothing. */
void sandbox_pool_stop(struct sandbox_pool *p);

/* prepare + run + destroy. */
int sandbox_call(const struct global_opts *g, const struct sandbox_config *cfg,
		 const struct sandbox_input *in, int sigfd,
		 struct sandbox_result *res, struct error *err);
void sandbox_result_free(struct sandbox_result *res);
/* A command that is not in the image is the code's failure, not the
 * sandbox's: if err says so, *res is exit 127 with the reason on stderr, as
 * a shell would report it, and true is returned. */
bool sandbox_command_not_found(const struct error *err, struct sandbox_result *res);

/* {"stdout","stderr","exit_code","timed_out","seconds","truncated",
 *  "oom_killed"} into g (strings made valid UTF-8), and "error":
 *  {"name","value","traceback"} when a Python program died of an uncaught
 *  exception. */
void sandbox_result_gen(yajl_gen g, const struct sandbox_result *res);
/* CLOCK_MONOTONIC in nanoseconds. */
long long sandbox_now_ns(void);
/* The same as one line of JSON (no newline).  Heap string. */
char *sandbox_result_json(const struct sandbox_result *res);

/* Flags shared by cmd/sandbox.c and cmd/mcp.c: "256m", "1g", "4096";
 * "1.5" cpus into a quota per 100000 us; seconds as a positive number. */
int sandbox_parse_size(const char *s, uint64_t *out);
int sandbox_parse_cpus(const char *s, uint64_t *quota);
int sandbox_parse_seconds(const char *s, double *out);

/* Whether --network PATH needs the agentsbx.network=allow annotation
 * (the policy in force does not allow networking by itself). */
int sandbox_network_needs_annotation(const struct global_opts *g, bool *out,
				     struct error *err);
/* The caller's own limits and network (cfg) against the policy's caps:
 * over a cap is refused, naming the rule and the field (sandbox_limits.c). */
int sandbox_check_limits(const struct global_opts *g, const struct sandbox_config *cfg,
			 struct error *err);

#endif
