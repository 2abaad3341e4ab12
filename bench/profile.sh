#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Where agentsbx's case-1 time goes (`run` of /bin/true, default spec), in
# one environment; bench/report.py turns the raw files into the report's
# profile section.  Run as root, under a child subreaper.
#
#   OUT=dir STAGE=dir WORK=dir BENCHDRV=path AGENTSBX=path bench/profile.sh ENVNAME
#
#  1. ablation (hyperfine, ROUNDS rounds of PROFILE_RUNS): the same run with
#     parts of the spec taken away,
#     the process start alone (--version), and the floor with and without
#     the network namespace: the difference between two rows is what that
#     part costs, kernel work included;
#  2. the cgroup placement alone (bench/tools/cgplace, 20 ms apart): mkdir +
#     fork + rmdir, + migration (write to cgroup.procs), or what agentsbx
#     does (born in cgroup2, "0" into each v1 tasks file by the child);
#  3. strace -c (syscall counts) and strace -f -ttt -T -y (one traced run
#     of every runtime: the phases, and the cgroup/mount/state syscalls);
#  4. perf (where perf works): where the CPU time goes over 50 runs,
#     kernel entry points and shared objects.
set -uo pipefail

ENVNAME=${1:?usage: profile.sh host|vm}
: "${OUT:?}" "${STAGE:?}" "${WORK:?}" "${BENCHDRV:?}" "${AGENTSBX:?}"
RUNS=${PROFILE_RUNS:-20}
WARMUP=${WARMUP:-2}
ROUNDS=${PROFILE_ROUNDS:-2}
CGPLACE=${CGPLACE:-$(dirname "$BENCHDRV")/cgplace}
RUNC=${RUNC:-/usr/sbin/runc} CRUN=${CRUN:-/usr/bin/crun}
UNSHARE=${UNSHARE:-/usr/bin/unshare} TRUE=${TRUE:-/bin/true}
PREFIX=abxb
log() { echo "profile[$ENVNAME]: $*" >&2; }
# DEADLINE (epoch seconds, optional): no step starts after it.
past_deadline() {
	[ -n "${DEADLINE:-}" ] && [ "$(date +%s)" -ge "$DEADLINE" ] || return 1
	echo "$1" >> "$OUT/skipped.txt"
	log "time budget spent: $1 skipped"
}
T0=$(date +%s)

mkdir -p "$OUT" "$WORK"
B=$WORK/bundles
for n in base nonet pidmnt nosys nomask; do
	mkdir -p "$B/$n"
	cp -a "$STAGE/rootfs" "$B/$n/rootfs"
	cp "$STAGE/config-$n.json" "$B/$n/config.json"
done
echo '{"mode": "off"}' > "$WORK/policy-off.json"
POL=""
"$AGENTSBX" --help 2>&1 | grep -q -- '--policy' && POL="--policy $WORK/policy-off.json"
A="$AGENTSBX --root $WORK/root-agentsbx $POL"
mkdir -p "$WORK/root-agentsbx" "$WORK/root-runc" "$WORK/root-crun"
declare -A RT=([agentsbx]="$A" [runc]="$RUNC --root $WORK/root-runc" [crun]="$CRUN --root $WORK/root-crun")
AVAIL=()
for n in agentsbx runc crun; do
	if ${RT[$n]} run -b "$B/base" "$PREFIX-pprobe" >/dev/null 2>&1 </dev/null; then
		AVAIL+=("$n")
	else
		${RT[$n]} delete -f "$PREFIX-pprobe" >/dev/null 2>&1
	fi
done

