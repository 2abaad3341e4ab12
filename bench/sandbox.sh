#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Case 9 of `make bench`: print(1) in Python and `echo 1` in sh, end to end,
# every way this host has to run it, in one run:
#
#   bare        chroot IMAGE python3 -c 'print(1)'         the interpreter alone
#   sandbox     agentsbx sandbox --image python -- ...      one call, default policy
#   session     agentsbx session run NAME -- ...            in an open CLI session
#   docker-runc docker run --rm --runtime runc --network none IMAGE ...
#   docker-agentsbx  the same with --runtime agentsbx (default policy)
#   docker-runsc     the same with --runtime runsc (gVisor)
#   runsc       runsc run of a bundle whose root is the image (read-only)
#
# with hyperfine (ROUNDS rounds, the order rotated each round), then the
# MCP rows (bench/mcp_latency.py: run_code cold and warm, median and p95,
# runs/s with 1, 4 and 16 callers).
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
# rootfs `docker import`ed, with the runtimes agentsbx (its built-in
# policy, the audit log ours) and runsc.  agentsbx's state roots are on a
# tmpfs of the run's own, as /run is on a normal host (this VM's /run is
# ext4, where each file made costs an inode search among the recently
# deleted ones).  At the end dockerd is stopped by its pid and everything
# it made is removed; what was left is written to $OUT/leftovers.txt.
#
# Knobs: ROUNDS (3) x RUNS (5) runs per command, WARMUP (2) per round;
# BENCH_MCP=0 skips the MCP rows (MCP_RUNS, MCP_SECONDS, MCP_WARM: see
# bench/mcp_latency.py).  Writes $OUT/sandbox.NAME.rN.json (hyperfine),
# $OUT/mcp_latency.json, $OUT/env.txt, $OUT/leftovers.txt, or
# $OUT/not-run.txt with the reason.
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
RUNSC=${BENCH_RUNSC:-/usr/bin/runsc}
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
STATE=$TMP/state
SESSION=bench-$$
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
	"$AGENTSBX" --root "$STATE" session close "$SESSION" >/dev/null 2>&1
	# (before the tmpfs they are on goes)
	extra=$(ls -A "$STATE" 2>/dev/null | grep -v -e '^\.seccomp-cache$' -e '^\.sessions$' -e '^mcp-' | tr '\n' ' ')
	[ -n "$extra" ] && left+=("agentsbx state left: $extra")
	[ -n "$(ls -A "$STATE/.sessions" 2>/dev/null)" ] && left+=("sessions left: $(ls -A "$STATE/.sessions")")
	for m in "$STATE"/mcp-*; do
		[ -d "$m" ] && [ -n "$(ls -A "$m" | grep -v '^\.')" ] && left+=("MCP state left: $(ls -A "$m")")
	done
	[ -n "$(ls -A "$TMP/runsc-root" 2>/dev/null)" ] && left+=("runsc state left: $(ls -A "$TMP/runsc-root")")
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
		case "$mp" in "$D/data" | "$STATE") ;; *) left+=("mount: $mp") ;; esac
		umount "$mp" 2>/dev/null || umount -l "$mp"
	done
	for c in $(cgroup_dirs); do
		find "$c" -mindepth 1 -type d 2>/dev/null | grep -q . && left+=("cgroups under $c: $(find "$c" -mindepth 1 -type d | tr '\n' ' ')")
		find "$c" -depth -type d -exec rmdir {} + 2>/dev/null
		[ -d "$c" ] && left+=("cgroup could not be removed: $c")
	done
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
# agentsbx's state roots on a tmpfs, as /run is on a normal host
mount -t tmpfs -o size=256m,mode=0700 agentsbx-bench-state "$STATE"

# agentsbx under Docker: its built-in policy, the bind sources of this run's
# dockerd allowed (as tests/e2e does), the audit log ours (dockerd does not
# pass its environment on to the runtime).
echo '{}' > "$TMP/policy-empty.json"
"$PY" - "$AGENTSBX" "$TMP" "$AGENTSBX_POLICY_LOG" > "$TMP/policy-docker.json" <<'PYEOF'
import json, subprocess, sys
agentsbx, tmp, log = sys.argv[1:4]
p = json.loads(subprocess.run([agentsbx, "--policy", tmp + "/policy-empty.json", "policy", "show"],
                              capture_output=True, check=True).stdout)
print(json.dumps({"bindPrefixes": p["bindPrefixes"] + [tmp], "auditLog": log}))
PYEOF
RUNTIMES="\"agentsbx\": {\"path\": \"$AGENTSBX\", \"runtimeArgs\": [\"--policy\", \"$TMP/policy-docker.json\"]}"
# (runsc's own network stack, none: docker's --network none netns is not
# there yet when runsc sets up its sandbox)
[ -x "$RUNSC" ] && RUNTIMES="$RUNTIMES, \"runsc\": {\"path\": \"$RUNSC\", \"runtimeArgs\": [\"--network=none\"]}"
cat > "$D/daemon.json" <<EOF
{"deprecated-key-path": "$D/key.json", "runtimes": {$RUNTIMES}}
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

