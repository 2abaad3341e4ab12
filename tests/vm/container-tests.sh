#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Cgroup behaviour of real containers on a pure cgroup v2 host: run inside
# the guest by run-cgroup2-tests.sh (busybox sh only).  Each check prints
# "ok NAME" or "FAIL NAME: why"; the exit status is the number of failures.
#
#   container-tests.sh AGENTSBX_BINARY
set -u
A=$1
W=/tmp/ctr
R=$W/root
B=$W/bundle
fails=0
mkdir -p "$B/rootfs/bin" "$B/rootfs/proc" "$B/rootfs/sys" "$B/rootfs/dev" "$B/rootfs/tmp" "$R"
cp -L "$(which busybox)" "$B/rootfs/bin/busybox"
for a in sh sleep cat head tail tr seq true; do ln -sf busybox "$B/rootfs/bin/$a"; done
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

cg() { echo "/sys/fs/cgroup/agentsbx/$1"; }

# 1. a 64 MiB allocation under a 32 MiB limit is OOM-killed; events says so
spec '["sh","-c","sleep 1; sh /bin/grab.sh; sleep 60"]' \
	'{"memory": {"limit": 33554432}}'
rt run -d -b "$B" oom >/dev/null 2>&1 </dev/null
rt events --interval 200ms oom > $W/events.out 2>&1 &
ev=$!
# (slow under TCG emulation: wait up to 60 s for the kill)
for i in $(seq 60); do
	n=$(grep oom_kill "$(cg oom)/memory.events" | cut -d' ' -f2)
	[ "${n:-0}" -ge 1 ] && break
	sleep 1
done
sleep 1
kill $ev 2>/dev/null; wait $ev 2>/dev/null
if [ "${n:-0}" -ge 1 ] && grep -q '"type":"oom"' $W/events.out; then ok oom-kill-and-event
else fail oom-kill-and-event "oom_kill=${n:-?}, events: $(head -c 300 $W/events.out)"; fi
rt delete -f oom

# 2. a fork bomb stops at pids.max
spec '["sh","-c","sh /bin/bomb.sh 2>/dev/null; sleep 5"]' '{"pids": {"limit": 16}}'
rt run -d -b "$B" bomb >/dev/null 2>&1 </dev/null
sleep 1
cur=$(cat "$(cg bomb)/pids.current"); max=$(cat "$(cg bomb)/pids.max")
if [ "$max" = 16 ] && [ "$cur" -le 16 ] && [ "$cur" -ge 10 ]; then ok fork-bomb-capped
else fail fork-bomb-capped "pids.current=$cur pids.max=$max"; fi
# ps --format json lists exactly the cgroup's pids
ps_json=$(rt ps --format json bomb | tr -d '[]' | tr ',' '\n' | sort -n | tr '\n' ' ')
procs=$(sort -n "$(cg bomb)/cgroup.procs" | tr '\n' ' ')
if [ "$ps_json" = "$procs" ] && [ -n "$procs" ]; then ok ps-json-exact
else fail ps-json-exact "ps: '$ps_json' cgroup.procs: '$procs'"; fi
# delete --force with forked children leaves no cgroup
rt delete -f bomb
if [ ! -d "$(cg bomb)" ]; then ok delete-force-removes-cgroup
else fail delete-force-removes-cgroup "$(cg bomb) still there"; fi

# 3. a busy loop under a 20% quota is throttled
spec '["sh","-c","while :; do :; done"]' '{"cpu": {"quota": 20000, "period": 100000}}'
rt run -d -b "$B" busy >/dev/null 2>&1 </dev/null
u0=$(grep usage_usec "$(cg busy)/cpu.stat" | cut -d' ' -f2)
sleep 2
u1=$(grep usage_usec "$(cg busy)/cpu.stat" | cut -d' ' -f2)
thr=$(grep nr_throttled "$(cg busy)/cpu.stat" | cut -d' ' -f2)
used=$(( (u1 - u0) / 20000 ))  # percent of one cpu over 2 s
if [ "$thr" -gt 0 ] && [ "$used" -le 30 ] && [ "$(cat "$(cg busy)/cpu.max")" = "20000 100000" ]; then
	ok cpu-quota-throttles
else fail cpu-quota-throttles "nr_throttled=$thr used=${used}% cpu.max=$(cat "$(cg busy)/cpu.max")"; fi

# 4. update changes a live limit, and the container sees it
rt update --memory 64m --pids-limit 32 busy
seen=$(rt exec busy cat /sys/fs/cgroup/memory.max 2>&1)
if [ "$(cat "$(cg busy)/memory.max")" = 67108864 ] && [ "$seen" = 67108864 ] &&
	[ "$(cat "$(cg busy)/pids.max")" = 32 ]; then ok update-live
else fail update-live "memory.max=$(cat "$(cg busy)/memory.max") seen=$seen"; fi

# 5. pause freezes (usage stops growing), resume continues
rt pause busy
st=$(rt state busy | grep -c '"paused"')
a=$(grep usage_usec "$(cg busy)/cpu.stat" | cut -d' ' -f2); sleep 1
b=$(grep usage_usec "$(cg busy)/cpu.stat" | cut -d' ' -f2)
rt resume busy; sleep 1
c=$(grep usage_usec "$(cg busy)/cpu.stat" | cut -d' ' -f2)
if [ "$st" = 1 ] && [ $((b - a)) -lt 5000 ] && [ $((c - b)) -gt 50000 ]; then ok pause-resume
else fail pause-resume "state-paused=$st frozen-delta=$((b - a))us resumed-delta=$((c - b))us"; fi
rt delete -f busy

# 6. the container's cgroup namespace: its own cgroup is the root it sees
spec '["sh","-c","cat /proc/self/cgroup; ls /sys/fs/cgroup | head -3"]' '{}'
out=$(rt run -b "$B" ns </dev/null 2>&1)
case "$out" in "0::/"*) ok cgroup-namespace-root ;; *) fail cgroup-namespace-root "$out" ;; esac

left=$(ls "$R" | grep -v '^\.' ; ls /sys/fs/cgroup/agentsbx 2>/dev/null | grep -v '^cgroup\.\|\.' )
if [ -z "$left" ]; then ok nothing-left; else fail nothing-left "$left"; fi
echo "container tests: $fails failed"
exit $fails
