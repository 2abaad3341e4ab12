#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Run one command in a throw-away QEMU guest booted with systemd as init
# (pure cgroup v2, as systemd mounts it on bookworm).
#
#   tests/vm/systemd/vmrun-systemd.sh [--] CMD [ARGS...]
#
# The root is a Debian bookworm ext4 image (build-image.sh, cached) on
# virtio-blk with snapshot=on, so that nothing the guest does is kept.  A
# small busybox initramfs loads virtio_blk/ext4/9p (the kernel is Debian's,
# tests/vm/get-kernel.sh, cached), mounts the image and switch_roots to
# /lib/systemd/systemd.  Once the boot is done, agentsbx-test.service mounts
# the repository (or VM_SHARE) over virtio-9p at its host path and runs the
# command (as root, in the current directory when it is in the share).
# Prints
#   vm: exit status N
# and exits with N: the command's status, 124 on timeout, 125 when the guest
# failed before the command ran, 77 (with a banner) when QEMU is missing.
#
# Environment:
#   VM_TIMEOUT=600        seconds before the guest is killed
#   VM_MEM=1024           guest memory, MiB
#   VM_SHARE=DIR          directory shared with the guest (default: the repo)
#   VM_BINS="a b"         host programs whose ldd libraries the guest lacks
#   VM_ENV="K=V K2=V2"    variables exported to the command
#   VM_DEBUG=1            kernel and systemd messages on the console
#   VM_APPEND="..."       more kernel arguments, e.g.
#                         systemd.unified_cgroup_hierarchy=0 (a hybrid host)
#   VM_IMAGE=FILE         the root image (default: build-image.sh's)
#   AGENTSBX_VM_CACHE     kernel and image cache (default /var/cache/agentsbx-vm)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
# crc32c_generic: ext4 asks the crypto API for it (no modinfo dependency).
MODULES="virtio_mmio virtio_blk crc32c_generic ext4 9pnet_virtio 9p overlay"

[ "${1:-}" = -- ] && shift
[ $# -ge 1 ] || { echo "usage: $0 [--] CMD [ARGS...]" >&2; exit 2; }

vm_require_qemu "the systemd guest"
vm_kernel
image=${VM_IMAGE:-$("$HERE/build-image.sh")}

T=$(mktemp -d /tmp/agentsbx-sdvm.XXXXXX)
trap 'rm -rf "$T"' EXIT
I=$T/initramfs
C=$T/ctl
mkdir -p "$I/bin" "$I/modules" "$I/newroot" "$C/root"
cp /bin/busybox "$I/bin/busybox"
cp "$HERE/init" "$I/init"
chmod 755 "$I/init"
vm_add_modules "$I" $MODULES
(cd "$I" && find . | cpio -o -H newc -R 0:0 --quiet) > "$T/initrd"

# The control share: the command and its surroundings, the libraries of
# VM_BINS the guest lacks.
vm_write_command "$C" "$@"
vm_copy_libs "$C/root"

# TCG: this host's /dev/kvm is PVM, on which stock kernels crawl.  One vCPU
# (two hung now and then under TCG).
append="console=ttyS0 reboot=t panic=-1 rdinit=/init agentsbx.cmd"
append+=$(vm_tsc_args)
if [ "${VM_DEBUG:-0}" = 1 ]; then
	append+=" agentsbx.vmdebug systemd.show_status=1"
else
	append+=" quiet loglevel=1 systemd.show_status=0 rd.udev.log_level=3"
fi
append+=" ${VM_APPEND:-}"
timeout=${VM_TIMEOUT:-600}

start=$(date +%s)
vm_run_qemu "$timeout" -M microvm -accel tcg -cpu max -smp 1 -m "${VM_MEM:-1024}" \
	-nodefaults -no-user-config -display none -no-reboot \
	-chardev stdio,id=con,signal=off -serial chardev:con \
	-drive "file=$image,if=none,id=root,format=raw,snapshot=on" \
	-device virtio-blk-device,drive=root \
	-fsdev "local,id=ctl,path=$C,security_model=none,multidevs=remap" \
	-device virtio-9p-device,fsdev=ctl,mount_tag=vmctl \
	-fsdev "local,id=share,path=$share,security_model=none,multidevs=remap" \
	-device virtio-9p-device,fsdev=share,mount_tag=share \
	-kernel "$kernel" -initrd "$T/initrd" -append "$append"
echo "vm: $(( $(date +%s) - start )) s in the guest"
echo "vm: exit status $rc"
exit "$rc"
