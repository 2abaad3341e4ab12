#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The cgroup unit tests on a pure cgroup v2 host: builds them here, boots
# the guest once (tests/vm/vmrun.sh) and runs every one of them there.
# Exits non-zero when one fails; 77 (skipped, loudly) when QEMU is missing.
#
#   tests/vm/run-cgroup2-tests.sh [TEST_BINARY...]
#   BUILD=build (the Makefile's build dir)  VM_TIMEOUT=300
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
vm_runner_setup

if [ $# -gt 0 ]; then
	tests=("$@")
else
	tests=()
	for src in tests/unit/test_cgroup*.c; do
		tests+=("$BUILD/tests/unit/$(basename "$src" .c)")
	done
	make -s BUILD="$BUILD" "${tests[@]}" "$BUILD/agentsbx" >&2
fi
AGENTSBX=$BUILD/agentsbx
# The binaries run from the share (same path as here); their libraries
# are copied into the guest.
# setpriv and shadow's uid helpers for the rootless tests (the guest has
# busybox only).
ROOTLESS_BINS="/usr/bin/setpriv /usr/bin/newuidmap /usr/bin/newgidmap"
export VM_BINS="${tests[*]} $AGENTSBX $ROOTLESS_BINS"
export VM_TIMEOUT=${VM_TIMEOUT:-300}

script='rc=0
echo "guest: $(uname -r), cgroup2 controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
for t in "$@"; do
	echo "== $t"
	start=$(cut -d" " -f1 /proc/uptime)
	if "$t"; then r=ok; else r="FAILED ($?)"; rc=1; fi
	echo "== $t: $r in $(awk -v s="$start" "{ printf \"%.1f s\", \$1 - s }" /proc/uptime)"
done
echo "== containers on cgroup v2 (tests/vm/container-tests.sh)"
sh "$CONTAINER_TESTS" "$AGENTSBX" || rc=1
echo "== rootless with a delegated cgroup (tests/vm/rootless-tests.sh)"
sh "$ROOTLESS_TESTS" "$AGENTSBX" $ROOTLESS_BINS || rc=1
exit $rc'
exec "$HERE/vmrun.sh" -- env CONTAINER_TESTS="$HERE/container-tests.sh" \
	ROOTLESS_TESTS="$HERE/rootless-tests.sh" ROOTLESS_BINS="$ROOTLESS_BINS" AGENTSBX="$AGENTSBX" \
	sh -c "$script" guest "${tests[@]}"
