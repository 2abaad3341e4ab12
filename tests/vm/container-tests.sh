#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Cgroup behaviour of real containers, the same checks on a pure cgroup v2
# host (inside the guest, by run-cgroup2-tests.sh) and on a v1/hybrid host
# (this one, by tests/integration/test_cgroup_behaviour.py).  busybox sh
# only.  Each check prints "ok NAME" or "FAIL NAME: why"; the exit status is
# the number of failures.
#
#   container-tests.sh AGENTSBX_BINARY
set -u
A=$1
W=$(mktemp -d /tmp/agentsbx-ct.XXXXXX)
R=$W/root
T=ct$$   # container ids are $T-NAME: concurrent runs do not collide
B=$W/bundle
fails=0
mkdir -p "$B/rootfs/bin" "$B/rootfs/proc" "$B/rootfs/sys" "$B/rootfs/dev" "$B/rootfs/tmp" "$R"
cp -L "$(which busybox)" "$B/rootfs/bin/busybox"
for a in sh sleep cat head tail tr seq true cut dd; do ln -sf busybox "$B/rootfs/bin/$a"; done
echo '{"mode": "off"}' > $W/off.json
# 64 MiB in a shell variable; a fork flood (its shell dies when fork fails).
printf '%s\n' 'x=$(head -c 67108864 /dev/zero | tr "\\0" a)' > "$B/rootfs/bin/grab.sh"
printf '%s\n' 'for i in $(seq 64); do sleep 5 & done' > "$B/rootfs/bin/bomb.sh"

ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }
rt() { "$A" --root "$R" --policy $W/off.json "$@"; }

