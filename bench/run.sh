#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# `make bench`: agentsbx, runc and crun (Debian's) on the same bundles, in
# the same run, on this host and in a pure cgroup v2 guest (tests/vm), with
# hyperfine; then the report and the chart under bench/results/.
#
#   bench/run.sh            everything (about 15 minutes on a 2-core machine)
#   BENCH_VM=0 bench/run.sh this host only
#   BENCH_HOST=0 ...        the guest only (the host's last raw results are reused)
#   BENCH_SANDBOX=0 ...     without case 9 (bench/sandbox.sh: sandbox vs docker run)
#   BENCH_PYTHON=0 ...      without case 9's Python table (tests/python's print(1) latency)
#   BENCH_MCP_HTTP=0 ...    without case 10 (bench/mcp_http.py: MCP over HTTP vs stdio)
#   BENCH_EGRESS=0 ...      without case 11 (bench/egress.py: egress by name under load)
#   BENCH_DENSITY=0 ...     without case 13 (bench/density.py: 1,000 CLI sessions at once)
#   bench/run.sh --report   only rewrite the report from the last raw results
#
# Raw results: build/bench/{host,vm}/.  Run as root (containers, cgroups).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
cd "$REPO"
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$REPO/$BUILD ;; esac
RAW=$BUILD/bench
PY=/usr/bin/python3
# Every case's policy decisions into a log of the run's own, never the
# default /var/log/agentsbx/policy.log.
export AGENTSBX_POLICY_LOG=${AGENTSBX_POLICY_LOG:-$RAW/policy.log}
T0=$(date +%s)

report() {
	"$PY" "$HERE/report.py" "$RAW" "$HERE/results"
}
if [ "${1:-}" = --report ]; then report; exit; fi

[ "$(id -u)" = 0 ] || { echo "bench: run as root (containers, cgroups)" >&2; exit 1; }

# ---- what it needs (Debian packages, `make deps` installs them) --------------
need=() # program:package
for p in hyperfine:hyperfine gnuplot:gnuplot-nox /usr/bin/time:time runc:runc crun:crun \
	 strace:strace unshare:util-linux busybox:busybox-static; do
	command -v "${p%%:*}" >/dev/null 2>&1 || need+=("${p#*:}")
done
[ -x "$PY" ] || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
	echo "bench: missing: ${need[*]} (apt-get install --no-install-recommends ${need[*]}, or make deps)" >&2
	exit 1
fi

# ---- build -------------------------------------------------------------------
# make gets the build directory as the Makefile names it (relative to the
# repository): the .d files name their targets that way, and with an
# absolute BUILD no header change would rebuild anything (stale objects:
# a struct changed in a header, a binary that crashed).
make -s BUILD="${BUILD#"$REPO"/}" agentsbx tools >&2
mkdir -p "$RAW"
for t in benchdrv cgplace; do
	cc -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -static -o "$RAW/$t" "$HERE/tools/$t.c"
