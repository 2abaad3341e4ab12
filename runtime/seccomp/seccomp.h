/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_SECCOMP_H
#define AGENTSBX_SECCOMP_H

/*
 * linux.seccomp: compile the profile to classic BPF in the runtime parent,
 * load it in the container child, hand the SCMP_ACT_NOTIFY listener to the
 * seccomp agent.
 *
 * Life of a filter in `create`:
 *
 *   parent, before clone():  seccomp_prepare(&spec->linux.seccomp,
 *                                            "<root>/.seccomp-cache", &prog)
 *   child, last step:        seccomp_prog_load(&prog, &listener_fd)
 *                            hand listener_fd to the parent (see below)
 *                            execve()
 *   parent:                  seccomp_send_listener(listenerPath, metadata,
 *                                                  fd, state_json)
 *   parent:                  seccomp_prog_free(&prog)
 *
 * Compiling a Docker-sized profile with libseccomp is the largest avoidable
 * cost of a container start, and every container of a host gets the same
 * few profiles, so the result is cached on disk keyed by SHA-256 over a
 * canonical form of the profile plus everything else that shapes the BPF
 * (libseccomp version, kernel actions, arch, runtime version).
 *
 * ORDERING IN THE CHILD (the caller's obligations):
 *
 *  1. Everything that needs privilege and is not the user/capability switch
 *     comes first: mounts, pivot_root, sysctls, hostname, rlimits, the
 *     AppArmor/SELinux exec label (writes to /proc/self/attr/...), oom
 *     score, personality, close_range of stray fds, ...
 *
 *  2a. process.noNewPrivileges = true:
 *        drop to the container user (setgroups, setresgid, setresuid) and
 *        set the capabilities, then prctl(PR_SET_NO_NEW_PRIVS, 1), then
 *        seccomp_prog_load() as the very last thing before the listener handover
 *        and execve().  The kernel allows an unprivileged filter because
 *        NNP is set.
 *
 *  2b. process.noNewPrivileges = false:
 *        without NNP, seccomp(SECCOMP_SET_MODE_FILTER) requires
 *        CAP_SYS_ADMIN in the caller's user namespace (EACCES otherwise),
 *        so seccomp_prog_load() must run BEFORE the capabilities are dropped and
 *        before setresuid() to a non-root user (which clears the effective
 *        set).  The order is: step 1, seccomp_prog_load(), then setgroups,
 *        setresgid, setresuid, capset/PR_CAP_AMBIENT, the handover, execve.
 *        Consequence (same as runc and crun): the profile is already in
 *        force for those calls, so it must allow setgroups, setresgid,
 *        setresuid, capget, capset, prctl (Docker's default does).  Do NOT
 *        set NNP to dodge this: it would change the semantics of setuid
 *        binaries in the container.
 *
 *  3. Listener handover (only when prog.needs_listener): after the load, the
 *     child may use only write(2) or sendmsg(2) to hand the fd (or its number,
 *     for pidfd_getfd(2) in the parent) to the parent; seccomp_prepare()
 *     refuses profiles that send either of those to SCMP_ACT_NOTIFY,
 *     because nobody could answer them before the agent has the fd.  Any
 *     other syscall in that window that the profile notifies blocks until
 *     the agent answers: harmless once the fd is on its way.  The listener
 *     fd is O_CLOEXEC, so execve() does not leak it into the container.
 *
 *  4. The listener must reach the agent while the container is still in
 *     "creating" (the state the agent is told), i.e. before `create`
 *     returns: the child loads the filter before it blocks waiting for
 *     `start`, not after.
 *
 *  5. seccomp_prog_load() allocates nothing and takes no locks on success
 *     (one seccomp(2) call), so it is fine in a child clone()d from a
 *     multi-threaded parent; only its error path formats *err (vsnprintf,
 *     strerror).  The child is single-threaded, so
 *     SECCOMP_FILTER_FLAG_TSYNC is moot but harmless.
 */

#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../lib/error.h"
#include "../../spec/spec.h"

#define SECCOMP_KEY_SIZE 32 /* SHA-256 */
#define SECCOMP_KEY_HEX_SIZE (2 * SECCOMP_KEY_SIZE + 1)

/* Classic BPF ready for seccomp(SECCOMP_SET_MODE_FILTER). */
struct seccomp_prog {
	struct sock_filter *insns;	/* heap; NULL when len == 0 */
	unsigned short len;		/* 0: the spec has no linux.seccomp */
	unsigned int flags;		/* SECCOMP_FILTER_FLAG_* for seccomp(2) */
	bool needs_listener;		/* NEW_LISTENER is in flags */
	bool from_cache;		/* for logs and tests */
	char key[SECCOMP_KEY_HEX_SIZE]; /* cache key, hex */
};

/*
 * Validate and compile sc (or fetch it from cache_dir) into *out.
 * cache_dir: "<--root>/.seccomp-cache", created 0700 if missing; its last
 * component must not be a symlink and it must belong to the effective uid
 * with no group/other access, else the cache is not used (a warning is
 * logged, the profile is compiled).  NULL: no cache.  Cache trouble never
 * fails the call; a bad profile does.
 * sc NULL or !sc->present: *out is an empty program (seccomp_prog_load() no-op).
 * Runs in the runtime parent; not async-signal-safe.
 */