# config.json with the given args (a JSON array) and resources (a JSON object).
spec() {
	cat > "$B/config.json" <<EOF
{ "ociVersion": "1.0.2",
  "process": { "terminal": false, "user": {"uid": 0, "gid": 0}, "args": $1,
    "env": ["PATH=/bin"], "cwd": "/", "noNewPrivileges": true },
  "root": {"path": "rootfs"},
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid","mode=755"]},
    {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid","noexec","nodev","ro"]},
    {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup", "options": ["nosuid","noexec","nodev","rw"]}
  ],
  "linux": { "namespaces": [{"type":"pid"},{"type":"mount"},{"type":"ipc"},{"type":"uts"},{"type":"network"},{"type":"cgroup"}],
    "resources": $2 } }
EOF
}

# The cgroup files of container NAME, v2 or v1, as numbers or text.
if [ -d /sys/fs/cgroup/memory ]; then V2=0; else V2=1; fi
cg() { echo "/sys/fs/cgroup/agentsbx/$T-$1"; }
cg1() { echo "/sys/fs/cgroup/$1/agentsbx/$T-$2"; }
oom_kills() { if [ $V2 = 1 ]; then grep '^oom_kill ' "$(cg $1)/memory.events"; else grep '^oom_kill ' "$(cg1 memory $1)/memory.oom_control"; fi | cut -d' ' -f2; }
pids_current() { if [ $V2 = 1 ]; then cat "$(cg $1)/pids.current"; else cat "$(cg1 pids $1)/pids.current"; fi; }
pids_max() { if [ $V2 = 1 ]; then cat "$(cg $1)/pids.max"; else cat "$(cg1 pids $1)/pids.max"; fi; }
procs() { if [ $V2 = 1 ]; then cat "$(cg $1)/cgroup.procs"; else cat "$(cg1 pids $1)/cgroup.procs"; fi; }
cpu_usec() { if [ $V2 = 1 ]; then grep usage_usec "$(cg $1)/cpu.stat" | cut -d' ' -f2; else echo $(( $(cat "$(cg1 cpuacct $1)/cpuacct.usage") / 1000 )); fi; }
throttled() { if [ $V2 = 1 ]; then grep nr_throttled "$(cg $1)/cpu.stat"; else grep nr_throttled "$(cg1 cpu $1)/cpu.stat"; fi | cut -d' ' -f2; }
cpu_max() { if [ $V2 = 1 ]; then cat "$(cg $1)/cpu.max"; else echo "$(cat "$(cg1 cpu $1)/cpu.cfs_quota_us") $(cat "$(cg1 cpu $1)/cpu.cfs_period_us")"; fi; }
mem_max() { if [ $V2 = 1 ]; then cat "$(cg $1)/memory.max"; else cat "$(cg1 memory $1)/memory.limit_in_bytes"; fi; }
mem_used() { if [ $V2 = 1 ]; then cat "$(cg $1)/memory.current"; else cat "$(cg1 memory $1)/memory.usage_in_bytes"; fi; }
has_cgroup() { if [ $V2 = 1 ]; then [ -d "$(cg $1)" ]; else [ -d "$(cg1 pids $1)" ] || [ -d "$(cg1 memory $1)" ]; fi; }
inside_mem_max() { if [ $V2 = 1 ]; then echo /sys/fs/cgroup/memory.max; else echo /sys/fs/cgroup/memory/memory.limit_in_bytes; fi; }

# 1. a 64 MiB allocation under a 32 MiB limit is OOM-killed; events says so
spec '["sh","-c","sleep 1; sh /bin/grab.sh; sleep 60"]' \
	'{"memory": {"limit": 33554432}}'
rt run -d -b "$B" "$T-oom" >/dev/null 2>&1 </dev/null
rt events --interval 200ms "$T-oom" > $W/events.out 2>&1 &
ev=$!
# (slow under TCG emulation: wait up to 60 s for the kill)
for i in $(seq 60); do
	n=$(oom_kills oom)
	[ "${n:-0}" -ge 1 ] && break
	sleep 1
done
sleep 1
kill $ev 2>/dev/null; wait $ev 2>/dev/null
if [ "${n:-0}" -ge 1 ] && grep -q '"type":"oom"' $W/events.out; then ok oom-kill-and-event
else fail oom-kill-and-event "oom_kill=${n:-?}, events: $(head -c 300 $W/events.out)"; fi
rt delete -f "$T-oom"

# 2. a fork bomb stops at pids.max
spec '["sh","-c","sh /bin/bomb.sh 2>/dev/null; sleep 5"]' '{"pids": {"limit": 16}}'
rt run -d -b "$B" "$T-bomb" >/dev/null 2>&1 </dev/null
sleep 1
cur=$(pids_current bomb); max=$(pids_max bomb)
if [ "$max" = 16 ] && [ "$cur" -le 16 ] && [ "$cur" -ge 10 ]; then ok fork-bomb-capped
else fail fork-bomb-capped "pids.current=$cur pids.max=$max"; fi
# ps --format json lists exactly the cgroup's pids
ps_json=$(rt ps --format json "$T-bomb" | tr -d '[]' | tr ',' '\n' | sort -n | tr '\n' ' ')
procs=$(procs bomb | sort -n | tr '\n' ' ')
if [ "$ps_json" = "$procs" ] && [ -n "$procs" ]; then ok ps-json-exact
else fail ps-json-exact "ps: '$ps_json' cgroup.procs: '$procs'"; fi
# delete --force with forked children leaves no cgroup
rt delete -f "$T-bomb"
if ! has_cgroup bomb; then ok delete-force-removes-cgroup
else fail delete-force-removes-cgroup "the cgroup of $T-bomb is still there"; fi

# 2b. exec into a container at its pids.max works, as with runc: a clone3
# into the full cgroup is refused (EAGAIN), so the process is moved in
spec '["sh","-c","sleep 1000 & sleep 1000 & sleep 1000 & wait"]' '{"pids": {"limit": 4}}'
rt run -d -b "$B" "$T-full" >/dev/null 2>&1 </dev/null
for i in 1 2 3 4 5 6 7 8 9 10; do [ "$(pids_current full)" = 4 ] && break; sleep 0.2; done
full=$(pids_current full)
ex=$(rt exec "$T-full" sh -c "echo inside" 2>&1)
if [ "$full" = 4 ] && [ "$ex" = inside ]; then ok exec-at-pids-max
else fail exec-at-pids-max "pids.current=$full before the exec; exec said: $ex"; fi
rt delete -f "$T-full"

# 3. a busy loop under a 20% quota is throttled
spec '["sh","-c","while :; do :; done"]' '{"cpu": {"quota": 20000, "period": 100000}}'
rt run -d -b "$B" "$T-busy" >/dev/null 2>&1 </dev/null
u0=$(cpu_usec busy)
sleep 2
u1=$(cpu_usec busy)
thr=$(throttled busy)
used=$(( (u1 - u0) / 20000 ))  # percent of one cpu over 2 s
if [ "$thr" -gt 0 ] && [ "$used" -le 30 ] && [ "$(cpu_max busy)" = "20000 100000" ]; then
	ok cpu-quota-throttles
else fail cpu-quota-throttles "nr_throttled=$thr used=${used}% cpu.max=$(cpu_max busy)"; fi

# 4. update changes a live limit, and the container sees it
rt update --memory 64m --pids-limit 32 "$T-busy"
seen=$(rt exec "$T-busy" cat "$(inside_mem_max)" 2>&1)
if [ "$(mem_max busy)" = 67108864 ] && [ "$seen" = 67108864 ] &&
	[ "$(pids_max busy)" = 32 ]; then ok update-live
else fail update-live "memory limit=$(mem_max busy) seen=$seen"; fi

# 5. pause freezes (usage stops growing), resume continues
rt pause "$T-busy"
st=$(rt state "$T-busy" | grep -c '"paused"')
a=$(cpu_usec busy); sleep 1
b=$(cpu_usec busy)
rt resume "$T-busy"; sleep 1
c=$(cpu_usec busy)
if [ "$st" = 1 ] && [ $((b - a)) -lt 5000 ] && [ $((c - b)) -gt 50000 ]; then ok pause-resume
else fail pause-resume "state-paused=$st frozen-delta=$((b - a))us resumed-delta=$((c - b))us"; fi
rt delete -f "$T-busy"

# 6. the container's cgroup namespace: its own cgroup is the root it sees
spec '["cat","/proc/self/cgroup"]' '{}'
out=$(rt run -b "$B" "$T-ns" </dev/null 2>&1)
# every hierarchy's line ends in ":/" (v2: the one "0::/" line)
if [ -n "$out" ] && ! echo "$out" | grep -v ':/$' | grep -q ':'; then ok cgroup-namespace-root
else fail cgroup-namespace-root "$out"; fi

# 7. under the built-in enforce policy ({} keeps every default), the
# unified keys a config.json may carry cannot lift the policy's limits
# (on a pure v2 host they are written after memory.max, pids.max, cpu.max)
echo '{}' > $W/default.json
spec '["sleep","30"]' '{"unified": {"memory.max": "max", "memory.swap.max": "max", "pids.max": "max", "cpu.max": "max 100000"}}'
"$A" --root "$R" --policy $W/default.json run -d -b "$B" "$T-uni" >$W/uni.out 2>&1 </dev/null
if [ "$(mem_max uni)" = 268435456 ] && [ "$(pids_max uni)" = 128 ] &&
	[ "$(cpu_max uni)" = "100000 100000" ]; then ok unified-cannot-undo-the-policy
else fail unified-cannot-undo-the-policy "memory=$(mem_max uni) pids=$(pids_max uni) cpu=$(cpu_max uni) $(head -c 300 $W/uni.out)"; fi
if [ $V2 = 1 ]; then
	sw=$(cat "$(cg uni)/memory.swap.max")
	if [ "$sw" = 0 ]; then ok unified-swap-stays-0; else fail unified-swap-stays-0 "memory.swap.max=$sw"; fi
fi
"$A" --root "$R" --policy $W/default.json delete -f "$T-uni"

# 8. realtime scheduling (issue 15): SCHED_FIFO is granted, on v1 with the
# realtime budget the spec asks for (agentsbx gives it to the parents it
# made; they start with 0); v2 has no realtime budget files.  Field 41 of
# /proc/self/stat is the policy (1: SCHED_FIFO).
if [ $V2 = 1 ]; then res='{}'; else res='{"cpu": {"realtimeRuntime": 10000, "realtimePeriod": 1000000}}'; fi
rtfile=/sys/fs/cgroup/cpu/agentsbx/cpu.rt_runtime_us
rtbefore=$(cat $rtfile 2>/dev/null)
spec '["cut","-d"," ","-f41","/proc/self/stat"]' "$res"
sed -i 's/"process": {/"process": { "scheduler": {"policy": "SCHED_FIFO", "priority": 1},/' "$B/config.json"
out=$(rt run -b "$B" "$T-rt" </dev/null 2>&1)
if [ "$out" = 1 ]; then ok realtime-fifo; else fail realtime-fifo "$out"; fi
# put the shared parent's budget back (a child going away may still hold it)
for i in 1 2 3 4 5 6 7 8 9 10; do
	[ -z "$rtbefore" ] && break
	echo "$rtbefore" > $rtfile 2>/dev/null && break
	sleep 0.2
done

# 9. the policy's writable layer (issue 17): code writes its working
# directory (the image is not written), 1-MiB files stop at the 32 MiB cap
# with ENOSPC, and the layer's pages are charged to the container's memory
# cgroup (it is a tmpfs: memory, not disk)
spec '["sh","-c","echo data > out.txt && cat out.txt > /tmp/wrote; i=0; while [ $i -lt 40 ]; do dd if=/dev/zero of=f.$i bs=1048576 count=1 2>>/tmp/dd.err || break; i=$((i+1)); done; echo $i > /tmp/files; sleep 30"]' '{}'
sed -i 's|"cwd": "/"|"cwd": "/app"|' "$B/config.json"
"$A" --root "$R" --policy $W/default.json run -d -b "$B" "$T-layer" >$W/layer.out 2>&1 </dev/null
for i in $(seq 60); do
	files=$(rt exec "$T-layer" cat /tmp/files 2>/dev/null) && break
	sleep 1
done
used=$(mem_used layer)
wrote=$(rt exec "$T-layer" cat /tmp/wrote 2>&1); enospc=$(rt exec "$T-layer" cat /tmp/dd.err 2>&1)
if [ "$wrote" = data ] && [ "${files:-0}" -ge 28 ] && [ "${files:-99}" -le 32 ] &&
	echo "$enospc" | grep -q "No space left" && [ "${used:-0}" -ge $((28 << 20)) ] &&
	[ ! -e "$B/rootfs/app" ]; then ok writable-layer-capped-and-charged
else fail writable-layer-capped-and-charged "wrote=$wrote files=$files memory=$used dd: $enospc $(head -c 300 $W/layer.out)"; fi
"$A" --root "$R" --policy $W/default.json delete -f "$T-layer"

# 10. under the built-in policy, an update *below* its caps is applied,
# with the resources as Docker sends them (`docker update --memory 100m
# --memory-swap 100m --cpus 0.5`: every field, the unset ones 0)
spec '["sleep","1000"]' '{}'
"$A" --root "$R" --policy $W/default.json run -d -b "$B" "$T-low" >$W/low.out 2>&1 </dev/null
printf '%s' '{"devices":[],"memory":{"limit":104857600,"reservation":0,"swap":104857600,"kernel":0,"kernelTCP":0},"cpu":{"shares":0,"quota":50000,"period":100000,"realtimeRuntime":0,"realtimePeriod":0,"cpus":"","mems":""},"pids":{"limit":0},"blockIO":{}}' |
	"$A" --root "$R" --policy $W/default.json update --resources - "$T-low" >$W/low.up 2>&1
if [ "$(mem_max low)" = 104857600 ] && [ "$(cpu_max low)" = "50000 100000" ]; then ok update-below-the-policy-cap
else fail update-below-the-policy-cap "memory=$(mem_max low) cpu=$(cpu_max low) $(head -c 300 $W/low.up)"; fi
"$A" --root "$R" --policy $W/default.json delete -f "$T-low"

left=$(ls "$R" | grep -v '^\.'; for n in oom bomb full busy ns uni rt layer low; do has_cgroup $n && echo "cgroup of $T-$n"; done)
if [ -z "$left" ]; then ok nothing-left; else fail nothing-left "$left"; fi
rm -rf "$W"
echo "container tests: $fails failed"
exit $fails
