#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# In the cgroup v2 guest (bench/run.sh boots it with tests/vm/vmrun.sh):
# the suite, then the profile, each under a child subreaper, results on the
# share (RAW, the host's build/bench), scratch space on the guest's tmpfs.
set -u
echo "guest: $(uname -r), cgroup2 controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
# BUDGET: seconds for both; the profile keeps PROFILE_RESERVE of them.
t0=$(date +%s)
# The binaries the cases exec, in the guest's memory as runc and crun are
# (VM_BINS): the share is 9p with cache=none, and a binary run from it
# reads its pages from the host on every start (18 major faults in
# agentsbx's config parse alone, 10-40 ms under TCG).
BIN=/run/agentsbx-bench-bin
mkdir -p $BIN
cp "$AGENTSBX" "$BENCHDRV" "$(dirname "$BENCHDRV")/cgplace" $BIN/
export AGENTSBX=$BIN/$(basename "$AGENTSBX") BENCHDRV=$BIN/$(basename "$BENCHDRV")
export CGPLACE=$BIN/cgplace
export OUT=$RAW/vm STAGE=$RAW/stage WORK=/run/agentsbx-bench
DEADLINE=$((t0 + ${BUDGET:-100000} - ${PROFILE_RESERVE:-60})) \
	"$SUBREAPER" --wait-all "$(dirname "$0")/suite.sh" vm
rc=$?
OUT=$RAW/vm/profile WORK=/run/agentsbx-bench-profile DEADLINE=$((t0 + ${BUDGET:-100000} - 5)) \
	"$SUBREAPER" --wait-all "$(dirname "$0")/profile.sh" vm || rc=$?
exit $rc
