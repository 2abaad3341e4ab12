#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# The benchmark cases, in one environment (this host, or the cgroup v2
# guest: bench/run.sh starts it in both).  Measures every runtime in
# RUNTIMES on the same bundles, in the same run, with hyperfine; writes raw
# results under OUT for bench/report.py.  Run it as root, under a child
# subreaper (bench/run.sh does both).
#
#   OUT=dir STAGE=dir WORK=dir BENCHDRV=path AGENTSBX=path bench/suite.sh ENVNAME
#
# STAGE holds rootfs/ (busybox-static) and the config.json of every bundle
# (bench/prepare.py writes them).  WORK is scratch space (bundles, private
# --root per runtime); everything under it is removed at the end, with every
# container, cgroup and mount the suite made.
#
# Knobs (defaults in brackets): runs per round RUNS1 [15] RUNS1S [8]
# RUNS2 [10] RUNS3 [8] RUNS4 [1] RUNS5 [2] RUNS6 [15]; N4 [100] N5 [50];
# RUNS7 [5]; GAP1 [20]: ms of idle before each run of case 1b (0: no 1b);
# MEM_ATTEMPTS [12]; ROUNDS [6], ROUNDS45 [3] (cases 4 and 5): each case is
# measured in rounds, the runtimes in a rotated order each round, so that a
# change of load on the machine does not land on one runtime only;
# WARMUP [1] (first round only in the guest); TIMEOUT [60] per attempt of
# the memory case; RUNC_CASES [all]: the cases runc takes part in (the
# guest leaves it out of the longest: runc costs 4-5x the others there and
# its figures for them are the host's); DEADLINE [none]: epoch seconds
# after which no measurement starts.  RUNSC [/usr/bin/runsc, if there]:
# gVisor, in the cases RUNSC_CASES [c1,c2,c12] only (a create costs it
# 20-40x the others: its figures for the rest would add minutes and tell
# nothing new).  PYIMAGE [none]: a Python root filesystem (tests/sandbox's
# image) for case 12, `run` of python3 -c 'print(1)' (host only).
set -uo pipefail

ENVNAME=${1:?usage: suite.sh host|vm}
: "${OUT:?}" "${STAGE:?}" "${WORK:?}" "${BENCHDRV:?}" "${AGENTSBX:?}"
RUNS1=${RUNS1:-15} RUNS1S=${RUNS1S:-8} GAP1=${GAP1:-20} RUNS2=${RUNS2:-10} RUNS3=${RUNS3:-8} RUNS4=${RUNS4:-1}
N4=${N4:-100} RUNS5=${RUNS5:-2} ROUNDS45=${ROUNDS45:-3} N5=${N5:-50} RUNS6=${RUNS6:-15} RUNS7=${RUNS7:-5}
MEM_ATTEMPTS=${MEM_ATTEMPTS:-12} ROUNDS=${ROUNDS:-6} WARMUP=${WARMUP:-1}
TIMEOUT=${TIMEOUT:-60}
RUNC=${RUNC:-/usr/sbin/runc} CRUN=${CRUN:-/usr/bin/crun} RUNC_CASES=${RUNC_CASES:-all}
RUNSC=${RUNSC:-/usr/bin/runsc} RUNSC_CASES=${RUNSC_CASES:-c1,c2,c12} PYIMAGE=${PYIMAGE:-}
UNSHARE=${UNSHARE:-/usr/bin/unshare} TRUE=${TRUE:-/bin/true}
GNUTIME=${GNUTIME:-/usr/bin/time}
PREFIX=abxb # every container id (and so every cgroup the runtimes name after it) starts with it

mkdir -p "$OUT" "$WORK"
log() { echo "bench[$ENVNAME]: $*" >&2; }
now() { date +%s.%N; }
T_START=$(now)

