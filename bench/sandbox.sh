#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Case 9 of `make bench`: the latency of running print(1) in Python,
# `agentsbx sandbox` against `docker run --rm --runtime runc` of the same
# rootfs, side by side, with hyperfine; and `agentsbx mcp --warm` (one
# run_code call) from tests/sandbox/bench_sandbox.sh.
#
#   OUT=build/bench/host/sandbox AGENTSBX=./agentsbx bench/sandbox.sh
#
# The image is the test suite's cached Python rootfs
# ($AGENTSBX_TEST_CACHE/python, default /var/cache/agentsbx-test: Debian
# bookworm minbase + python3, made by debootstrap), built the way
# tests/sandbox does (under its lock) when it is missing.  Docker is a
# private dockerd started as tests/lib/engines.py starts it (own
# --data-root, --exec-root, --pidfile and socket under a temp dir; no
# bridge, no iptables; Debian's /usr/sbin/dockerd and its client), the same
# rootfs `docker import`ed.  At the end dockerd is stopped by its pid and
# everything it made is removed; what was left is written to
# $OUT/leftovers.txt.
#
# Knobs: ROUNDS (3) x RUNS (5) runs per command, WARMUP (2) per round,
# MCP_RUNS (15); BENCH_MCP=0 skips the MCP figure.
# Writes $OUT/sandbox.{agentsbx,docker}.rN.json (hyperfine), $OUT/mcp.txt,
# $OUT/env.txt, $OUT/leftovers.txt, or $OUT/not-run.txt with the reason.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
OUT=${OUT:-$REPO/build/bench/host/sandbox}
AGENTSBX=${AGENTSBX:-$REPO/agentsbx}
CACHE=${AGENTSBX_TEST_CACHE:-/var/cache/agentsbx-test}
DOCKERD=${BENCH_DOCKERD:-/usr/sbin/dockerd}
DOCKER=${BENCH_DOCKER:-/usr/bin/docker}
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-5}
WARMUP=${WARMUP:-2}
MCP_RUNS=${MCP_RUNS:-15}
PY=/usr/bin/python3

rm -rf "$OUT" && mkdir -p "$OUT"
# The decisions of the sandboxes measured go to a log of the run's own,
# never the host's /var/log/agentsbx/policy.log.
export AGENTSBX_POLICY_LOG=${AGENTSBX_POLICY_LOG:-$OUT/policy.log}
notrun() { echo "$*" > "$OUT/not-run.txt"; echo "bench/sandbox: not run: $*" >&2; exit 0; }

[ "$(id -u)" = 0 ] || notrun "needs root"
for b in "$DOCKERD" "$DOCKER" "$AGENTSBX"; do
	[ -x "$b" ] || notrun "$b is missing (apt-get install docker.io; make)"
done
command -v hyperfine >/dev/null || notrun "hyperfine is missing"

