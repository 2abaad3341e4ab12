#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# The systemd cgroup manager (--systemd-cgroup) with real containers, in a
# guest booted with systemd as init (run-systemd-tests.sh boots it; any
# systemd host as root works too).  Each check prints "ok NAME" or
# "FAIL NAME: why"; the exit status is the number of failures.
#
#   test-systemd.sh AGENTSBX_BINARY
set -u
A=$1
W=$(mktemp -d /tmp/agentsbx-sd.XXXXXX)
R=$W/root
B=$W/bundle
T=sd$$ # container ids are $T-NAME
fails=0
mkdir -p "$B/rootfs/bin" "$B/rootfs/proc" "$B/rootfs/sys" "$B/rootfs/dev" \
	"$B/rootfs/tmp" "$R"
cp -L "$(command -v busybox)" "$B/rootfs/bin/busybox"
for a in sh sleep cat head mknod ls echo tr; do ln -sf busybox "$B/rootfs/bin/$a"; done
echo '{"mode": "off"}' > "$W/off.json"
# 64 MiB in a shell variable, in a child of the container's init
printf '%s\n' 'x=$(head -c 67108864 /dev/zero | tr "\\0" a)' > "$B/rootfs/bin/grab.sh"

ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }
# (a bound on every command: a hang fails a check, not the whole run)
rt() { timeout 120 "$A" --root "$R" --policy "$W/off.json" --systemd-cgroup "$@"; }
# Without --systemd-cgroup: later commands find the manager in the state.
rt_plain() { timeout 120 "$A" --root "$R" --policy "$W/off.json" "$@"; }
# run -d: the container keeps its stdio, so never a pipe to wait on.
run_d() { rt run -d -b "$B" "$@" >"$W/run.out" 2>&1 </dev/null; }