int seccomp_prepare(const struct oci_seccomp *sc, const char *cache_dir,
		    struct seccomp_prog *out, struct error *err);

/*
 * A profile the runtime carries as text (the policy's agent filters), keyed
 * by that text (seccomp_text_key) instead of by its parsed form, so that a
 * cache hit parses nothing: first seccomp_prepare_builtin_cached() (0 on a
 * verified hit, -1 otherwise, nothing to report), then on a miss parse the
 * text and seccomp_prepare_builtin() with the same key.  Such a profile has
 * no flags and no listener (refused: a hit would not know them).
 */
int seccomp_prepare_builtin_cached(const uint8_t key[SECCOMP_KEY_SIZE], const char *cache_dir,
				   struct seccomp_prog *out);
int seccomp_prepare_builtin(const struct oci_seccomp *sc, const uint8_t key[SECCOMP_KEY_SIZE],
			    const char *cache_dir, struct seccomp_prog *out, struct error *err);

/*
 * Install prog in the calling thread (see ORDERING above).  *listener_fd
 * gets the SCMP_ACT_NOTIFY listener (O_CLOEXEC) when prog->needs_listener,
 * else -1.  Empty prog: nothing is loaded, returns 0.
 */
int seccomp_prog_load(const struct seccomp_prog *prog, int *listener_fd,
		      struct error *err);

void seccomp_prog_free(struct seccomp_prog *p);

/* How many times this process ran libseccomp (cache misses); for tests. */
unsigned seccomp_compile_count(void);

/* ---- the seccomp agent (notify.c) -------------------------------- */

/* The pieces of the container's state (runtime.md "State"). */
struct seccomp_state_info {
	const char *oci_version; /* NULL: OCI_VERSION_MAX */
	const char *id;
	const char *status; /* NULL: "creating" */
	pid_t pid;
	const char *bundle;
	const struct str_map *annotations; /* NULL or empty: omitted */
};

/* The state object from its pieces, as JSON (heap string in *out). */
int seccomp_state_json(const struct seccomp_state_info *st, char **out,
		       struct error *err);

/*
 * The "Container Process State" of config-linux.md:
 *   {"ociVersion", "fds": ["seccompFd"], "pid", "metadata", "state": {...}}
 * state_json is the container's state object (e.g. seccomp_state_json(),
 * or what `state` prints); it is embedded as is, its "pid" is the
 * top-level "pid".  metadata NULL: no "metadata" field.
 */
int seccomp_process_state_json(const char *state_json, const char *metadata,
			       char **out, struct error *err);

/*
 * Connect to the agent's AF_UNIX SOCK_STREAM socket at listener_path (any
 * length), send the Container Process State built from state_json and
 * metadata, with listener_fd in SCM_RIGHTS of the first sendmsg(), and
 * close the connection.  Bounded by a send timeout, so a stuck agent fails
 * the create rather than hanging it.  listener_fd stays open (the caller
 * closes it).
 */
/* judged: the socket's O_PATH fd the policy judged (connected through
 * /proc/self/fd/N, never the path again), or -1 (the policy off). */
int seccomp_send_listener(const char *listener_path, int judged, const char *metadata,
			  int listener_fd, const char *state_json,
			  struct error *err);

/* ---- internals shared by seccomp.c, cache.c and the tests -------- */

struct sha256_ctx {
	uint32_t h[8];
	uint64_t nbytes;
	uint8_t buf[64];
	size_t nbuf;
};

void sha256_init(struct sha256_ctx *c);
void sha256_update(struct sha256_ctx *c, const void *data, size_t len);
void sha256_final(struct sha256_ctx *c, uint8_t out[SECCOMP_KEY_SIZE]);

/* The cache key of sc in this runtime, libseccomp and kernel. */
void seccomp_cache_key(const struct oci_seccomp *sc,
		       uint8_t key[SECCOMP_KEY_SIZE]);
/* The key of a built-in profile: the environment's, its variant name (a
 * weak build's profile differs from its text) and its text. */
void seccomp_text_key(const char *variant, const char *text, uint8_t key[SECCOMP_KEY_SIZE]);
void seccomp_key_hex(const uint8_t key[SECCOMP_KEY_SIZE],
		     char out[SECCOMP_KEY_HEX_SIZE]);

/* Open (creating) and vet the cache directory.  Returns an fd or -1. */
int seccomp_cache_open_dir(const char *path, struct error *err);
/* 0 and a heap program on a verified hit; -1 on a miss (reason logged). */
int seccomp_cache_load(int dirfd, const uint8_t key[SECCOMP_KEY_SIZE],
		       struct sock_filter **insns, unsigned short *len);
/* Atomically (temp file + rename) store a program, mode 0600; evicts the
 * oldest entry when the directory holds SECCOMP_CACHE_MAX_ENTRIES. */
#define SECCOMP_CACHE_MAX_ENTRIES 256
int seccomp_cache_store(int dirfd, const uint8_t key[SECCOMP_KEY_SIZE],
			const struct sock_filter *insns, unsigned short len,
			struct error *err);

/* Test hook: pretend libseccomp has another version (NULL: the real one). */
void seccomp_cache_test_set_lib_version(const char *version);

#endif
