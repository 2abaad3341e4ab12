#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Rootless containers with a delegated cgroup v2 subtree, in the throw-away
# pure v2 guest (run-cgroup2-tests.sh): a user made here (passwd, subuid),
# a cgroup delegated to it as systemd delegates one (the directory and its
# cgroup.procs, cgroup.subtree_control and cgroup.threads chowned, the
# caller in a leaf of it), and agentsbx run by that user with a mapping of
# more than its own id (newuidmap/newgidmap) and cgroupsPath inside the
# subtree.  The memory and pids limits must hold.  Prints "ok NAME" or
# "FAIL NAME: why"; the exit status is the number of failures.
#
#   rootless-tests.sh AGENTSBX_BINARY SETPRIV NEWUIDMAP NEWGIDMAP
set -u
A=$1 SETPRIV=$2 NEWUIDMAP=$3 NEWGIDMAP=$4
U=4711
fails=0
ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; fails=$((fails + 1)); }

if [ -d /sys/fs/cgroup/memory ]; then echo "rootless tests: not a cgroup v2 host"; exit 0; fi
mkdir -p /etc
echo "root:x:0:0:root:/root:/bin/sh" > /etc/passwd
echo "u$U:x:$U:$U::/tmp:/bin/sh" >> /etc/passwd
echo "root:x:0:" > /etc/group
echo "u$U:x:$U:" >> /etc/group
echo "u$U:200000:65536" > /etc/subuid
echo "u$U:200000:65536" > /etc/subgid
# The copies in the guest lost their setuid bit.
chown 0:0 "$NEWUIDMAP" "$NEWGIDMAP"
chmod 4755 "$NEWUIDMAP" "$NEWGIDMAP"

# The delegation.
D=/sys/fs/cgroup/deleg
mkdir -p $D
echo "+memory +pids" > /sys/fs/cgroup/cgroup.subtree_control
chown $U:$U $D $D/cgroup.procs $D/cgroup.subtree_control $D/cgroup.threads
echo "+memory +pids" > $D/cgroup.subtree_control
mkdir -p $D/rt
chown $U:$U $D/rt $D/rt/cgroup.procs
# The caller lives in a leaf of its subtree (as in user@.service): moving
# it there takes root (the common ancestor with / is the root cgroup), so
# this shell goes, and what it starts as the user is there already.
echo $$ > $D/rt/cgroup.procs

W=$(mktemp -d /tmp/agentsbx-rl.XXXXXX)
B=$W/bundle
mkdir -p "$B/rootfs/bin" "$B/rootfs/proc" "$B/rootfs/sys" "$B/rootfs/dev" "$B/rootfs/tmp" $W/run
cp -L "$(which busybox)" "$B/rootfs/bin/busybox"
for a in sh sleep cat head tr seq true cut id dd grep; do ln -sf busybox "$B/rootfs/bin/$a"; done
printf '%s\n' 'x=$(head -c 67108864 /dev/zero | tr "\\0" a)' > "$B/rootfs/bin/grab.sh"
printf '%s\n' 'for i in $(seq 64); do sleep 5 & done; wait' > "$B/rootfs/bin/bomb.sh"
echo '{"mode": "off"}' > $W/off.json
echo '{}' > $W/default.json
chown -R $U:$U $W
chmod 755 $W

# config.json: args (JSON array), resources (JSON object), the cgroup path.
spec() {
	cat > "$B/config.json" <<JSON
{ "ociVersion": "1.0.2",
  "process": { "terminal": false, "user": {"uid": 0, "gid": 0}, "args": $1,
    "env": ["PATH=/bin"], "cwd": "/", "noNewPrivileges": true },
  "root": {"path": "rootfs"},
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid","mode=755"]}
  ],
  "linux": {
    "namespaces": [{"type":"pid"},{"type":"mount"},{"type":"ipc"},{"type":"uts"},{"type":"network"},{"type":"user"}],
    "uidMappings": [{"containerID": 0, "hostID": $U, "size": 1}, {"containerID": 1, "hostID": 200000, "size": 65536}],
    "gidMappings": [{"containerID": 0, "hostID": $U, "size": 1}, {"containerID": 1, "hostID": 200000, "size": 65536}],
    "cgroupsPath": "/deleg/$3",
    "resources": $2 } }
