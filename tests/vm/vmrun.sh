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
. "$HERE/lib.sh"
MODULES="virtio_mmio 9pnet_virtio 9p overlay"

[ "${1:-}" = -- ] && shift
[ $# -ge 1 ] || { echo "usage: $0 [--] CMD [ARGS...]" >&2; exit 2; }

vm_require_qemu "the cgroup v2 guest"
vm_kernel

T=$(mktemp -d /tmp/agentsbx-vm.XXXXXX)
trap 'rm -rf "$T"' EXIT
I=$T/initramfs
mkdir -p "$I/bin" "$I/modules" "$I/payload/vm"
cp /bin/busybox "$I/bin/busybox"
cp "$HERE/init" "$I/init"
chmod 755 "$I/init"
vm_add_modules "$I" $MODULES

# The command and its surroundings; the programs of VM_BINS with their
# libraries.
vm_write_command "$I/payload/vm" "$@"
echo "${VM_CGROUP_ENABLE:-}" > "$I/payload/vm/cgroup-enable"
vm_copy_libs "$I/payload" self
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
[ "$VM_ACCEL" = tcg ] && append+=$(vm_tsc_args)
if [ "${VM_DEBUG:-0}" = 1 ]; then append+=" agentsbx.vmdebug"; else append+=" quiet loglevel=1"; fi
timeout=${VM_TIMEOUT:-300}

vm_run_qemu "$timeout" -M microvm "${accel[@]}" -smp 1 -m "${VM_MEM:-1024}" \
	-nodefaults -no-user-config -display none -no-reboot \
	-chardev stdio,id=con,signal=off -serial chardev:con \
	-fsdev "local,id=share,path=$share,security_model=none,multidevs=remap" \
	-device virtio-9p-device,fsdev=share,mount_tag=share \
	-kernel "$kernel" -initrd "$T/initrd" -append "$append"
echo "vm: exit status $rc"
exit "$rc"