# config.json with the given args (a JSON array), resources (an object) and
# cgroupsPath ("" for the default).
spec() {
	cgp=
	[ -n "${3:-}" ] && cgp="\"cgroupsPath\": \"$3\","
	cat > "$B/config.json" <<EOF
{ "ociVersion": "1.0.2",
  "process": { "terminal": false, "user": {"uid": 0, "gid": 0}, "args": $1,
    "env": ["PATH=/bin"], "cwd": "/",
    "capabilities": { "bounding": ["CAP_MKNOD"], "effective": ["CAP_MKNOD"],
                      "permitted": ["CAP_MKNOD"] } },
  "root": {"path": "rootfs"},
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid","mode=755"]},
    {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid","noexec","nodev","ro"]},
    {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup", "options": ["nosuid","noexec","nodev","rw"]}
  ],
  "linux": { "namespaces": [{"type":"pid"},{"type":"mount"},{"type":"ipc"},{"type":"uts"},{"type":"network"},{"type":"cgroup"}],
    $cgp
    "resources": $2 } }
EOF
}

unit() { echo "agentsbx-$T-$1.scope"; }
rel() { echo "system.slice/$(unit "$1")"; }

# The files, whatever the guest's cgroup mode: "f REL NAME" for the
# cgroup2 file NAME (memory.max, cpu.max, ...) of cgroup REL, or its v1
# counterpart.  v1 and hybrid guests boot with
# systemd.unified_cgroup_hierarchy=0.
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then V2=1; else V2=0; fi
f() {
	if [ $V2 = 1 ]; then cat "/sys/fs/cgroup/$1/$2" 2>/dev/null; return; fi
	case $2 in
	memory.max) cat "/sys/fs/cgroup/memory/$1/memory.limit_in_bytes" ;;
	pids.max | pids.current) cat "/sys/fs/cgroup/pids/$1/$2" ;;
	cpu.max) echo "$(cat /sys/fs/cgroup/cpu/$1/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/$1/cpu.cfs_period_us)" ;;
	cpu.weight) cat "/sys/fs/cgroup/cpu/$1/cpu.shares" ;;
	cpuset.cpus) cat "/sys/fs/cgroup/cpuset/$1/cpuset.cpus" ;;
	hugetlb.2MB.max) cat "/sys/fs/cgroup/hugetlb/$1/hugetlb.2MB.limit_in_bytes" ;;
	cgroup.procs) cat "/sys/fs/cgroup/pids/$1/cgroup.procs" ;;
	esac 2>/dev/null
}
frozen() {
	if [ $V2 = 1 ]; then sed -n 's/^frozen //p' "/sys/fs/cgroup/$1/cgroup.events"
	else [ "$(cat /sys/fs/cgroup/freezer/$1/freezer.state)" = FROZEN ] && echo 1 || echo 0; fi
}
oom_kills() {
	if [ $V2 = 1 ]; then sed -n 's/^oom_kill //p' "/sys/fs/cgroup/$1/memory.events"
	else sed -n 's/^oom_kill //p' "/sys/fs/cgroup/memory/$1/memory.oom_control"; fi 2>/dev/null
}
# Is there a directory of cgroup REL in some hierarchy?
has_dir() {
	if [ $V2 = 1 ]; then [ -d "/sys/fs/cgroup/$1" ]
	else ls -d /sys/fs/cgroup/*/"$1" >/dev/null 2>&1; fi
}
# The pid in the cgroup in every hierarchy (v1: the ones systemd made and
# the ones we did).
pid_everywhere() {
	if [ $V2 = 1 ]; then grep -qx "$2" "/sys/fs/cgroup/$1/cgroup.procs"; return; fi
	for h in /sys/fs/cgroup/*/; do
		[ -f "$h/cgroup.procs" ] || continue
		grep -qx "$2" "$h/$1/cgroup.procs" 2>/dev/null || { echo "not in $h$1"; return 1; }
	done
}
if [ $V2 = 1 ]; then MEMPROP=MemoryMax; inside_mem=/sys/fs/cgroup/memory.max
else MEMPROP=MemoryLimit; inside_mem=/sys/fs/cgroup/memory/memory.limit_in_bytes; fi
prop() { systemctl show -P "$2" "$1" 2>/dev/null; }
init_pid() { rt_plain state "$T-$1" | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p'; }
# "active", "inactive", ... or "gone" when systemd no longer knows it.
unit_state() {
	if [ "$(prop "$1" LoadState)" = not-found ]; then echo gone
	else prop "$1" ActiveState; fi
}
wait_stopped() {
	for i in $(seq 50); do
		rt_plain state "$T-$1" 2>/dev/null | grep -q '"stopped"' && return 0
		sleep 0.2
	done
	return 1
}

echo "guest: systemd $(systemctl --version | sed -n '1s/systemd \([0-9]*\).*/\1/p'), $(stat -fc %T /sys/fs/cgroup), PID 1 $(cat /proc/1/comm)"

# 1. run: a scope in system.slice with the limits as unit properties
spec '["sleep","1000"]' '{"memory": {"limit": 67108864, "swap": 67108864},
	"pids": {"limit": 32}, "cpu": {"shares": 512, "quota": 50000, "period": 100000, "cpus": "0"},
	"hugepageLimits": [{"pageSize": "2MB", "limit": 4194304}]}'
start=$(date +%s%N)
if run_d "$T-a"; then
	ok "run-d ($(( ($(date +%s%N) - start) / 1000000 )) ms)"
else
	fail run-d "$(cat "$W/run.out")"
fi
U=$(unit a)
D=$(rel a)
echo "--- systemctl status $U"
systemctl status --no-pager "$U" 2>&1 | sed -n '1,8p'
echo "--- systemctl show $U"
systemctl show -p Slice -p ControlGroup -p Delegate -p MemoryMax -p MemoryLimit \
	-p MemorySwapMax -p TasksMax -p CPUWeight -p CPUShares -p CPUQuotaPerSecUSec \
	-p CPUQuotaPeriodUSec -p AllowedCPUs -p DefaultDependencies -p DevicePolicy \
	-p DeviceAllow "$U"
echo "---"
if [ "$(unit_state "$U")" = active ] &&
	[ "$(prop "$U" ControlGroup)" = "/system.slice/$U" ]; then ok scope-active
else fail scope-active "state $(unit_state "$U"), cgroup $(prop "$U" ControlGroup)"; fi
props="$MEMPROP=$(prop "$U" $MEMPROP) TasksMax=$(prop "$U" TasksMax) Delegate=$(prop "$U" Delegate) CPUQuota=$(prop "$U" CPUQuotaPerSecUSec) MemorySwapMax=$(prop "$U" MemorySwapMax) AllowedCPUs=$(prop "$U" AllowedCPUs) CPUShares=$(prop "$U" CPUShares) DevicePolicy=$(prop "$U" DevicePolicy)"
if [ "$(prop "$U" $MEMPROP)" = 67108864 ] && [ "$(prop "$U" TasksMax)" = 32 ] &&
	[ "$(prop "$U" Delegate)" = yes ] && [ "$(prop "$U" CPUQuotaPerSecUSec)" = 500ms ] &&
	{ [ $V2 = 0 ] || { [ "$(prop "$U" MemorySwapMax)" = 0 ] && [ "$(prop "$U" AllowedCPUs)" = 0 ]; }; } &&
	{ [ $V2 = 1 ] || { [ "$(prop "$U" CPUShares)" = 512 ] && [ "$(prop "$U" DevicePolicy)" = strict ]; }; }