# 1. ablation
hf() { # NAME CMD ...: one hyperfine each (a failing one loses only its row),
	# in ROUNDS rounds with the order rotated, as suite.sh does
	local -a names=() cmds=()
	while [ $# -gt 0 ]; do names+=("$1"); cmds+=("$2"); shift 2; done
	local n=${#names[@]} r k i w
	for ((r = 1; r <= ROUNDS; r++)); do
		for ((k = 0; k < n; k++)); do
			i=$(((k + r - 1) % n))
			[ -e "$OUT/ablation.$i.failed" ] && continue
			past_deadline "ablation ${names[i]} round $r" && continue
			w=$WARMUP; [ "$r" -gt 1 ] && w=0
			hyperfine -N --style none --runs "$RUNS" --warmup "$w" \
				--export-json "$OUT/ablation.$i.r$r.json" -n "${names[i]}" "${cmds[i]}" >"$WORK/hf.out" 2>&1 ||
				{ log "ablation: ${names[i]}: $(tail -c 300 "$WORK/hf.out")"
				  { echo "${names[i]}"; tail -c 300 "$WORK/hf.out"; } > "$OUT/ablation.$i.failed"
				  rm -f "$OUT/ablation.$i.r$r.json"; }
		done
	done
}
hf "full: default spec" "$A run -b $B/base $PREFIX-p1" \
   "no network namespace" "$A run -b $B/nonet $PREFIX-p1" \
   "pid + mount namespaces only" "$A run -b $B/pidmnt $PREFIX-p1" \
   "no /sys, /sys/fs/cgroup mounts" "$A run -b $B/nosys $PREFIX-p1" \
   "no masked/read-only paths" "$A run -b $B/nomask $PREFIX-p1" \
   "process start only (agentsbx --version)" "$AGENTSBX --version" \
   "process start, a static binary (benchdrv nop)" "$BENCHDRV nop" \
   "floor: unshare (5 namespaces)" "$UNSHARE --fork --pid --mount --uts --ipc --net $TRUE" \
   "floor: unshare, no network namespace" "$UNSHARE --fork --pid --mount --uts --ipc $TRUE"
log "ablation done ($(($(date +%s) - T0)) s)"

# 2. cgroup placement alone, 10 containers' worth per run, 20 ms apart
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	CG=(/sys/fs/cgroup)                            # pure v2
else
	CG=()                                          # hybrid: cgroup2 first, then every v1 hierarchy
	# (bench/run.sh may have unmounted the cgroup2 one: then v1 only)
	[ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ] && CG=(/sys/fs/cgroup/unified)
	for d in /sys/fs/cgroup/*/; do
		d=${d%/}
		[ "$d" = /sys/fs/cgroup/unified ] || CG+=("$d")
	done
fi
echo "${CG[*]}" > "$OUT/cgplace.dirs"
past_deadline cgplace ||
CGPLACE_GAP_MS=20 hyperfine -N --style none --runs 5 --warmup 1 --export-json "$OUT/cgplace.json" \
	-n none "$CGPLACE none 10 ${CG[*]}" \
	-n migrate "$CGPLACE migrate 10 ${CG[*]}" \
	-n born "$CGPLACE born 10 ${CG[*]}" >"$WORK/hf.out" 2>&1 ||
	{ log "cgplace failed: $(tail -c 300 "$WORK/hf.out")"; cp "$WORK/hf.out" "$OUT/cgplace.failed"; }
find /sys/fs/cgroup -depth -type d -name "$PREFIX-cgp-*" -exec rmdir {} \; 2>/dev/null
log "cgplace done ($(($(date +%s) - T0)) s)"

# 3. strace
if command -v strace >/dev/null 2>&1; then
	for n in "${AVAIL[@]}"; do
		past_deadline "strace $n" && continue
		${RT[$n]} run -b "$B/base" "$PREFIX-p3" >/dev/null 2>&1 </dev/null # warm
		strace -f -qq -c -S calls -o "$OUT/strace-c.$n.txt" \
			${RT[$n]} run -b "$B/base" "$PREFIX-p3" >/dev/null 2>&1 </dev/null
		strace -f -q -ttt -T -y -s 64 -o "$OUT/strace.$n.trace" \
			${RT[$n]} run -b "$B/base" "$PREFIX-p3" >/dev/null 2>&1 </dev/null
	done
	echo "$WORK/root-" > "$OUT/strace.rootprefix"
	log "strace done ($(($(date +%s) - T0)) s)"
fi

# 4. perf (the host: the guest has no perf for its kernel)
if [ "$ENVNAME" = host ] && perf stat -e task-clock true >/dev/null 2>&1; then
	perf record -q -F 10000 -g -o "$WORK/perf.data" -- \
		"$BENCHDRV" seq 50 "$PREFIX-p4" "$B/base" -- $A >/dev/null 2>&1
	perf report -i "$WORK/perf.data" --comm agentsbx --no-children --sort dso --stdio -g none 2>/dev/null |
		grep '%' > "$OUT/perf-dso.txt"
	perf report -i "$WORK/perf.data" --comm agentsbx --no-children --sort sym --stdio -g none 2>/dev/null |
		grep '%' | head -40 > "$OUT/perf-sym.txt"
	perf report -i "$WORK/perf.data" --comm agentsbx --children --sort sym --stdio -g none 2>/dev/null |
		grep -E '\[k\] (__x64_sys_|__do_sys_|__se_sys_|asm_exc_page_fault|do_exit|copy_namespaces|copy_net_ns|setup_net|cgroup_mkdir|cgroup_rmdir|cgroup_attach_task|cgroup_procs_write|mntput|cleanup_mnt|free_nsproxy|exit_mmap|load_elf_binary|begin_new_exec)' |
		head -40 > "$OUT/perf-kernel.txt"
	perf report -i "$WORK/perf.data" --sort comm --stdio -g none 2>/dev/null | grep '%' > "$OUT/perf-comm.txt"
	# the callers of the heaviest kernel paths, for the report's reading
	perf report -i "$WORK/perf.data" --comm agentsbx --no-children --sort dso --stdio \
		-g caller,0.5,callee --percent-limit 5 2>/dev/null | head -300 > "$OUT/perf-callgraph.txt"
	log "perf done ($(($(date +%s) - T0)) s)"
fi

# leave nothing behind
for n in agentsbx runc crun; do
	for id in $(${RT[$n]} list -q 2>/dev/null); do ${RT[$n]} delete -f "$id" >/dev/null 2>&1; done
done
find /sys/fs/cgroup -depth -type d -name "$PREFIX-*" -exec rmdir {} \; 2>/dev/null
rm -rf "${WORK:?}"
echo "$(($(date +%s) - T0))" > "$OUT/duration.txt"
log "done ($(($(date +%s) - T0)) s)"
