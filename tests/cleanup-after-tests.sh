#!/bin/sh
# What the runtime keeps on purpose between containers, removed at the end
# of a test run where nothing else is in it: the shared parent of its
# default cgroup paths (/agentsbx in every hierarchy) and the default state
# root holding only the compiled-seccomp cache.  Anything still in use is
# left alone (rmdir refuses a non-empty directory).
for d in /sys/fs/cgroup/agentsbx /sys/fs/cgroup/*/agentsbx; do
	[ -d "$d" ] || continue
	rmdir "$d" 2>/dev/null || echo "cleanup: $d is not empty: left in place" >&2
done
root=/run/agentsbx
if [ -d "$root" ] && [ -z "$(ls -A "$root" | grep -vx '.seccomp-cache')" ]; then
	rm -rf "$root/.seccomp-cache" && rmdir "$root"
fi
exit 0