then ok unit-properties
else fail unit-properties "$props"; fi
# v2: cpu.weight 20 is shares 512
if [ $V2 = 1 ]; then weight=20; else weight=512; fi
files="memory=$(f $D memory.max) pids.max=$(f $D pids.max) cpu=$(f $D cpu.max) weight=$(f $D cpu.weight) cpuset.cpus=$(f $D cpuset.cpus) hugetlb.2MB=$(f $D hugetlb.2MB.max)"
echo "files: $files"
if [ "$(f $D memory.max)" = 67108864 ] && [ "$(f $D pids.max)" = 32 ] &&
	[ "$(f $D cpu.max)" = "50000 100000" ] && [ "$(f $D cpu.weight)" = $weight ] &&
	[ "$(f $D cpuset.cpus)" = 0 ]; then ok cgroup-files
else fail cgroup-files "$files"; fi
# hugetlb has no property: written to the file (when the guest has it)
if [ $V2 = 1 ] && ! grep -qw hugetlb /sys/fs/cgroup/cgroup.controllers; then ok "hugetlb-file (skipped: no hugetlb controller)"
elif [ "$(f $D hugetlb.2MB.max)" = 4194304 ]; then ok hugetlb-file
else fail hugetlb-file "hugetlb 2MB limit: '$(f $D hugetlb.2MB.max)'"; fi
pid=$(init_pid a)
if [ -n "$pid" ] && why=$(pid_everywhere $D "$pid"); then ok pid-in-scope
else fail pid-in-scope "init pid '$pid', $D/cgroup.procs: $(f $D cgroup.procs | tr '\n' ' ') $why"; fi
if grep -q "\"cgroupPath\": *\"/system.slice/$U\"\|/system.slice/$U" "$R/$T-a/state.json" 2>/dev/null ||
	rt_plain state "$T-a" >/dev/null; then ok state; else fail state "no state"; fi

# 2. devices (v2: our BPF filter; v1: the files and DeviceAllow=): mknod is
# allowed, reading /dev/mem is not
out=$(rt_plain exec "$T-a" sh -c 'mknod /tmp/mem c 1 1 && head -c 1 /tmp/mem >/dev/null' 2>&1)
if [ $? != 0 ] && echo "$out" | grep -q "Operation not permitted"; then ok devices-denied
else fail devices-denied "reading /dev/mem: '$out'"; fi
out=$(rt_plain exec "$T-a" sh -c 'mknod /tmp/null c 1 3 && echo x > /tmp/null && echo fine' 2>&1)
if [ "$out" = fine ]; then ok devices-allowed; else fail devices-allowed "$out"; fi

# 3. ps, exec into the scope, events --stats
rt_plain exec -d "$T-a" sleep 500 >/dev/null 2>&1 </dev/null
ps=$(rt_plain ps --format json "$T-a" | tr -d '[] ' | tr ',' '\n' | sort -n | tr '\n' ' ')
procs=$(f $D cgroup.procs | sort -n | tr '\n' ' ')
if [ "$ps" = "$procs" ] && [ "$(echo $procs | wc -w)" = 2 ]; then ok ps-exec-in-scope
else fail ps-exec-in-scope "ps '$ps', cgroup.procs '$procs'"; fi
inside=$(rt_plain exec "$T-a" cat /proc/self/cgroup 2>&1)
# (every hierarchy's line ends in ":/"; v2: the one "0::/" line)
if [ -n "$inside" ] && ! echo "$inside" | grep -v ':/$' | grep -q ':'; then ok cgroupns-root
else fail cgroupns-root "$inside"; fi
stats=$(timeout 10 "$A" --root "$R" events --stats "$T-a" 2>&1 | head -c 2000)
if echo "$stats" | grep -q '"pids":{"current":2'; then ok events-stats
else fail events-stats "$(echo "$stats" | head -c 300)"; fi