# ---- environment -----------------------------------------------------------
{
	echo "env=$ENVNAME"
	echo "kernel=$(uname -r)"
	echo "cpus=$(nproc)"
	echo "cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		echo "cgroups=v2 (unified: $(cat /sys/fs/cgroup/cgroup.controllers))"
	elif [ -f /sys/fs/cgroup/unified/cgroup.controllers ]; then
		echo "cgroups=hybrid (v1 controllers; cgroup2 at /sys/fs/cgroup/unified holds: $(cat /sys/fs/cgroup/unified/cgroup.controllers))"
	else
		echo "cgroups=v1"
	fi
	echo "agentsbx=$("$AGENTSBX" --version | tr '\n' ' ')"
	command -v ldd >/dev/null && echo "agentsbx_libs=$(ldd "$AGENTSBX" | awk '/=>/ { print $1 }' | tr '\n' ' ')"
	echo "runc=$("$RUNC" --version | head -1)"
	echo "crun=$("$CRUN" --version | head -1)"
	[ -x "$RUNSC" ] && echo "runsc=$("$RUNSC" --version 2>/dev/null | head -1) (platform: its default)"
	[ -n "$PYIMAGE" ] && echo "pyimage=$PYIMAGE"
	echo "hyperfine=$(hyperfine --version)"
	[ -n "${BENCH_MOUNTNS:-}" ] && echo "mountns=$BENCH_MOUNTNS"
	echo "n4=$N4"
	echo "gap1=$GAP1"
	echo "n5=$N5"
	echo "runc_cases=$RUNC_CASES"
	echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/env.txt"

# ---- bundles -----------------------------------------------------------------
B=$WORK/bundles
mkdir -p "$B"
for cfg in "$STAGE"/config-*.json; do
	name=${cfg##*/config-}; name=${name%.json}
	mkdir -p "$B/$name"
	cp -a "$STAGE/rootfs" "$B/$name/rootfs"
	cp "$cfg" "$B/$name/config.json"
done
# Case 12's bundle: the Python image bound read-only on its rootfs/ (in
# this suite's mount namespace: bench/run.sh starts it in one of its own;
# removed with the rest under WORK at the end).  Inside the bundle, as an
# engine's unpacked image is: the default policy takes no host directory
# as a root.
if [ -n "$PYIMAGE" ] && [ -d "$PYIMAGE" ]; then
	mkdir -p "$B/python/rootfs"
	if mount --bind "$PYIMAGE" "$B/python/rootfs" && mount -o remount,bind,ro "$B/python/rootfs"; then
		/usr/bin/python3 - "$STAGE/config-base.json" > "$B/python/config.json" <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["root"] = {"path": "rootfs", "readonly": True}
c["process"]["args"] = ["python3", "-c", "print(1)"]
print(json.dumps(c, indent=1))
PYEOF
	fi
fi
PIDDIR=$WORK/pids
mkdir -p "$PIDDIR"
# benchdrv's and the runtimes' stderr, for failures hyperfine would hide
export BENCHDRV_LOG=$OUT/benchdrv.log
: > "$BENCHDRV_LOG"

# ---- runtimes ----------------------------------------------------------------
# name -> command line (runtime + global options, private --root each).
declare -A RT=()
NAMES=()
echo '{"mode": "off"}' > "$WORK/policy-off.json"
add_rt() { RT[$1]=$2; NAMES+=("$1"); mkdir -p "$3"; }
if "$AGENTSBX" --help 2>&1 | grep -q -- '--policy'; then
	# Same work as runc and crun: the sandbox policy off.
	add_rt agentsbx "$AGENTSBX --root $WORK/root-agentsbx --policy $WORK/policy-off.json" "$WORK/root-agentsbx"
	HAVE_POLICY=1
else
	add_rt agentsbx "$AGENTSBX --root $WORK/root-agentsbx" "$WORK/root-agentsbx"
	HAVE_POLICY=0
fi
add_rt runc "$RUNC --root $WORK/root-runc" "$WORK/root-runc"
add_rt crun "$CRUN --root $WORK/root-crun" "$WORK/root-crun"
# runsc spells runc's -b, list -q and delete -f as -bundle, -quiet, -force;
# --network=none: its own network stack, with loopback only, as the
# others' empty network namespace.
if [ -x "$RUNSC" ]; then
	cat > "$WORK/runsc" <<EOF
#!/bin/sh
prev=
for a do
	shift
	case "\$prev:\$a" in
	*:-b) a=-bundle ;;
	list:-q) a=-quiet ;;
	delete:-f) a=-force ;;
	esac
	prev=\$a
	set -- "\$@" "\$a"
