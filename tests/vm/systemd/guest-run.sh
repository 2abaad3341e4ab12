#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Installed in the systemd guest image as /usr/local/sbin/agentsbx-vm-run and
# run by agentsbx-test.service once the guest has booted (systemd as PID 1).
# The host runner (vmrun-systemd.sh) shares two directories over virtio-9p:
#   tag "vmctl": cmd (sh text), cwd, env, share-path, root/ (host programs
#                and their libraries, copied into / when missing here)
#   tag "share": the directory to mount at the path in share-path (the repo)
# Prints "AGENTSBX-VM-EXIT=<status>" on the console, then reboots, which
# ends QEMU (-no-reboot).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
CTL=/run/agentsbx-vm

finish() {
	echo "AGENTSBX-VM-EXIT=$1"
	sync
	systemctl --force --force reboot
	busybox reboot -f
	exit "$1"
}

mkdir -p "$CTL" || finish 125
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none vmctl "$CTL" ||
	{ echo "vm-run: cannot mount the control share"; finish 125; }
share=$(cat "$CTL/share-path")
if [ -n "$share" ]; then
	mkdir -p "$share" &&
		mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none \
			share "$share" ||
		{ echo "vm-run: cannot mount the host share at $share"; finish 125; }
fi
# Host libraries the guest lacks (the runtime's ldd list), file by file
# (/lib is a symlink here): never replace the guest's own.
if [ -d "$CTL/root" ]; then
	(cd "$CTL/root" && find . -type f) | while read -r f; do
		f=${f#./}
		[ -e "/$f" ] && continue
		mkdir -p "$(dirname "/$f")" && cp "$CTL/root/$f" "/$f"
	done
fi

cd "$(cat "$CTL/cwd" 2>/dev/null || echo /)" 2>/dev/null || cd /
[ -f "$CTL/env" ] && . "$CTL/env"
grep -qw agentsbx.vmdebug /proc/cmdline &&
	echo "vm-run: command starts at uptime $(cut -d' ' -f1 /proc/uptime)"
sh "$CTL/cmd"
rc=$?
cd /
finish $rc
