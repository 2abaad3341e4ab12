#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# A Debian bookworm root with systemd as init, for the systemd cgroup
# manager tests (tests/vm/systemd/vmrun-systemd.sh boots it).  Built once and
# kept as an ext4 image:
#   CACHE/systemd-root/          the debootstrap tree
#   CACHE/systemd-root.ext4      the image booted (read-only: snapshot=on)
# Prints the image path.  Rebuilt when AGENTSBX_VM_REFRESH=1 or when this
# script changed the image's contents (the stamp below).
#   AGENTSBX_VM_CACHE   cache dir (default /var/cache/agentsbx-vm)
#   AGENTSBX_VM_MIRROR  Debian mirror (default: debootstrap's)
#
# The guest side: agentsbx-test.service (Type=oneshot, once the boot is
# done and dbus is up; only when the kernel command line has agentsbx.cmd)
# runs /usr/local/sbin/agentsbx-vm-run (guest-run.sh), which reads the
# command from the runner's control share, runs it, prints
#   AGENTSBX-VM-EXIT=<status>
# on the console and reboots (QEMU runs with -no-reboot: it exits).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
cache=${AGENTSBX_VM_CACHE:-/var/cache/agentsbx-vm}
dir=$cache/systemd-root
img=$cache/systemd-root.ext4
stamp_want=$(cat "$0" "$HERE/guest-run.sh" | sha256sum | cut -c1-16)

die() { echo "build-image: $*" >&2; exit 1; }

if [ "${AGENTSBX_VM_REFRESH:-0}" != 1 ] && [ -f "$img" ] &&
	[ "$(cat "$img.stamp" 2>/dev/null)" = "$stamp_want" ]; then
	echo "$img"
	exit 0
fi
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, an image owned by root)"
command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
command -v mkfs.ext4 >/dev/null || die "mkfs.ext4 is not installed (e2fsprogs)"
mkdir -p "$cache"

# 1. The tree: debootstrap once (a few minutes), kept for later images.
if [ ! -f "$dir/.complete" ] || [ "${AGENTSBX_VM_REFRESH:-0}" = 1 ]; then
	rm -rf "$dir.tmp"
	echo "build-image: debootstrap bookworm into $dir (a few minutes)" >&2
	debootstrap --variant=minbase \
		--include=systemd,systemd-sysv,dbus,busybox-static \
		bookworm "$dir.tmp" ${AGENTSBX_VM_MIRROR:-} >"$cache/debootstrap.log" 2>&1 ||
		{ tail -20 "$cache/debootstrap.log" >&2; die "debootstrap failed (log: $cache/debootstrap.log)"; }
	rm -rf "$dir.tmp/var/cache/apt/archives/"*.deb "$dir.tmp/var/lib/apt/lists/"*
	touch "$dir.tmp/.complete"
	rm -rf "$dir" && mv "$dir.tmp" "$dir"
fi

# 2. The guest's configuration (re-applied on every image build).
R=$dir
echo agentsbx-sd > "$R/etc/hostname"
: > "$R/etc/fstab"
: > "$R/etc/machine-id" # systemd makes a transient one at boot
ln -sf /usr/share/zoneinfo/Etc/UTC "$R/etc/localtime"
# Nothing on the serial console but the test's output: no getty there.
for u in serial-getty@ttyS0.service getty@tty1.service console-getty.service \
	systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer \
	e2scrub_all.timer e2scrub_reap.service fstrim.timer \
	systemd-networkd-wait-online.service; do
	ln -sfn /dev/null "$R/etc/systemd/system/$u"
done
mkdir -p "$R/etc/systemd/system.conf.d" "$R/etc/systemd/journald.conf.d"
cat > "$R/etc/systemd/system.conf.d/agentsbx.conf" <<'EOF'
[Manager]
ShowStatus=no
DefaultTimeoutStartSec=60s
DefaultTimeoutStopSec=15s
EOF
cat > "$R/etc/systemd/journald.conf.d/agentsbx.conf" <<'EOF'
[Journal]
Storage=volatile
ForwardToConsole=no
EOF

install -m 0755 "$HERE/guest-run.sh" "$R/usr/local/sbin/agentsbx-vm-run"
cat > "$R/etc/systemd/system/agentsbx-test.service" <<'EOF'
[Unit]
Description=agentsbx test command from the host share
After=multi-user.target dbus.service
Wants=dbus.service
ConditionKernelCommandLine=agentsbx.cmd

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/agentsbx-vm-run
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
TimeoutStartSec=infinity

[Install]
WantedBy=default.target
EOF
mkdir -p "$R/etc/systemd/system/default.target.wants"
ln -sfn /etc/systemd/system/agentsbx-test.service \
	"$R/etc/systemd/system/default.target.wants/agentsbx-test.service"
mkdir -p "$R/mnt/host"

# 3. The image: the tree copied in by mke2fs -d (owners and modes kept).
size_mb=$(( $(du -sm "$R" | cut -f1) + 512 ))
rm -f "$img.tmp"
mkfs.ext4 -q -F -L agentsbx-sd -d "$R" "$img.tmp" "${size_mb}M" >&2 ||
	die "mkfs.ext4 -d $R failed"
mv "$img.tmp" "$img"
echo "$stamp_want" > "$img.stamp"
echo "$img"