# ---- the commands --------------------------------------------------------------------
# NAME -> command line, for Python (py-) and sh (sh-).
declare -A CMD=()
NAMES=()
add() { CMD[$1]=$2; NAMES+=("$1"); }
q() { local s="" a; for a in "$@"; do s+=" $(printf '%q' "$a")"; done; echo "${s# }"; }
PYC=(python3 -c 'print(1)')
SHC=(sh -c 'echo 1')
"$AGENTSBX" --root "$STATE" session create --image-root "$IMAGE_ROOT" --image python \
	"$SESSION" >/dev/null 2>"$OUT/session.err" || notrun "agentsbx session create failed: $(tail -3 "$OUT/session.err")"
# a runsc bundle: the image itself, read-only, as the root
mkdir -p "$TMP/runsc-root" "$TMP/runsc-py" "$TMP/runsc-sh"
for l in py sh; do
	"$PY" - "$IMG" "$l" > "$TMP/runsc-$l/config.json" <<'PYEOF'
import json, shutil, subprocess, sys, tempfile
img, lang = sys.argv[1:3]
d = tempfile.mkdtemp()
subprocess.run(["runc", "spec", "-b", d], check=True)
c = json.load(open(d + "/config.json"))
shutil.rmtree(d)
c["root"] = {"path": img, "readonly": True}
c["process"]["terminal"] = False
c["process"]["args"] = ["python3", "-c", "print(1)"] if lang == "py" else ["sh", "-c", "echo 1"]
c["hostname"] = "bench"
print(json.dumps(c))
PYEOF
done
for l in py sh; do
	if [ $l = py ]; then c=("${PYC[@]}"); else c=("${SHC[@]}"); fi
	add "$l-bare" "$(q chroot "$IMG" "${c[@]}")"
	add "$l-sandbox" "$(q "$AGENTSBX" --root "$STATE" sandbox --image-root "$IMAGE_ROOT" --image python -- "${c[@]}")"
	add "$l-session" "$(q "$AGENTSBX" --root "$STATE" session run "$SESSION" -- "${c[@]}")"
	add "$l-docker-runc" "$(q "$DOCKER" run --rm --runtime runc --network none "$IMAGE" "${c[@]}")"
	add "$l-docker-agentsbx" "$(q "$DOCKER" run --rm --runtime agentsbx --network none "$IMAGE" "${c[@]}")"
	if [ -x "$RUNSC" ]; then
		add "$l-docker-runsc" "$(q "$DOCKER" run --rm --runtime runsc --network none "$IMAGE" "${c[@]}")"
		add "$l-runsc" "$(q "$RUNSC" --root "$TMP/runsc-root" --network=none run -bundle "$TMP/runsc-$l" "abxs-$l-$$")"
	fi
done
# Each must print 1; one that cannot run here is left out, with why.
: > "$OUT/unavailable.txt"
OK=()
for n in "${NAMES[@]}"; do
	if o=$(bash -c "${CMD[$n]}" 2>"$OUT/check.$n.err" </dev/null) && [ "$o" = 1 ]; then
		OK+=("$n")
	else
		echo "$n: printed '${o:-}'; $(tail -c 300 "$OUT/check.$n.err" | tr '\n' ' ')" >> "$OUT/unavailable.txt"
		echo "bench/sandbox: $n does not run here: $(tail -c 200 "$OUT/check.$n.err")" >&2
	fi
done
printf '%s\n' "${OK[@]}" > "$OUT/commands.txt"
for n in "${NAMES[@]}"; do echo "cmd_$n=${CMD[$n]}"; done > "$OUT/commands-full.txt"
{
	echo "agentsbx=$("$AGENTSBX" --version 2>/dev/null | head -1)"
	echo "docker=$("$DOCKER" version --format '{{.Server.Version}}') (dockerd $DOCKERD, runc $(runc --version | head -1 | awk '{print $3}'))"
	[ -x "$RUNSC" ] && echo "runsc=$("$RUNSC" --version 2>/dev/null | head -1)"
	echo "image=$IMG ($(du -sm "$IMG" | cut -f1) MB)"
	echo "rounds=$ROUNDS runs=$RUNS warmup=$WARMUP"
	echo "date=$(date -u +%Y-%m-%dT%H:%MZ)"
	echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/env.txt"

# ---- the measurement: rounds whose order rotates -------------------------------------
n_ok=${#OK[@]}
for r in $(seq "$ROUNDS"); do
	echo "bench/sandbox: round $r/$ROUNDS" >&2
	for ((k = 0; k < n_ok; k++)); do
		n=${OK[$(((k + r - 1) % n_ok))]}
		hyperfine -N -i --style none --runs "$RUNS" --warmup "$WARMUP" \
			--export-json "$OUT/sandbox.$n.r$r.json" -n "$n" "${CMD[$n]}" >/dev/null 2>&1 ||
			echo "bench/sandbox: $n: hyperfine failed (round $r)" >&2
	done
done
echo "loadavg_hyperfine_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/env.txt"

# ---- agentsbx mcp: run_code cold and warm (bench/mcp_latency.py) ---------------------
if [ "${BENCH_MCP:-1}" = 1 ]; then
	echo "bench/sandbox: agentsbx mcp run_code, cold and warm" >&2
	OUT=$OUT AGENTSBX=$AGENTSBX IMAGE_ROOT=$IMAGE_ROOT STATE=$STATE \
		timeout 600 "$PY" "$HERE/mcp_latency.py" 2>"$OUT/mcp.err" ||
		echo "bench/mcp_latency.py: exit status $? ($(tail -c 300 "$OUT/mcp.err"))" > "$OUT/mcp.failed"
fi
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/env.txt"
echo "bench/sandbox: done" >&2