JSON
	chown $U:$U "$B/config.json"
}

# As the user, in the delegated leaf.
as_user() {
	"$SETPRIV" --reuid $U --regid $U --clear-groups \
		"$A" --root $W/run --policy $W/off.json "$@"
}

# 1. uid 0 and 1 inside are the user and its subordinate range outside
spec '["sh","-c","cat /proc/self/uid_map; id -u"]' '{}' id
out=$(as_user run -b "$B" rl-id </dev/null 2>&1)
if echo "$out" | grep -q "1 *200000 *65536" && echo "$out" | tail -1 | grep -qx 0; then ok rootless-newuidmap
else fail rootless-newuidmap "$out"; fi

# 2. a 64 MiB allocation under a 32 MiB limit is OOM-killed
spec '["sh","/bin/grab.sh"]' '{"memory": {"limit": 33554432}}' oom
out=$(as_user run -b "$B" rl-oom </dev/null 2>&1); rc=$?
if [ $rc = 137 ]; then ok rootless-memory-limit-holds
else fail rootless-memory-limit-holds "exit $rc: $out"; fi

# 3. a fork bomb stops at pids.max (the cgroup is the user's own)
spec '["sh","-c","sh /bin/bomb.sh; echo done"]' '{"pids": {"limit": 16}}' bomb
as_user run -d -b "$B" rl-bomb </dev/null >$W/bomb.out 2>&1
sleep 2
cur=$(cat $D/bomb/pids.current 2>/dev/null); max=$(cat $D/bomb/pids.max 2>/dev/null)
owner=$(stat -c %u $D/bomb 2>/dev/null)
if [ "$max" = 16 ] && [ "${cur:-99}" -le 16 ] && [ "$owner" = $U ]; then ok rootless-pids-limit-holds
else fail rootless-pids-limit-holds "pids.current=$cur pids.max=$max owner=$owner $(head -c 300 $W/bomb.out)"; fi
as_user delete -f rl-bomb

# 4. the policy's writable layer in the user's own namespace (overlayfs
# with userxattr; the tmpfs upper): the working directory is written, the
# image (the user's files) is not, 1-MiB files stop at the 32 MiB cap
spec '["sh","-c","echo data > out.txt && cat out.txt; grep -c \" / / rw,.* - overlay \" /proc/self/mountinfo; i=0; while [ $i -lt 40 ]; do dd if=/dev/zero of=f.$i bs=1048576 count=1 2>/dev/null || break; i=$((i+1)); done; echo files=$i"]' '{}' layer
sed -i 's|"cwd": "/"|"cwd": "/app"|; s|"root": {"path": "rootfs"}|"root": {"path": "rootfs", "readonly": false}|' "$B/config.json"
out=$("$SETPRIV" --reuid $U --regid $U --clear-groups "$A" --root $W/run --policy $W/default.json run -b "$B" rl-layer </dev/null 2>&1)
files=$(echo "$out" | sed -n 's/^files=//p')
if echo "$out" | head -2 | tr '\n' ' ' | grep -qx "data 1 " && [ "${files:-0}" -ge 28 ] && [ "${files:-99}" -le 32 ] &&
	[ ! -e "$B/rootfs/app" ]; then ok rootless-writable-layer
else fail rootless-writable-layer "$out"; fi

left=$(ls $W/run 2>/dev/null | grep -v '^\.'; ls -d $D/id $D/oom $D/bomb $D/layer 2>/dev/null)
if [ -z "$left" ]; then ok rootless-nothing-left; else fail rootless-nothing-left "$left"; fi
rm -rf "$W"
echo $$ > /sys/fs/cgroup/cgroup.procs
rmdir $D/rt $D 2>/dev/null
echo "rootless tests: $fails failed"
exit $fails
