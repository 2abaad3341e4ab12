#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Run one command in a throw-away QEMU guest with a pure cgroup v2 hierarchy.
#
#   tests/vm/vmrun.sh [--] CMD [ARGS...]
#
# The guest boots a Debian kernel (tests/vm/get-kernel.sh, cached) with a
# busybox initramfs (tests/vm/init), on `-M microvm`, one vCPU, TCG (this
# host's /dev/kvm is PVM, on which stock kernels crawl).  The repository (or
# VM_SHARE) is shared over virtio-9p at the same absolute path as on the host,
# so binaries built under build/ run there as they are; the command starts in
# the current directory when it is inside the share.  Prints
#   vm: exit status N
# and exits with N: the command's status, 124 on timeout, 125 when the guest
# failed before the command ran, 77 (skip) when QEMU is not installed.
#
# Environment:
#   VM_TIMEOUT=300        seconds before the guest is killed
#   VM_MEM=1024           guest memory, MiB
#   VM_SHARE=DIR          directory shared with the guest (default: the repo)
#   VM_BINS="a b"         host programs to copy in, with their ldd libraries
#   VM_ENV="K=V K2=V2"    variables exported to the command
#   VM_CGROUP_ENABLE="+memory ..."  written to the root's subtree_control
#   VM_ACCEL=tcg|kvm      default tcg unless /dev/kvm is a real, usable KVM
#   VM_DEBUG=1            kernel messages and a boot-time marker
#   AGENTSBX_VM_CACHE     kernel cache (default /var/cache/agentsbx-vm)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
QEMU=${QEMU:-qemu-system-x86_64}
MODULES="virtio_mmio 9pnet_virtio 9p overlay"

[ "${1:-}" = -- ] && shift
[ $# -ge 1 ] || { echo "usage: $0 [--] CMD [ARGS...]" >&2; exit 2; }

if ! command -v "$QEMU" >/dev/null 2>&1; then
	cat >&2 <<-EOF
	########################################################################
	# SKIPPED: $QEMU is not installed, the cgroup v2 guest cannot run.
	# Install it with: apt-get install --no-install-recommends qemu-system-x86
	########################################################################
	EOF
	exit 77
fi

kdir=${VM_KDIR:-$("$HERE/get-kernel.sh")}
kernel=$kdir/vmlinux
[ -f "$kernel" ] || kernel=$(ls "$kdir"/root/boot/vmlinuz-* | tail -1)
moddir=$(ls -d "$kdir"/root/lib/modules/* | tail -1)

T=$(mktemp -d /tmp/agentsbx-vm.XXXXXX)
trap 'rm -rf "$T"' EXIT
I=$T/initramfs
mkdir -p "$I/bin" "$I/modules" "$I/payload/vm"
cp /bin/busybox "$I/bin/busybox"
cp "$HERE/init" "$I/init"
chmod 755 "$I/init"

# Modules with their dependencies (read from .modinfo: no depmod needed),
# dependencies first.
declare -A modpath=() modseen=()
while read -r f; do
	n=${f##*/}
	n=${n%.ko}
	modpath[${n//-/_}]=$f
done < <(find "$moddir/kernel" -name '*.ko')
add_module() {
	local m=${1//-/_} d
	[ -n "${modseen[$m]:-}" ] && return
	modseen[$m]=1
	[ -n "${modpath[$m]:-}" ] || return 0 # built in
	for d in $(tr '\0' '\n' < "${modpath[$m]}" | sed -n 's/^depends=//p' | tr ',' ' '); do
		add_module "$d"
	done
	cp "${modpath[$m]}" "$I/modules/$m.ko"
	echo "$m" >> "$I/modules/order"
}
touch "$I/modules/order"
for m in $MODULES; do add_module "$m"; done

# The command, quoted for sh, and its surroundings.
{ printf 'exec'; for a in "$@"; do printf " '%s'" "${a//\'/\'\\\'\'}"; done; echo; } > "$I/payload/vm/cmd"
share=$(realpath "${VM_SHARE:-$REPO}")
echo "$share" > "$I/payload/vm/share-path"
case "$PWD/" in "$share"/*) echo "$PWD" ;; *) echo "$share" ;; esac > "$I/payload/vm/cwd"
echo "${VM_CGROUP_ENABLE:-}" > "$I/payload/vm/cgroup-enable"
: > "$I/payload/vm/env"
for kv in ${VM_ENV:-}; do printf "export '%s'\n" "${kv//\'/}" >> "$I/payload/vm/env"; done
for b in ${VM_BINS:-}; do
	for f in "$b" $(ldd "$b" 2>/dev/null | grep -o '/[^ ]*' || true); do
		cp -L --parents "$f" "$I/payload/"
	done
done
(cd "$I" && find . | cpio -o -H newc -R 0:0 --quiet) > "$T/initrd"
[ "${VM_DEBUG:-0}" = 1 ] && echo "vm: initramfs $(du -k "$T/initrd" | cut -f1) KiB" >&2

# KVM only when it is a real one; PVM (kvm_pvm) runs stock kernels too slowly.
if [ -z "${VM_ACCEL:-}" ]; then
	if [ -w /dev/kvm ] && [ ! -d /sys/module/kvm_pvm ]; then VM_ACCEL=kvm; else VM_ACCEL=tcg; fi
fi
if [ "$VM_ACCEL" = kvm ]; then
	accel=(-accel kvm -cpu host)
else
	accel=(-accel tcg -cpu max)
fi
append="console=ttyS0 reboot=t panic=-1 rdinit=/init"
# Under TCG the guest's TSC is the host's.  Its calibration against the PIT
# times out on a loaded host, and the guest then hangs in early boot: give
# the frequency (tsc_early_khz skips the calibration).
if [ "$VM_ACCEL" = tcg ]; then
	khz=$(awk -F: '/^cpu MHz/ { printf "%d", $2 * 1000; exit }' /proc/cpuinfo)
	[ -n "$khz" ] && [ "$khz" -gt 0 ] && append+=" tsc_early_khz=$khz tsc=reliable"
fi
if [ "${VM_DEBUG:-0}" = 1 ]; then append+=" agentsbx.vmdebug"; else append+=" quiet loglevel=1"; fi
timeout=${VM_TIMEOUT:-300}

set +e
timeout -k 5 "$timeout" "$QEMU" -M microvm "${accel[@]}" -smp 1 -m "${VM_MEM:-1024}" \
	-nodefaults -no-user-config -display none -no-reboot \
	-chardev stdio,id=con,signal=off -serial chardev:con \
	-fsdev "local,id=share,path=$share,security_model=none,multidevs=remap" \
	-device virtio-9p-device,fsdev=share,mount_tag=share \
	-kernel "$kernel" -initrd "$T/initrd" -append "$append" </dev/null 2>&1 |
	awk -v status_file="$T/status" '
		{ sub(/\r$/, "") }
		!done && (i = index($0, "AGENTSBX-VM-EXIT=")) {
			if (i > 1) print substr($0, 1, i - 1)
			print substr($0, i + 17) + 0 > status_file
			done = 1; next
		}
		!done { print; fflush() }'
rcs=("${PIPESTATUS[@]}")
set -e
if [ -s "$T/status" ]; then
	rc=$(cat "$T/status")
elif [ "${rcs[0]}" = 124 ] || [ "${rcs[0]}" = 137 ]; then
	echo "vm: timed out after ${timeout}s"
	rc=124
else
	echo "vm: the guest stopped before the command finished (qemu status ${rcs[0]})"
	rc=125
fi
echo "vm: exit status $rc"
exit "$rc"