# ---- the Python rootfs: tests/sandbox's cache ------------------------------------
IMG=$("$PY" -c 'import sys; sys.path.insert(0, sys.argv[1])
from sbx_helpers import debootstrap_image
print(debootstrap_image("python", "python3") or "")' "$REPO/tests/sandbox")
[ -n "$IMG" ] && [ -d "$IMG" ] || notrun "no python image: debootstrap could not build it in $CACHE"
IMAGE_ROOT=$(dirname "$IMG")

# ---- a private dockerd -------------------------------------------------------------
TMP=$(mktemp -d /tmp/agentsbx-bench-sbx.XXXXXX)
chmod 755 "$TMP"
D=$TMP/docker
mkdir -p "$D/data" "$D/exec" "$TMP/state"
TAG=$(basename "$TMP" | tr -c 'a-zA-Z0-9\n' -)
# Absolute: a relative --cgroup-parent lands under dockerd's own cgroup,
# which on these machines is inside the machine's memory:/process_api.
CGP=/agentsbx-bench-$TAG-docker
IMAGE=agentsbx-bench-python:$TAG
HOST_PATHS=(/run/docker /run/containerd /run/agentsbx /etc/containerd /etc/docker /opt/containerd)
declare -A PRE
for p in "${HOST_PATHS[@]}"; do [ -e "$p" ] && PRE[$p]=1 || PRE[$p]=0; done
# (no /run/agentsbx yet is an empty listing, not a failed pipeline)
RUN_AGENTSBX_BEFORE=$( (ls -A /run/agentsbx 2>/dev/null || true) | sort | tr '\n' ' ')
export DOCKER_HOST=unix://$D/docker.sock DOCKER_CONFIG=$D/client
unset DOCKER_CONTEXT
DPID=

mounts_under() { awk -v p="$1/" 'index($5, p) == 1 {print $5}' /proc/self/mountinfo; }
pids_under() { # live processes whose argv mentions $1, not this shell
	local f pid
	for f in /proc/[0-9]*/cmdline; do
		pid=${f#/proc/}; pid=${pid%/cmdline}
		[ "$pid" = $$ ] && continue
		grep -qaF -- "$1" "$f" 2>/dev/null || continue
		[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = Z ] && continue
		echo "$pid"
	done
}
cgroup_dirs() { # every hierarchy's $CGP directory
	awk '$0 ~ / - cgroup2? / {print $5}' /proc/self/mountinfo | sort -u |
		while read -r h; do [ -d "$h$CGP" ] && echo "$h$CGP"; done; true
}

cleanup() {
	set +e
	local left=()
	if [ -n "$DPID" ] && kill -0 "$DPID" 2>/dev/null; then
		ids=$(timeout 60 "$DOCKER" ps -aq --no-trunc 2>/dev/null)
		[ -n "$ids" ] && timeout 90 "$DOCKER" rm -f $ids >/dev/null 2>&1
		timeout 60 "$DOCKER" rmi -f "$IMAGE" >/dev/null 2>&1
		kill -TERM "$DPID"
		for _ in $(seq 300); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
		kill -0 "$DPID" 2>/dev/null && { left+=("dockerd needed SIGKILL"); kill -KILL "$DPID"; }
		wait "$DPID" 2>/dev/null
	fi
	# dockerd stops its containerd; make sure, by pid (shims included)
	for pid in $(pids_under "$TMP"); do
		left+=("process left after dockerd stopped: $pid $(tr '\0' ' ' < /proc/$pid/cmdline 2>/dev/null)")
		kill -KILL "$pid" 2>/dev/null
	done
	sleep 0.2
	for mp in $(mounts_under "$TMP" | sort -r); do
		case "$mp" in "$D/data") ;; *) left+=("mount: $mp") ;; esac
		umount "$mp" 2>/dev/null || umount -l "$mp"
	done
	for c in $(cgroup_dirs); do
		find "$c" -mindepth 1 -type d 2>/dev/null | grep -q . && left+=("cgroups under $c: $(find "$c" -mindepth 1 -type d | tr '\n' ' ')")
		find "$c" -depth -type d -exec rmdir {} + 2>/dev/null
		[ -d "$c" ] && left+=("cgroup could not be removed: $c")
	done
	[ -n "$(ls -A "$TMP/state" 2>/dev/null | grep -v '^\.seccomp-cache$')" ] &&
		left+=("agentsbx state left: $(ls -A "$TMP/state")")
	now=$( (ls -A /run/agentsbx 2>/dev/null || true) | sort | tr '\n' ' ')
	[ "$now" != "$RUN_AGENTSBX_BEFORE" ] && left+=("/run/agentsbx changed: before [$RUN_AGENTSBX_BEFORE] after [$now]")
	# Engines make these outside their configured state.  Another engine
	# (a test suite's private dockerd) may run at the same time and own
	# them: then they are left alone, and said so.
	others=$(ps -eo pid=,comm= | awk '$2 ~ /^(dockerd|containerd|containerd-shim|podman|conmon)$/ {print $1}' | paste -sd, -)
	for p in "${HOST_PATHS[@]}"; do
		[ "${PRE[$p]}" = 1 ] || [ ! -e "$p" ] && continue
		if [ -n "$others" ]; then
			echo "$p appeared during the run while other engines ran (pids $others): left to them" >> "$OUT/notes.txt"
			continue
		fi
		if [ -z "$(find "$p" ! -type d 2>/dev/null)" ]; then rm -rf "$p"
		else left+=("$p was created during the run and is not empty"); fi
	done
	[ -z "$(mounts_under "$TMP")" ] && rm -rf "$TMP"
	[ -d "$TMP" ] && left+=("$TMP could not be removed")
	printf '%s\n' "${left[@]}" > "$OUT/leftovers.txt"
	sed -i '/^$/d' "$OUT/leftovers.txt"
	[ -s "$OUT/leftovers.txt" ] && { echo "bench/sandbox: left behind:" >&2; cat "$OUT/leftovers.txt" >&2; }
	return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cat > "$D/daemon.json" <<EOF
{"deprecated-key-path": "$D/key.json"}
EOF
"$DOCKERD" --config-file "$D/daemon.json" \
	--data-root "$D/data" --exec-root "$D/exec" --pidfile "$D/docker.pid" \
	--host "unix://$D/docker.sock" \
	--bridge none --iptables=false --ip6tables=false \
	--ip-forward=false --ip-masq=false --userland-proxy=false \
	--cgroup-parent "$CGP" --exec-opt native.cgroupdriver=cgroupfs \
	> "$D/dockerd.log" 2>&1 &
DPID=$!
ok=0
for _ in $(seq 300); do
	kill -0 "$DPID" 2>/dev/null || break
	if [ -S "$D/docker.sock" ] && timeout 20 "$DOCKER" version --format '{{.Server.Version}}' >/dev/null 2>&1; then
		ok=1; break
	fi
	sleep 0.2
done
if [ $ok = 0 ]; then
	tail -20 "$D/dockerd.log" >&2
	notrun "dockerd could not start (see above)"
fi
echo "bench/sandbox: importing $IMG into the private dockerd" >&2
tar -C "$IMG" --exclude=./.agentsbx-complete -cf - . |
	timeout 300 "$DOCKER" import --change 'CMD ["python3"]' - "$IMAGE" >/dev/null

A=("$AGENTSBX" --root "$TMP/state" sandbox --image-root "$IMAGE_ROOT" --image python -- python3 -c 'print(1)')
B=("$DOCKER" run --rm --runtime runc --network none "$IMAGE" python3 -c 'print(1)')
o=$("${A[@]}" 2>"$OUT/check.agentsbx.err") || notrun "agentsbx sandbox failed: $(tail -3 "$OUT/check.agentsbx.err")"
[ "$o" = 1 ] || notrun "agentsbx sandbox printed '$o', not 1"
o=$("${B[@]}" 2>"$OUT/check.docker.err") || notrun "docker run failed: $(tail -3 "$OUT/check.docker.err")"
[ "$o" = 1 ] || notrun "docker run printed '$o', not 1"
{
	echo "agentsbx=$("$AGENTSBX" --version 2>/dev/null | head -1)"
	echo "docker=$("$DOCKER" version --format '{{.Server.Version}}') (dockerd $DOCKERD, runc $(runc --version | head -1 | awk '{print $3}'))"
	echo "image=$IMG ($(du -sm "$IMG" | cut -f1) MB)"
	echo "rounds=$ROUNDS runs=$RUNS warmup=$WARMUP"
	echo "mcp_runs=$MCP_RUNS"
	echo "cmd_agentsbx=agentsbx sandbox --image-root $IMAGE_ROOT --image python -- python3 -c 'print(1)'"
	echo "cmd_docker=docker run --rm --runtime runc --network none IMAGE python3 -c 'print(1)'"
	echo "date=$(date -u +%Y-%m-%dT%H:%MZ)"
} > "$OUT/env.txt"

# ---- the measurement: rounds whose order alternates ----------------------------------
q() { local s="" a; for a in "$@"; do s+=" $(printf '%q' "$a")"; done; echo "${s# }"; }
for r in $(seq "$ROUNDS"); do
	order="agentsbx docker"; [ $((r % 2)) = 0 ] && order="docker agentsbx"
	for n in $order; do
		if [ $n = agentsbx ]; then c=$(q "${A[@]}"); else c=$(q "${B[@]}"); fi
		echo "bench/sandbox: round $r/$ROUNDS: $n" >&2
		hyperfine -N -i --style none --runs "$RUNS" --warmup "$WARMUP" \
			--export-json "$OUT/sandbox.$n.r$r.json" -n "$n" "$c" >/dev/null
	done
done

# ---- agentsbx mcp --warm: tests/sandbox/bench_sandbox.sh's figure ---------------------
if [ "${BENCH_MCP:-1}" = 1 ]; then
	echo "bench/sandbox: agentsbx mcp --warm ($MCP_RUNS calls)" >&2
	AGENTSBX=$AGENTSBX AGENTSBX_IMAGE_ROOT=$IMAGE_ROOT \
		timeout 300 "$REPO/tests/sandbox/bench_sandbox.sh" "$MCP_RUNS" > "$OUT/mcp.txt" 2>"$OUT/mcp.err" ||
		echo "failed: $(tail -1 "$OUT/mcp.err")" >> "$OUT/mcp.txt"
fi
echo "bench/sandbox: done" >&2