done
exec $RUNSC "\$@"
EOF
	chmod 755 "$WORK/runsc"
	add_rt runsc "$WORK/runsc --root $WORK/root-runsc --network=none" "$WORK/root-runsc"
fi
# agentsbx as shipped (its default sandbox policy on): case 1 only.
POLICY_RT="$AGENTSBX --root $WORK/root-agentsbx-policy"
mkdir -p "$WORK/root-agentsbx-policy"

# Probe: a runtime that cannot run a container here is left out, with why.
AVAIL=()
: > "$OUT/unavailable.txt"
for n in "${NAMES[@]}"; do
	if ${RT[$n]} run -b "$B/base" "$PREFIX-probe" >"$WORK/probe.out" 2>&1 </dev/null; then
		AVAIL+=("$n")
	else
		echo "$n: $(tr '\n' ' ' < "$WORK/probe.out" | cut -c1-300)" >> "$OUT/unavailable.txt"
		log "$n cannot run a container here: $(head -c 200 "$WORK/probe.out")"
		${RT[$n]} delete -f "$PREFIX-probe" >/dev/null 2>&1
	fi
done
if [ "$HAVE_POLICY" = 1 ]; then
	if $POLICY_RT run -b "$B/base" "$PREFIX-probe" >"$WORK/probe.out" 2>&1 </dev/null; then
		echo "agentsbx-policy" > "$OUT/policy-available.txt"
	else
		echo "agentsbx-policy: $(tr '\n' ' ' < "$WORK/probe.out" | cut -c1-300)" >> "$OUT/unavailable.txt"
	fi
fi
printf '%s\n' "${AVAIL[@]}" > "$OUT/runtimes.txt"
rts() { # CASE: the runtimes that take part in it
	local n
	for n in "${AVAIL[@]}"; do
		if [ "$n" = runc ] && [ "$RUNC_CASES" != all ]; then
			case ",$RUNC_CASES," in *",$1,"*) ;; *) continue ;; esac
		fi
		if [ "$n" = runsc ]; then
			case ",$RUNSC_CASES," in *",$1,"*) ;; *) continue ;; esac
		fi
		echo "$n"
	done
}
log "runtimes: ${AVAIL[*]}"

# ---- measuring ---------------------------------------------------------------
# DEADLINE (epoch seconds, optional): no measurement starts after it; what
# is left out is listed in OUT/skipped.txt (the guest has a time budget).
: > "$OUT/skipped.txt"
past_deadline() { # WHAT
	[ -n "${DEADLINE:-}" ] && [ "$(date +%s)" -ge "$DEADLINE" ] || return 1
	echo "$1" >> "$OUT/skipped.txt"
	log "time budget spent: $1 skipped"
}

