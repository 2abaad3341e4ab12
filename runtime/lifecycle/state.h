/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_STATE_H
#define AGENTSBX_STATE_H

/*
 * The state store: one directory per container under --root, holding
 *   state.json  the container's state (written atomically: temp + rename)
 *   config.json the spec as it was at create (the bundle may change later)
 *   exec.fifo   while created: init blocks on it until `start`
 *   exec.done   while created: init reports its execve (or failure) on it
 * Commands on one id serialise on flock() of the directory; a lock held
 * longer than STATE_LOCK_WAIT_S is an error for the waiter, not a hang.
 *
 * Record before create: `create` fills the directory under a staging name
 * (.new.PID.RANDOM) with a "creating" state naming the creating process and the
 * cgroup it will make, then renames it to ID; the init's pid is recorded
 * right after the clone, before the init can do anything.  So whatever a
 * SIGKILL interrupts, the state names everything that may exist, and
 * `delete --force` removes it.  state.json goes last when a directory is
 * removed: a directory without one holds nothing that needs undoing.
 */

#include <stdbool.h>
#include <sys/types.h>

#include "../../lib/error.h"
#include "../../spec/spec.h"
#include "../cgroup/cgroup.h"

enum container_status {
	STATUS_CREATING,
	STATUS_CREATED,
	STATUS_RUNNING,
	STATUS_PAUSED,
	STATUS_STOPPED,
};

struct container_state {
	char *id;
	pid_t pid;
	unsigned long long start_time; /* init's /proc/PID/stat starttime */
	char *bundle;
	char *rootfs;
	char *created; /* RFC 3339 */
	char *owner;
	struct str_map annotations;
	char *cgroup_path;
	enum cgroup_manager cgroup_manager;
	bool started; /* `start` has released init */
	/* Stored status "creating": `create` has not finished.  The creating
	 * runtime process, to tell a create in progress from a killed one. */
	bool creating;
	pid_t creator_pid;
	unsigned long long creator_start_time;
	enum container_status status; /* computed by state_refresh() */
};

#define STATE_FILE "state.json"
#define STATE_CONFIG_FILE "config.json"
#define STATE_FIFO "exec.fifo"
/* Held open (close-on-exec) by init until it execs the process: `start`
 * waits for its last writer to go, and reads any startContainer error. */
#define STATE_DONE_FIFO "exec.done"
/* The host uid of the container's own under identities (runtime/policy/
 * identity.c), written before it is taken. */
#define STATE_IDENTITY_FILE "identity"
/* The prefix of a state directory being made (see above). */
#define STATE_STAGING_PREFIX ".new."
/* The longest wait for a container's lock. */
#define STATE_LOCK_WAIT_S 30

const char *status_name(enum container_status s);

/* Open (creating with mode 0700 when create is set) the --root directory. */
int state_root_open(const char *root, bool create, int *out, struct error *err);

/* Make ROOT/ID (empty) and lock it: state_dir_stage + state_dir_publish.
 * EEXIST -> "container with id exists". */
int state_dir_create(int rootfd, const char *id, int *out, struct error *err);

/* Make and lock ROOT/.new.PID.RANDOM (*name, heap), to fill and publish. */
int state_dir_stage(int rootfd, char **name, int *out, struct error *err);
/* Rename the staged directory to ROOT/ID, never over an existing one
 * ("container with id exists"); on failure the staged one is removed. */
int state_dir_publish(int rootfd, const char *name, const char *id, int dirfd,
		      struct error *err);
/* Remove a staged directory (what is in it, then itself). */
void state_dir_discard_staged(int rootfd, const char *name, int dirfd);
/* Remove the staged directories whose creating process is gone. */
void state_dir_sweep_staged(int rootfd);

/* Open and lock ROOT/ID, waiting at most STATE_LOCK_WAIT_S for the lock.
 * Missing -> `container "ID" does not exist`. */
int state_dir_open(int rootfd, const char *id, bool exclusive, int *out,
		   struct error *err);
/* Open ROOT/ID without a lock, to read (state.json is replaced whole). */
int state_dir_open_unlocked(int rootfd, const char *id, int *out,
			    struct error *err);

/* Remove ROOT/ID and what is in it, state.json last (the caller holds its
 * lock). */
int state_dir_remove(int rootfd, const char *id, int dirfd, struct error *err);

int state_write(int dirfd, const struct container_state *st, struct error *err);
/* Read state.json and compute the live status. */
int state_read(int dirfd, struct container_state *st, struct error *err);
void state_free(struct container_state *st);

/* Parse the config.json saved at create (for the poststart/poststop hooks). */
int state_load_spec(int dirfd, struct oci_spec *spec, struct error *err);

/* Recompute st->status from the process and the fifo; a create in progress
 * is "creating", a killed one "stopped". */
void state_refresh(int dirfd, struct container_state *st);

/* The public state JSON (runtime.md + runc's extra fields).  Heap string. */
char *state_to_json(const struct container_state *st, bool pretty);

/* starttime of a process (field 22 of /proc/PID/stat); 0 if gone. */
unsigned long long proc_start_time(pid_t pid);
/* The process is alive, not a zombie, and has the given start time. */
bool proc_is_same(pid_t pid, unsigned long long start_time);

/* Now in RFC 3339 with nanoseconds, UTC.  Heap string. */
char *rfc3339_now(void);

#endif
