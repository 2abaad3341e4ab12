/* SPDX-License-Identifier: Apache-2.0 */
/*
 * capstatus: the capability state of the calling process, for the
 * capability tests (tests/integration/test_caps.py); static, so that a copy
 * can be made setuid-root in a bundle.
 *
 *   capstatus [ACTION...]
 *
 * Prints, as key=value lines, from /proc/self/status: CapInh CapPrm CapEff
 * CapBnd CapAmb (hex) NoNewPrivs, and the real/effective uid.  Then each
 * ACTION, in order, and its result ("ok" or the errno name):
 *   amb+N     prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, N)
 *   inh+N     capset: add N to the inheritable set
 *   bnd-N     prctl(PR_CAPBSET_DROP, N)
 * and the sets again after the last action.  Exit status 0.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static void show(const char *prefix)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[512];

	if (!f) {
		printf("%sstatus=%s\n", prefix, strerrorname_np(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		static const char *keys[] = { "CapInh:", "CapPrm:", "CapEff:", "CapBnd:",
					      "CapAmb:", "NoNewPrivs:" };
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t n = strlen(keys[i]);
			if (strncmp(line, keys[i], n) == 0) {
				char *v = line + n;
				while (*v == ' ' || *v == '\t')
					v++;
				v[strcspn(v, "\n")] = '\0';
				printf("%s%.*s=%s\n", prefix, (int)(n - 1), keys[i], v);
			}
		}
	}
	fclose(f);
	printf("%suid=%d\n%seuid=%d\n", prefix, (int)getuid(), prefix, (int)geteuid());
}

static int add_inheritable(int cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return -1;
	d[cap / 32].inheritable |= 1u << (cap % 32);
	return (int)syscall(SYS_capset, &h, d);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	show("");
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int cap = atoi(a + 4), r;

		if (!strncmp(a, "amb+", 4))
			r = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0);
		else if (!strncmp(a, "inh+", 4))
			r = add_inheritable(cap);
		else if (!strncmp(a, "bnd-", 4))
			r = prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
		else {
			fprintf(stderr, "capstatus: unknown action %s\n", a);
			return 2;
		}
		printf("%s=%s\n", a, r < 0 ? strerrorname_np(errno) : "ok");
	}
	if (argc > 1)
		show("after.");
	return 0;
}