# hf CASE RUNS NAME CMD [PREPARE]... : one hyperfine per command and round,
# so that one failing runtime does not take the others' figures with it;
# rounds rotate the order.  Raw JSON: OUT/CASE.NAME.rROUND.json.
hf() {
	local case=$1 runs=$2; shift 2
	local -a names=() cmds=() preps=()
	while [ $# -gt 0 ]; do names+=("$1"); cmds+=("$2"); preps+=("$3"); shift 3; done
	local n=${#names[@]} r i k w t0=$(now)
	for ((r = 1; r <= ROUNDS; r++)); do
		for ((k = 0; k < n; k++)); do
			i=$(((k + r - 1) % n))
			[ -e "$OUT/$case.${names[i]}.failed" ] && continue
			past_deadline "$case ${names[i]} round $r" && continue
			w=$WARMUP; [ "$ENVNAME" = vm ] && [ "$r" -gt 1 ] && w=0
			local -a prep=()
			[ -n "${preps[i]}" ] && prep=(--prepare "${preps[i]}")
			# -i: a failed run is kept, with its exit code, and counted
			# (report.py leaves its time out): one crash must not take
			# the whole case with it
			if ! hyperfine -N -i --style none --runs "$runs" --warmup "$w" "${prep[@]}" \
				--export-json "$OUT/$case.${names[i]}.r$r.json" -n "${names[i]}" \
				"${cmds[i]}" >"$WORK/hf.out" 2>&1; then
				log "$case ${names[i]}: failed: $(tail -c 300 "$WORK/hf.out")"
				tail -c 1000 "$WORK/hf.out" > "$OUT/$case.${names[i]}.failed"
				rm -f "$OUT/$case.${names[i]}.r$r.json"
			fi
		done
	done
	echo "$case $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')" >> "$OUT/durations.txt"
	log "$case done"
}

# Leave nothing behind between cases either: stray containers would skew
# the next case.
sweep_states() {
	local n id
	for n in "${NAMES[@]}"; do
		for id in $(${RT[$n]} list -q 2>/dev/null); do
			${RT[$n]} delete -f "$id" >/dev/null 2>&1
		done
	done
}

# 1 + 8. run /bin/true, default spec; the floor in the same window.
args=()
for n in $(rts c1); do args+=("$n" "${RT[$n]} run -b $B/base $PREFIX-c1" ""); done
[ -e "$OUT/policy-available.txt" ] &&
	args+=("agentsbx-policy" "$POLICY_RT run -b $B/base $PREFIX-c1" "")
args+=(floor "$UNSHARE --fork --pid --mount --uts --ipc --net $TRUE" "")
hf c1 "$RUNS1" "${args[@]}"
sweep_states

# 1b. the same with GAP1 ms of idle before each run: containers rarely start
# back to back, and a runtime that moves its init by cgroup.procs then
# waits for an RCU grace period each time (cgroup_threadgroup_rwsem; back
# to back, the previous run's may still be in force).  The sleep is
# hyperfine's --prepare: not in the times.
if [ "$GAP1" -gt 0 ] && [ "$GAP1" -lt 1000 ]; then
	gap=$(printf 'sleep 0.%03d' "$GAP1")
	args=()
	for n in $(rts c1s); do args+=("$n" "${RT[$n]} run -b $B/base $PREFIX-c1s" "$gap"); done
	args+=(floor "$UNSHARE --fork --pid --mount --uts --ipc --net $TRUE" "$gap")
	hf c1s "$RUNS1S" "${args[@]}"
	sweep_states
fi

# 2. create + start + wait + delete (benchdrv: the shim's part).
args=()
for n in $(rts c2); do
	args+=("$n" "$BENCHDRV cycle $PREFIX-c2 $B/base $PIDDIR -- ${RT[$n]}" "")
done
hf c2 "$RUNS2" "${args[@]}"
sweep_states

# 12. `run` of python3 -c 'print(1)' in the Python image (host only).
if [ -f "$B/python/config.json" ]; then
	args=()
	for n in $(rts c12); do args+=("$n" "${RT[$n]} run -b $B/python $PREFIX-c12" ""); done
	[ -e "$OUT/policy-available.txt" ] &&
		args+=("agentsbx-policy" "$POLICY_RT run -b $B/python $PREFIX-c12" "")
	hf c12 "$RUNS2" "${args[@]}"
	sweep_states
fi

# 3. the same with Docker's default seccomp profile and with the strict
# agent profile; agentsbx with its compiled-filter cache cold and warm.
for prof in docker strict; do
	args=()
	for n in $(rts c3); do
		if [ "$n" = agentsbx ]; then
			args+=("agentsbx-cold" "$BENCHDRV cycle $PREFIX-c3 $B/$prof $PIDDIR -- ${RT[$n]}"
			       "rm -rf $WORK/root-agentsbx/.seccomp-cache $WORK/root-agentsbx/seccomp-cache")
			args+=("agentsbx-warm" "$BENCHDRV cycle $PREFIX-c3 $B/$prof $PIDDIR -- ${RT[$n]}" "")
		else
			args+=("$n" "$BENCHDRV cycle $PREFIX-c3 $B/$prof $PIDDIR -- ${RT[$n]}" "")
		fi
	done
	hf "c3$prof" "$RUNS3" "${args[@]}"
	sweep_states
done

# 6. exec /bin/true (busybox's, in the rootfs) into a running container.
args=()
for n in $(rts c6); do
	if ${RT[$n]} run -d -b "$B/sleep" "$PREFIX-c6" </dev/null >/dev/null 2>"$WORK/c6.err"; then
		args+=("$n" "${RT[$n]} exec $PREFIX-c6 /bin/true" "")
	else
		echo "run -d failed: $(head -c 300 "$WORK/c6.err")" > "$OUT/c6.$n.failed"
	fi
done
hf c6 "$RUNS6" "${args[@]}"
for n in $(rts c6); do
	${RT[$n]} kill "$PREFIX-c6" KILL >/dev/null 2>&1
done
sleep 0.5
sweep_states

# 7a. peak RSS of the runtime process during create (GNU time).
t0=$(now)
for n in $(rts c7); do
	rm -f "$OUT/c7rss.$n.txt"
	past_deadline "c7rss $n" && continue
	for ((i = 0; i < RUNS7; i++)); do
		"$BENCHDRV" cycle "$PREFIX-c7" "$B/base" "$PIDDIR" "$OUT/c7rss.$n.txt" -- ${RT[$n]} \
			>/dev/null 2>>"$WORK/c7.err" </dev/null
	done
done
echo "c7rss $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')" >> "$OUT/durations.txt"
sweep_states

# 7b. the smallest linux.resources.memory.limit at which the container still
# runs: bisection (geometric, on 4 KiB pages) between 64 KiB and 32 MiB,
# at most MEM_ATTEMPTS attempts.
mem_try() { # RUNTIME-NAME LIMIT -> status
	local n=$1 lim=$2 id="$PREFIX-c7m-$2" rc
	[ -d "$WORK/mem-$n" ] || { mkdir -p "$WORK/mem-$n" && cp -a "$STAGE/rootfs" "$WORK/mem-$n/rootfs"; }
	sed "s/\"limit\": *123456789/\"limit\": $lim/" "$B/memory/config.json" > "$WORK/mem-$n/config.json"
	timeout -s KILL "$TIMEOUT" ${RT[$n]} run -b "$WORK/mem-$n" "$id" </dev/null >/dev/null 2>"$WORK/mem.err"
	rc=$?
	echo "$lim $rc $(tr '\n' ' ' < "$WORK/mem.err" | cut -c1-160)" >> "$OUT/c7mem.$n.log"
	${RT[$n]} delete -f "$id" >/dev/null 2>&1
	return $rc
}
isqrt() { # integer square root (busybox awk in the guest has no sqrt)
	local n=$1 x y
	[ "$n" -lt 2 ] && { echo "$n"; return; }
	x=$n; y=$(((x + 1) / 2))
	while [ "$y" -lt "$x" ]; do x=$y; y=$(((x + n / x) / 2)); done
	echo "$x"
}
t0=$(now)
for n in $(rts c7); do
	rm -f "$OUT/c7mem.$n.log"
	past_deadline "c7mem $n" && continue
	lo=65536 hi=33554432 tries=0 result=""
	if ! mem_try "$n" $hi; then
		result="> $hi"; tries=1
	elif mem_try "$n" $lo; then
		result="<= $lo"; tries=2
	else
		tries=2
		# lo fails, hi runs; stop at 1/32 precision or when out of attempts
		while [ $tries -lt "$MEM_ATTEMPTS" ] && [ $((hi - lo)) -gt 4096 ] &&
		      ! past_deadline "c7mem $n attempt $((tries + 1))" &&
		      [ $((hi * 32)) -gt $((lo * 33)) ]; do
			mid=$(( $(isqrt $((lo / 4096 * (hi / 4096)))) * 4096 ))
			[ "$mid" -le "$lo" ] && mid=$((lo + 4096))
			[ "$mid" -ge "$hi" ] && mid=$((hi - 4096))
			tries=$((tries + 1))
			if mem_try "$n" "$mid"; then hi=$mid; else lo=$mid; fi
		done
		result="$hi"
	fi
	echo "$result $lo $hi $tries" > "$OUT/c7mem.$n.txt"
	log "c7mem $n: $result (failing at $lo, $tries attempts)"
done
echo "c7mem $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')" >> "$OUT/durations.txt"
sweep_states

# Cases 4 and 5 last: the longest, and the first to go when time runs out.
# 4. N4 containers one after another.
args=()
for n in $(rts c4); do
	args+=("$n" "$BENCHDRV seq $N4 $PREFIX-c4 $B/base -- ${RT[$n]}" "")
done
SAVED_WARMUP=$WARMUP SAVED_ROUNDS=$ROUNDS; WARMUP=0 ROUNDS=$ROUNDS45
hf c4 "$RUNS4" "${args[@]}"
sweep_states

# 5. N5 containers started at once: total time, and failures.
args=()
for n in $(rts c5); do
	rm -f "$OUT/c5.$n.fail" "$OUT/c5.$n.fail.stderr"
	args+=("$n" "$BENCHDRV par $N5 $PREFIX-c5 $B/base $OUT/c5.$n.fail -- ${RT[$n]}" "")
done
hf c5 "$RUNS5" "${args[@]}"
WARMUP=$SAVED_WARMUP ROUNDS=$SAVED_ROUNDS
sweep_states

# ---- leave nothing behind ------------------------------------------------------
sweep_states
# case 12's image, bound on its rootfs/ (ours: not a leftover)
mountpoint -q "$B/python/rootfs" 2>/dev/null && umount "$B/python/rootfs"
leftover=""
for n in "${NAMES[@]}"; do
	ids=$(${RT[$n]} list -q 2>/dev/null | tr '\n' ' ')
	[ -n "${ids// /}" ] && leftover+="$n state: $ids; "
done
# Cgroups the runtimes named after our ids (deepest first).
# (cgroup filesystems only: bench/run.sh's throw-away tmpfs is not one)
cgs=$(find /sys/fs/cgroup -depth -type d -name "$PREFIX-*" 2>/dev/null |
      while read -r d; do case $(stat -f -c %T "$d") in cgroupfs|cgroup2fs) echo "$d" ;; esac; done)
for d in $cgs; do rmdir "$d" 2>/dev/null || leftover+="cgroup $d; "; done
[ -n "$cgs" ] && log "removed $(echo "$cgs" | wc -l) cgroup dirs left by the runtimes"
[ -n "$cgs" ] && echo "$cgs" > "$OUT/cgroups-removed.txt"
mnts=$(awk -v w="$WORK" 'index($5, w) == 1 { print $5 }' /proc/self/mountinfo)
for m in $(echo "$mnts" | sort -r); do umount -l "$m" 2>/dev/null; done
[ -n "$mnts" ] && leftover+="mounts: $(echo $mnts); "
echo "${leftover:-none}" > "$OUT/leftovers.txt"
rm -rf "${WORK:?}"/*
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/env.txt"
echo "total $(awk -v a="$T_START" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')" >> "$OUT/durations.txt"
log "done in $(awk -v a="$T_START" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }') s; leftovers: ${leftover:-none}"
