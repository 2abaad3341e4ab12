# SPDX-License-Identifier: Apache-2.0
#
# What the two QEMU guests share (sourced, bash): tests/vm/vmrun.sh (the
# busybox guest, pure cgroup v2) and tests/vm/systemd/vmrun-systemd.sh (the
# guest booted with systemd), and their test runners
# (tests/vm/run-cgroup2-tests.sh, tests/vm/systemd/run-systemd-tests.sh).
#
# VM_LIB_DIR is this directory (tests/vm).

VM_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VM_REPO=$(cd "$VM_LIB_DIR/../.." && pwd)
QEMU=${QEMU:-qemu-system-x86_64}

# The runners: cd to the repository, BUILD made absolute (the Makefile's
# build dir, default build).
vm_runner_setup() {
	cd "$VM_REPO"
	BUILD=${BUILD:-build}
	case "$BUILD" in /*) ;; *) BUILD=$VM_REPO/$BUILD ;; esac
}

# Exit 77 (skipped, with a banner) when QEMU is missing.  $1: the guest.
vm_require_qemu() {
	command -v "$QEMU" >/dev/null 2>&1 && return 0
	cat >&2 <<-EOF
	########################################################################
	# SKIPPED: $QEMU is not installed, $1 cannot run.
	# Install it with: apt-get install --no-install-recommends qemu-system-x86
	########################################################################
	EOF
	exit 77
}

# Sets kernel and moddir: Debian's kernel (get-kernel.sh, cached) or VM_KDIR.
vm_kernel() {
	local kdir
	kdir=${VM_KDIR:-$("$VM_LIB_DIR/get-kernel.sh")}
	kernel=$kdir/vmlinux
	[ -f "$kernel" ] || kernel=$(ls "$kdir"/root/boot/vmlinuz-* | tail -1)
	moddir=$(ls -d "$kdir"/root/lib/modules/* | tail -1)
}

# Copies the modules named in $2... with their dependencies (read from
# .modinfo: no depmod needed) into $1/modules, dependencies first, and lists
# them in $1/modules/order.  Needs moddir (vm_kernel).
vm_add_modules() {
	local dest=$1 f n m
	shift
	declare -gA vm_modpath=() vm_modseen=()
	while read -r f; do
		n=${f##*/}
		n=${n%.ko}
		vm_modpath[${n//-/_}]=$f
	done < <(find "$moddir/kernel" -name '*.ko')
	mkdir -p "$dest/modules"
	touch "$dest/modules/order"
	for m in "$@"; do _vm_add_module "$dest" "$m"; done
}

_vm_add_module() {
	local dest=$1 m=${2//-/_} d
	[ -n "${vm_modseen[$m]:-}" ] && return
	vm_modseen[$m]=1
	[ -n "${vm_modpath[$m]:-}" ] || return 0 # built in
	for d in $(tr '\0' '\n' < "${vm_modpath[$m]}" | sed -n 's/^depends=//p' | tr ',' ' '); do
		_vm_add_module "$dest" "$d"
	done
	cp "${vm_modpath[$m]}" "$dest/modules/$m.ko"
	echo "$m" >> "$dest/modules/order"
}

# Writes into $1 what the guest's init reads: cmd (the command $2..., quoted
# for sh), share-path (VM_SHARE, default the repository), cwd (the current
# directory when it is inside the share) and env (VM_ENV).  Sets share.
vm_write_command() {
	local dir=$1 a kv
	shift
	{ printf 'exec'; for a in "$@"; do printf " '%s'" "${a//\'/\'\\\'\'}"; done; echo; } > "$dir/cmd"
	share=$(realpath "${VM_SHARE:-$VM_REPO}")
	echo "$share" > "$dir/share-path"
	case "$PWD/" in "$share"/*) echo "$PWD" ;; *) echo "$share" ;; esac > "$dir/cwd"
	: > "$dir/env"
	for kv in ${VM_ENV:-}; do printf "export '%s'\n" "${kv//\'/}" >> "$dir/env"; done
}

# Copies the ldd libraries of each program in VM_BINS under $1 (at their
# host paths); with $2 = self, the programs too.
vm_copy_libs() {
	local dest=$1 self=${2:-} b f
	for b in ${VM_BINS:-}; do
		for f in ${self:+"$b"} $(ldd "$b" 2>/dev/null | grep -o '/[^ ]*' || true); do
			cp -L --parents "$f" "$dest/"
		done
	done
}

# Prints the kernel arguments that give a TCG guest the TSC frequency: its
# TSC is the host's, and its calibration against the PIT times out on a
# loaded host (the guest then hangs in early boot); tsc_early_khz skips it.
vm_tsc_args() {
	local khz
	khz=$(awk -F: '/^cpu MHz/ { printf "%d", $2 * 1000; exit }' /proc/cpuinfo)
	if [ -n "$khz" ] && [ "$khz" -gt 0 ]; then echo " tsc_early_khz=$khz tsc=reliable"; fi
}

# Runs QEMU ($2...) under `timeout $1`, the console on stdout until the
# guest's init prints AGENTSBX-VM-EXIT=N; sets rc to N, 124 on timeout, 125
# when the guest stopped before the command finished.  Needs T (a temp dir).
vm_run_qemu() {
	local timeout=$1 rcs
	shift
	set +e
	timeout -k 5 "$timeout" "$QEMU" "$@" </dev/null 2>&1 |
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
}