# 4. pause / resume on the scope's freezer (files)
rt_plain pause "$T-a"
st=$(rt_plain state "$T-a" | grep -c '"paused"')
fr=$(frozen $D)
rt_plain resume "$T-a"
st2=$(rt_plain state "$T-a" | grep -c '"running"')
if [ "$st" = 1 ] && [ "$fr" = 1 ] && [ "$st2" = 1 ] && [ "$(frozen $D)" = 0 ]; then ok pause-resume
else fail pause-resume "paused=$st frozen=$fr running-again=$st2"; fi

# 5. update: SetUnitProperties for what systemd has, files for the rest
# (v1: memory+swap must stay >= memory at every step; the swap goes too)
rt_plain update --memory 100663296 --memory-swap 201326592 --pids-limit 64 --cpu-quota 25000 "$T-a"
seen=$(rt_plain exec "$T-a" cat $inside_mem 2>&1)
if [ "$(prop "$U" $MEMPROP)" = 100663296 ] && [ "$(f $D memory.max)" = 100663296 ] &&
	[ "$seen" = 100663296 ] && [ "$(prop "$U" TasksMax)" = 64 ] &&
	[ "$(f $D pids.max)" = 64 ] && [ "$(f $D cpu.max)" = "25000 100000" ]; then ok update
else fail update "$MEMPROP=$(prop "$U" $MEMPROP) memory=$(f $D memory.max) seen=$seen TasksMax=$(prop "$U" TasksMax) cpu=$(f $D cpu.max)"; fi
rt_plain update --cpu-period 250000 "$T-a"
if [ "$(f $D cpu.max)" = "25000 250000" ]; then ok update-period-keeps-quota
else fail update-period-keeps-quota "cpu=$(f $D cpu.max)"; fi
# checkBeforeUpdate: refused before systemd gets the limit
echo '{"memory": {"limit": 4096, "checkBeforeUpdate": true}}' > "$W/small.json"
out=$(rt_plain update -r "$W/small.json" "$T-a" 2>&1); rc=$?
# (v1: the kernel itself refuses a limit below the usage, EBUSY)
if [ $rc != 0 ] && [ "$(prop "$U" $MEMPROP)" = 100663296 ] &&
	[ "$(f $D memory.max)" = 100663296 ] &&
	{ [ $V2 = 0 ] || echo "$out" | grep -q "below the current usage"; }; then ok update-check-before-update
else fail update-check-before-update "rc=$rc '$out' $MEMPROP=$(prop "$U" $MEMPROP)"; fi

# 6. what systemd manages survives a daemon-reload; the device filter too
systemctl daemon-reload
out=$(rt_plain exec "$T-a" sh -c 'head -c 1 /tmp/mem >/dev/null' 2>&1)
if [ "$(f $D pids.max)" = 64 ] && [ "$(f $D cpu.max)" = "25000 250000" ] &&
	[ "$(f $D memory.max)" = 100663296 ] &&
	echo "$out" | grep -q "Operation not permitted"; then ok daemon-reload-keeps-limits
else fail daemon-reload-keeps-limits "pids.max=$(f $D pids.max) cpu=$(f $D cpu.max) memory=$(f $D memory.max) /dev/mem: '$out'"; fi

# 7. kill --all, then delete: the scope is gone
if [ "$(unit_state "$U")" = active ] && has_dir $D; then :; else fail before-kill "scope not active"; fi
rt_plain kill --all "$T-a" KILL; rc=$?
if wait_stopped a && [ $rc = 0 ]; then ok kill-all
else fail kill-all "rc=$rc, $(rt_plain state "$T-a" 2>&1 | grep status)"; fi
rt_plain delete "$T-a"
us=$(unit_state "$U")
echo "after delete: systemctl status: $(systemctl status --no-pager "$U" 2>&1 | head -1)"
if [ "$us" = gone ] && ! has_dir $D; then ok delete-removes-scope
else fail delete-removes-scope "unit $us, dirs $(ls -d /sys/fs/cgroup/$D /sys/fs/cgroup/*/$D 2>/dev/null)"; fi

# 8. delete --force of a running container: scope stopped and gone
spec '["sh","-c","sleep 1000 & sleep 1000"]' '{"memory": {"limit": 33554432}}'
run_d "$T-b"
U=$(unit b)
st=$(unit_state "$U")
rt_plain delete -f "$T-b"
if [ "$st" = active ] && [ "$(unit_state "$U")" = gone ] && ! has_dir $(rel b); then ok delete-force-removes-scope
else fail delete-force-removes-scope "before: $st, after: $(unit_state "$U")"; fi

