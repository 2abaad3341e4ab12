#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# record.sh LOGDIR KIND [EXIT [SLEEP [HOW]]]
#
# An OCI hook for tests/integration/test_hooks.py: records what it saw in
# LOGDIR/KIND/ (one file per fact), sleeps SLEEP seconds (default 0: HOW
# "bg" -- the default -- in a background child of its process group, "fg"
# by exec'ing sleep, which then never finishes the script), writes
# LOGDIR/KIND/done, appends KIND to LOGDIR/order (so that file lists the
# hooks in the order they finished) and exits with EXIT (default 0).
#
#   stdin      the state JSON the runtime wrote on stdin
#   cmdline    this shell's argv, one per line      (from /proc/self/*, read
#   environ    this shell's envp, one per line       by the forked child)
#   mntns      mnt:[N] of this process
#   netns      net:[N] of this process
#   cwd        physical working directory ("?" if it cannot be named)
#   rootid     dev:ino of /
#   rootmark   "container" if / is the container's rootfs (it holds the
#              file /.hook-rootfs-marker that the test put there), else "host"
#   mountinfo  /proc/self/mountinfo
#   user_ran   "yes" if LOGDIR/user-ran exists (the container's process
#              creates it), else "no"
#   pid_*      for the pid in the state: its mnt/net ns and cmdline, as
#              seen through this process's /proc ("?" when not visible)
#
# It writes "hook-stdout-KIND" to stdout and "hook-stderr-KIND" to stderr.
# Only sh builtins and applets that busybox has are used: the same script
# runs on the host (startContainer: inside the container, from its rootfs).
logdir="$1"
kind="$2"
status="${3:-0}"
nap="${4:-0}"
how="${5:-bg}"
d="$logdir/$kind"
mkdir -p "$d" || exit 99
cat > "$d/stdin"
tr '\0' '\n' < /proc/self/cmdline > "$d/cmdline"
tr '\0' '\n' < /proc/self/environ > "$d/environ"
readlink /proc/self/ns/mnt > "$d/mntns"
readlink /proc/self/ns/net > "$d/netns"
pwd -P > "$d/cwd" 2>/dev/null || echo "?" > "$d/cwd"
stat -L -c %d:%i / > "$d/rootid"
if [ -e /.hook-rootfs-marker ]; then echo container; else echo host; fi > "$d/rootmark"
cat /proc/self/mountinfo > "$d/mountinfo"
if [ -e "$logdir/user-ran" ]; then echo yes; else echo no; fi > "$d/user_ran"
pid=$(sed -n 's/.*"pid": *\([0-9][0-9]*\).*/\1/p' "$d/stdin")
if [ -n "$pid" ] && [ "$pid" -gt 0 ]; then
	readlink "/proc/$pid/ns/mnt" > "$d/pid_mntns" 2>/dev/null || echo "?" > "$d/pid_mntns"
	readlink "/proc/$pid/ns/net" > "$d/pid_netns" 2>/dev/null || echo "?" > "$d/pid_netns"
	tr '\0' ' ' < "/proc/$pid/cmdline" > "$d/pid_cmdline" 2>/dev/null || echo "?" > "$d/pid_cmdline"
fi
echo "hook-stdout-$kind"
echo "hook-stderr-$kind" >&2
if [ "$nap" != 0 ] && [ "$how" = fg ]; then
	exec sleep "$nap"
fi
if [ "$nap" != 0 ]; then
	# In the background, in our process group: a timeout must kill it too.
	sleep "$nap" &
	echo $! > "$d/sleeper"
	wait
fi
echo done > "$d/done"
# At the end: the order in which the hooks finished.
echo "$kind" >> "$logdir/order"
exit "$status"
