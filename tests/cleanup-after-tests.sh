#!/bin/sh
# The end of `make test`: remove what the runtime keeps on purpose between
# containers, then fail the run if any test left something of ours behind.
#
# Kept on purpose, removed here where nothing else is in it: the shared
# parent of the default cgroup paths (/agentsbx in every hierarchy), the
# host-wide registry of identities (.identities: its lock file, and no uid
# held) and the default state root holding only these and the
# compiled-seccomp cache.  Anything still in use is left alone (rmdir
# refuses a non-empty directory).
#
# Leftovers that fail the run: a cgroup of ours (agentsbx*, sbx-*) still
# there, at the top of a hierarchy or under the caller's own cgroup (where
# an engine puts a *relative* cgroup parent: on these machines that is
# inside the machine's own memory:/process_api/..., which is only read here,
# never changed), and a state root with containers in it.
status=0

for d in /sys/fs/cgroup/agentsbx /sys/fs/cgroup/*/agentsbx; do
	[ -d "$d" ] || continue
	rmdir "$d" 2>/dev/null || true
done
root=/run/agentsbx
ids=$root/.identities
# A holder whose container or process is gone (a SIGKILLed session server,
# a create killed mid-way) is stale: the runtime takes such a uid over when
# a create probes it; here it is removed as the runtime would, and only a
# live holder is a leftover.  Live: "pid:PID:START" while that process is
# (START: /proc/PID/stat's 22nd field), a path while it records the uid.
holder_live() { # UID HOLDER-FILE
	# sh has no locals: these names are the function's alone (the
	# caller's loop variable is h).
	held_by=$(cat "$2" 2>/dev/null) || return 1
	case $held_by in
	pid:*)
		held_pid=${held_by#pid:}; held_start=${held_pid#*:}; held_pid=${held_pid%%:*}
		[ -r "/proc/$held_pid/stat" ] || return 1
		[ "$(sed 's/^.*) //' "/proc/$held_pid/stat" | cut -d' ' -f20)" = "$held_start" ]
		;;
	/*) [ "$(cat "$held_by/identity" 2>/dev/null)" = "$1" ] ;;
	*) return 1 ;;
	esac
}
if [ -d "$ids" ]; then
	for d in "$ids"/*; do
		[ -d "$d" ] || continue
		for h in "$d"/*; do
			[ -e "$h" ] || continue
			holder_live "${d##*/}" "$h" || rm -f "$h"
		done
		rmdir "$d" 2>/dev/null || true
	done
fi
if [ -d "$ids" ] && [ -z "$(ls -A "$ids" | grep -vx '.lock')" ]; then
	rm -f "$ids/.lock" && rmdir "$ids"
fi
rmdir "$root/.sessions" 2>/dev/null || true
rmdir /run/agentsbx-sandbox 2>/dev/null || true  # the sandbox command's default root
if [ -d "$root" ] && [ -z "$(ls -A "$root" | grep -vx '.seccomp-cache')" ]; then
	rm -rf "$root/.seccomp-cache" && rmdir "$root"
fi

# Every place a test's cgroup could be: the top of each hierarchy and the
# caller's own cgroup in it (/proc/self/cgroup: "id:controllers:/path").
report() {
	echo "cleanup: left behind by the tests: $1" >&2
	status=1
}
while IFS=: read -r _ ctrls path; do
	case "$ctrls" in
	"") mnt=/sys/fs/cgroup/unified; [ -d "$mnt" ] || mnt=/sys/fs/cgroup ;;
	name=*) mnt=/sys/fs/cgroup/${ctrls#name=} ;;
	*) mnt=/sys/fs/cgroup/$ctrls ;;
	esac
	[ -d "$mnt" ] || continue
	for base in "$mnt" "$mnt$path"; do
		for d in "$base"/agentsbx* "$base"/sbx-*; do
			[ -d "$d" ] && report "cgroup $d"
		done
	done
done < /proc/self/cgroup
if [ -d "$root" ]; then
	for d in "$root"/*; do
		[ -e "$d" ] && report "container state $d"
	done
fi
# A uid still held: some container of a test was never deleted.
if [ -d "$ids" ]; then
	for d in "$ids"/*; do
		[ -e "$d" ] && report "identity $d held: $(cat "$d"/* 2>/dev/null | tr '\n' ' ')"
	done
fi
# The audit log is the operator's: a test writes its own (auditLog or
# AGENTSBX_POLICY_LOG), never the default one.  A line naming a policy
# file under /tmp came from a test.
log=/var/log/agentsbx/policy.log
if [ -f "$log" ] && grep -q '"policy":"/tmp/' "$log"; then
	report "audit log lines from tests in $log"
fi
# ... nor grows it (make test records its size first: --begin FILE).
if [ -n "${AUDIT_LOG_MARK:-}" ] && [ -f "$AUDIT_LOG_MARK" ]; then
	before=$(cat "$AUDIT_LOG_MARK")
	now=$(stat -c %s "$log" 2>/dev/null || echo 0)
	[ "$now" = "$before" ] || report "the default audit log $log grew during the tests ($before -> $now bytes)"
fi
exit $status