# 8b. an OOM kill inside the container does not stop its scope
spec '["sh","-c","sleep 1000 & sh /bin/grab.sh; wait"]' '{"memory": {"limit": 33554432}}'
run_d "$T-oom"
U=$(unit oom)
for i in $(seq 60); do
	n=$(oom_kills $(rel oom))
	[ "${n:-0}" -ge 1 ] && break
	sleep 1
done
sleep 1
if [ "${n:-0}" -ge 1 ] && [ "$(unit_state "$U")" = active ] &&
	[ -n "$(f $(rel oom) cgroup.procs)" ]; then ok oom-kill-keeps-scope
else fail oom-kill-keeps-scope "oom_kill=${n:-?} scope $(unit_state "$U") $(prop "$U" Result)"; fi
rt_plain delete -f "$T-oom"

# 9. cgroupsPath "slice:prefix:name" with a nested slice
spec '["sleep","1000"]' '{"pids": {"limit": 10}}' "agentsbx-tests.slice:ctr:$T-c"
run_d "$T-c"
U=ctr-$T-c.scope
D=agentsbx.slice/agentsbx-tests.slice/$U
if [ "$(unit_state "$U")" = active ] && [ "$(prop "$U" Slice)" = agentsbx-tests.slice ] &&
	[ "$(f $D pids.max)" = 10 ]; then ok nested-slice
else fail nested-slice "state $(unit_state "$U") slice $(prop "$U" Slice) pids.max $(f $D pids.max)"; fi
rt_plain delete -f "$T-c"
if [ "$(unit_state "$U")" = gone ] && ! has_dir $D; then ok nested-slice-gone
else fail nested-slice-gone "$(unit_state "$U")"; fi

# 10. a container that exits by itself: its scope stops with it; delete is clean
spec '["sh","-c","exit 0"]' '{}'
out=$(rt run -b "$B" "$T-d" 2>&1 </dev/null); rc=$?
if [ $rc = 0 ] && [ "$(unit_state "$(unit d)")" = gone ]; then ok run-foreground
else fail run-foreground "rc=$rc $out, scope $(unit_state "$(unit d)")"; fi

# 11. a failure after the scope started (a hugetlb size the kernel lacks):
# run fails, nothing is left behind
spec '["sleep","1000"]' '{"hugepageLimits": [{"pageSize": "64KB", "limit": 65536}]}'
run_d "$T-e"; rc=$?; out=$(cat "$W/run.out")
left=$(ls "$R" | grep -- "-e$"; [ "$(unit_state "$(unit e)")" = gone ] || echo "unit $(unit_state "$(unit e)")"; has_dir $(rel e) && echo "dir $(rel e)")
if [ $rc != 0 ] && [ -z "$left" ]; then ok failed-create-leaves-nothing
else fail failed-create-leaves-nothing "rc=$rc '$out' left: $left"; fi
echo "   (the error: $out)"

# 12. a bad cgroupsPath is refused before anything is made
spec '["true"]' '{}' "not-a-slice:x:y"
out=$(rt run -b "$B" "$T-f" 2>&1 </dev/null); rc=$?
if [ $rc != 0 ] && echo "$out" | grep -q 'must end in ".slice"'; then ok bad-cgroups-path
else fail bad-cgroups-path "rc=$rc $out"; fi

# 13. without dbus-daemon: systemd's private socket
if systemctl stop dbus.socket dbus.service 2>/dev/null; then
	spec '["sleep","1000"]' '{"pids": {"limit": 7}}'
	run_d "$T-g"; rc=$?; out=$(cat "$W/run.out")
	st=$(unit_state "$(unit g)")
	rt_plain delete -f "$T-g"
	if [ $rc = 0 ] && [ "$st" = active ] && [ "$(unit_state "$(unit g)")" = gone ]; then ok private-socket
	else fail private-socket "rc=$rc $out state=$st"; fi
	systemctl start dbus.socket dbus.service
fi

left=$(ls "$R"; systemctl list-units --all --no-legend "*$T*" 2>/dev/null)
if [ -z "$left" ]; then ok nothing-left; else fail nothing-left "$left"; fi
rm -rf "$W"
echo "systemd tests: $fails failed"
exit $fails