done
SUBREAPER=$BUILD/tests/tools/subreaper
# A private copy: others may rebuild ./agentsbx (in place) while this runs.
cp "$REPO/agentsbx" "$RAW/agentsbx.tmp" && mv -f "$RAW/agentsbx.tmp" "$RAW/agentsbx"
AGENTSBX=$RAW/agentsbx
{
	echo "commit=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "uncommitted=$(git -C "$REPO" status --porcelain --untracked-files=no -- cmd lib spec runtime hooks Makefile 2>/dev/null | wc -l)"
} > "$RAW/source.txt"
"$PY" "$HERE/prepare.py" "$RAW/stage"
# tests/sandbox's Python image (built with debootstrap, under its lock, if
# missing): case 12 in the suite, cases 9 and 13.
PYIMAGE=$("$PY" -c 'import sys; sys.path.insert(0, sys.argv[1])
from sbx_helpers import debootstrap_image
print(debootstrap_image("python", "python3") or "")' "$REPO/tests/sandbox" 2>/dev/null || true)

elapsed() { echo $(($(date +%s) - T0)); }

# ---- this host ---------------------------------------------------------------
if [ "${BENCH_HOST:-1}" = 1 ]; then
	WORK=$(mktemp -d /tmp/agentsbx-bench.XXXXXX)
	# tmpfs, as /run is on a normal host: --root state and bundles off the disk
	mount -t tmpfs -o size=512m,mode=0700 agentsbx-bench "$WORK"
	trap 'umount -l "$WORK" 2>/dev/null; rmdir "$WORK" 2>/dev/null' EXIT
	rm -rf "$RAW/host" && mkdir -p "$RAW/host"
	echo "bench: this host ($(elapsed) s)" >&2
	# crun 1.8.1 refuses a hybrid host whose cgroup2 holds a controller.
	# It runs in a private mount namespace without the cgroup2 mount (the
	# host's mounts are untouched); every runtime and the floor run in
	# that same namespace, so that all three are measured the same way.
	# A throw-away tmpfs takes the mount point's place: crun then writes
	# "cgroup.procs" files under /sys/fs/cgroup/unified, which would
	# otherwise land in the host's /sys/fs/cgroup tmpfs (hidden under
	# the real cgroup2 mount, but there).
	INNS=()
	if [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ] &&
	   [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" != cgroup2fs ]; then
		INNS=(unshare -m --propagation private -- /bin/sh -c
		      'umount /sys/fs/cgroup/unified && mount -t tmpfs -o size=4m,mode=0755 bench-no-cgroup2 /sys/fs/cgroup/unified && exec "$@"' inns)
		export BENCH_MOUNTNS="hybrid host: unshare -m, then umount /sys/fs/cgroup/unified (crun 1.8.1 refuses the cgroup2 mount that holds hugetlb) and a throw-away tmpfs in its place; the v1 hierarchies are unchanged, the host's mounts untouched"
	fi
	OUT=$RAW/host STAGE=$RAW/stage WORK=$WORK/suite BENCHDRV=$RAW/benchdrv AGENTSBX=$AGENTSBX \
	PYIMAGE=$PYIMAGE "${INNS[@]}" "$SUBREAPER" --wait-all "$HERE/suite.sh" host
	OUT=$RAW/host/profile STAGE=$RAW/stage WORK=$WORK/profile BENCHDRV=$RAW/benchdrv AGENTSBX=$AGENTSBX \
		"${INNS[@]}" "$SUBREAPER" --wait-all "$HERE/profile.sh" host
	unset BENCH_MOUNTNS
	umount -l "$WORK" && rmdir "$WORK"
	trap - EXIT
	# case 9: print(1) end to end, every way (bench/sandbox.sh, bench/mcp_latency.py)
	if [ "${BENCH_SANDBOX:-1}" = 1 ]; then
		echo "bench: sandbox latency ($(elapsed) s)" >&2
		OUT=$RAW/host/sandbox AGENTSBX=$AGENTSBX \
			"$SUBREAPER" --wait-all "$HERE/sandbox.sh" ||
			{ rc=$?; mkdir -p "$RAW/host/sandbox"; echo "bench/sandbox.sh: exit status $rc" > "$RAW/host/sandbox/not-run.txt"; }
	fi
	# case 9, from Python: the tutorial's print(1) latency (tests/python:
	# a limited subprocess, docker run with runc and agentsbx, Sandbox.run,
	# a warm Session.run_code); its own pytest process, as make python-test
	if [ "${BENCH_PYTHON:-1}" = 1 ]; then
		echo "bench: Python latency ($(elapsed) s)" >&2
		mkdir -p "$RAW/host/python" && rm -f "$RAW/host/python/latency.md"
		PY_LATENCY_OUT=$RAW/host/python/latency.md AGENTSBX=$AGENTSBX \
			"$PY" -m pytest -q -p no:cacheprovider tests/python/test_tables.py -k latency >&2 ||
			echo "tests/python/test_tables.py -k latency: exit status $?" > "$RAW/host/python/not-run.txt"
	fi
	# case 10: `agentsbx mcp` over Streamable HTTP against stdio; runs/s of 20 clients
	if [ "${BENCH_MCP_HTTP:-1}" = 1 ]; then
		echo "bench: mcp over http ($(elapsed) s)" >&2
		OUT=$RAW/host/mcp_http AGENTSBX=$AGENTSBX \
			"$SUBREAPER" --wait-all "$PY" "$HERE/mcp_http.py" ||
			{ rc=$?; mkdir -p "$RAW/host/mcp_http"; echo "bench/mcp_http.py: exit status $rc" > "$RAW/host/mcp_http/not-run.txt"; }
	fi
	# case 13: density, 1,000 CLI sessions at once (their --root on a tmpfs, as /run)
	if [ "${BENCH_DENSITY:-1}" = 1 ]; then
		echo "bench: density ($(elapsed) s)" >&2
		rm -rf "$RAW/host/density" && mkdir -p "$RAW/host/density"
		if [ -z "$PYIMAGE" ]; then
			echo "no python image (debootstrap could not build it)" > "$RAW/host/density/not-run.txt"
		else
			DS=$(mktemp -d /tmp/agentsbx-bench-density.XXXXXX)
			mount -t tmpfs -o size=256m,mode=0700 agentsbx-bench-density "$DS"
			OUT=$RAW/host/density AGENTSBX=$AGENTSBX IMAGE_ROOT=$(dirname "$PYIMAGE") STATE=$DS \
				"$SUBREAPER" --wait-all "$PY" "$HERE/density.py" ||
				{ rc=$?; echo "bench/density.py: exit status $rc" > "$RAW/host/density/not-run.txt"; }
			umount "$DS" && rmdir "$DS"
		fi
	fi
	# case 11: egress by name under load (bench/egress.py, the tests' fake internet):
	# last, its 100 containers x 20 connections load the machine for a while
	if [ "${BENCH_EGRESS:-1}" = 1 ]; then
		echo "bench: egress by name ($(elapsed) s)" >&2
		OUT=$RAW/host/egress AGENTSBX=$AGENTSBX \
			"$SUBREAPER" --wait-all "$PY" "$HERE/egress.py" >&2 ||
			{ rc=$?; mkdir -p "$RAW/host/egress"; echo "bench/egress.py: exit status $rc" > "$RAW/host/egress/not-run.txt"; }
	fi
fi

# ---- the pure cgroup v2 guest ----------------------------------------------------
if [ "${BENCH_VM:-1}" = 1 ]; then
	rm -rf "$RAW/vm" && mkdir -p "$RAW/vm"
	echo "bench: the cgroup v2 guest ($(elapsed) s)" >&2
	if [ ! -x "$REPO/tests/vm/vmrun.sh" ]; then
		echo "tests/vm/vmrun.sh is missing" > "$RAW/vm/not-run.txt"
	else
		# Under TCG a container costs 10-50x what it costs here: fewer
		# runs (the ratios are the figures).  The guest gets what is left
		# of the 15 minutes: BUDGET for the measurements (no case starts
		# after it), a hard timeout a little later.
		left=$((${BENCH_SECONDS:-900} - $(elapsed)))
		[ "$left" -lt 180 ] && left=180
		rc=0
		VM_TIMEOUT=$left VM_MEM=2048 \
		VM_CGROUP_ENABLE="+memory +pids +cpu +io +cpuset" \
		VM_ENV="RUNS1=6 GAP1=0 RUNS2=2 RUNS3=2 RUNS4=1 N4=20 RUNS5=1 N5=20 RUNS6=2 RUNS7=2 ROUNDS=3
			ROUNDS45=2 RUNC_CASES=c1,c6,c7 WARMUP=1 MEM_ATTEMPTS=7 TIMEOUT=30
			PROFILE_RUNS=6 PROFILE_ROUNDS=2 BUDGET=$((left - 25)) PROFILE_RESERVE=90
			RAW=$RAW BENCHDRV=$RAW/benchdrv AGENTSBX=$AGENTSBX SUBREAPER=$SUBREAPER" \
		VM_BINS="$AGENTSBX /usr/sbin/runc /usr/bin/crun /usr/bin/hyperfine /usr/bin/time
			 /usr/bin/unshare /bin/true /bin/bash /usr/bin/strace /usr/bin/timeout /bin/date" \
			"$REPO/tests/vm/vmrun.sh" -- /bin/bash "$HERE/guest.sh" 2>&1 |
			sed -u 's/^/  vm| /' >&2 || rc=$?
		echo "guest: exit status $rc" > "$RAW/vm/vmrun.txt"
	fi
fi

report
echo "bench: done in $(elapsed) s: $HERE/results/report.md, $HERE/results/chart.png" >&2
