/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state.json, as every command after `create` reads it (state_read(); a
 * process that can write the state directory could plant one): written
 * into a temp state directory, read, then written back with state_write()
 * and read again, which must give the same fields.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/util.h"
#include "../../runtime/lifecycle/state.h"
#include "fuzz.h"

static int dirfd = -1;
static char *made;

static void cleanup(void)
{
	unlinkat(dirfd, STATE_FILE, 0);
	unlinkat(dirfd, STATE_FILE ".tmp", 0);
	rmdir(made);
}

/* tmpfs: on ext4 a rename over a file flushes it (auto_da_alloc), 50x
 * slower.  run.sh passes FUZZ_TMPDIR, a directory it removes after the
 * run whatever happened (a crash or a leak report skips atexit). */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *base = getenv("FUZZ_TMPDIR");

	fuzz_quiet_log();
	if (!base)
		base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	made = xasprintf("%s/agentsbx-fuzz-state.XXXXXX", base);
	if (!mkdtemp(made) || (dirfd = open(made, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		perror("fuzz_state: temp state directory");
		exit(1);
	}
	atexit(cleanup);
	return 0;
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b)) ||
	       /* state_write() writes an absent string as "" */
	       (!a && b && !*b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct container_state st, again;
	struct error err;
	char *pub;
	int fd;

	fd = openat(dirfd, STATE_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	fuzz_assert(fd >= 0);
	fuzz_assert(write_all(fd, data, size) == 0);
	close(fd);

	if (state_read(dirfd, &st, &err) < 0)
		return 0;
	pub = state_to_json(&st, false);
	fuzz_assert(pub);
	free(pub);
	if (state_write(dirfd, &st, &err) < 0) {
		fprintf(stderr, "state_write: %s\n", err.msg);
		abort();
	}
	if (state_read(dirfd, &again, &err) < 0) {
		fprintf(stderr, "state written by state_write does not read back: %s\n",
			err.msg);
		abort();
	}
	fuzz_assert(same_str(st.id, again.id));
	fuzz_assert(same_str(st.bundle, again.bundle));
	fuzz_assert(same_str(st.rootfs, again.rootfs));
	fuzz_assert(same_str(st.cgroup_path, again.cgroup_path));
	fuzz_assert(st.pid == again.pid);
	fuzz_assert(st.start_time == again.start_time);
	fuzz_assert(st.cgroup_manager == again.cgroup_manager);
	fuzz_assert(st.started == again.started);
	fuzz_assert(st.annotations.len == again.annotations.len);
	state_free(&again);
	state_free(&st);
	return 0;
}
