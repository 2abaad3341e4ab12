#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The systemd cgroup manager in guests booted with systemd as init: builds
# agentsbx and tests/unit/test_cgroup_systemd here, then boots the guest
# (vmrun-systemd.sh; the image is built on first use, a few minutes) once
# per cgroup mode and runs the unit test and test-systemd.sh there:
#   unified  pure cgroup v2 (systemd's default on bookworm)
#   hybrid   v1 controllers + cgroup2 for systemd's own tracking
#            (systemd.unified_cgroup_hierarchy=0)
# Exits non-zero when a check fails; 77 (skipped, loudly) when QEMU is
# missing.
#
#   tests/vm/systemd/run-systemd-tests.sh
#   BUILD=build (the Makefile's build dir)  VM_TIMEOUT=600
#   SD_MODES="unified hybrid" (the default)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
vm_runner_setup
unit=$BUILD/tests/unit/test_cgroup_systemd
AGENTSBX=$BUILD/agentsbx

make -s BUILD="$BUILD" "$AGENTSBX" "$unit" >&2

export VM_BINS="$AGENTSBX $unit"
export VM_TIMEOUT=${VM_TIMEOUT:-600}
script='rc=0
echo "== $1"
"$1" || rc=1
echo "== containers with --systemd-cgroup (tests/vm/systemd/test-systemd.sh)"
sh "$2" "$3" || rc=1
exit $rc'
rc=0
for mode in ${SD_MODES:-unified hybrid}; do
	case $mode in
	unified) append= ;;
	hybrid) append=systemd.unified_cgroup_hierarchy=0 ;;
	*) echo "run-systemd-tests: unknown mode $mode" >&2; exit 2 ;;
	esac
	echo "######## systemd guest, cgroup mode: $mode"
	r=0
	VM_APPEND="$append" "$HERE/vmrun-systemd.sh" -- sh -c "$script" guest \
		"$unit" "$HERE/test-systemd.sh" "$AGENTSBX" || r=$?
	[ $r = 77 ] && exit 77
	[ $r = 0 ] || rc=1
done
exit $rc
