#!/bin/bash
# The one-way flow of docs/design.md, checked on the includes (and, by
# calls.py, on the calls):
#   cmd/ -> agent/ -> runtime/ (its public container.h only) -> spec/, lib/
# and inside agent/, rooms by product, each used from outside only through
# its interface, agent/ROOM/ROOM.h:
#   agent/mcp/, agent/session/ -> agent/sandbox/
# A line per violation; exit 1 if there is any.
set -u
cd "$(dirname "$0")/../.."
bad=0
fail() { echo "layering: $*"; bad=1; }

includes() { # file [its text's path] -> the repo paths it includes with "..."
	local f=$1 src=${2:-$1} d
	d=$(dirname "$f")
	grep -o '^#include "[^"]*"' "$src" | sed 's/#include "//; s/"$//' |
		while read -r inc; do realpath -m --relative-to=. "$d/$inc"; done
}

for f in $(git ls-files 'cmd/*.[ch]' 'agent/*.[ch]'); do
	for inc in $(includes "$f"); do
		case $inc in
		*internal.h) fail "$f includes the private header $inc" ;;
		runtime/container.h) ;;
		runtime/*) fail "$f includes $inc: above runtime/ only runtime/container.h" ;;
		esac
	done
done
for f in $(git ls-files 'agent/*.[ch]'); do
	for inc in $(includes "$f"); do
		case $inc in cmd/*) fail "$f includes $inc: agent/ is below cmd/" ;; esac
	done
done
for f in $(git ls-files 'spec/*.[ch]' 'lib/*.[ch]'); do
	for inc in $(includes "$f"); do
		case $inc in
		runtime/* | agent/* | cmd/* | hooks/*) fail "$f includes $inc: spec/ and lib/ are the bottom" ;;
		spec/*) case $f in lib/*) fail "$f includes $inc: lib/ is below spec/" ;; esac ;;
		esac
	done
done
# PLANT=DIR: files under DIR are checked as if they were in the tree
# (tests/layering/plant.sh shows each rule failing on a planted file).
planted() { # the planted files matching the find -name pattern $1
	[ -n "${PLANT:-}" ] && (cd "$PLANT" && find . -name "$1" | sed 's|^\./||')
}
# agent/'s rooms: outside agent/ROOM/, only agent/ROOM/ROOM.h is included
# (ROOM_private.h is the room's own); agent/sandbox/ is below the other
# rooms, which do not include each other.
for f in $(git ls-files 'lib/*.[ch]' 'spec/*.[ch]' 'runtime/*.[ch]' 'cmd/*.[ch]' \
	'hooks/*.[ch]' 'agent/*.[ch]') $(planted '*.[ch]'); do
	src=$f
	[ -f "$f" ] || src=$PLANT/$f
	from=$(printf '%s\n' "$f" | sed -n 's|^\(agent/[^/]*\)/.*|\1|p')
	for inc in $(includes "$f" "$src"); do
		case $inc in agent/*/*) ;; *) continue ;; esac
		room=${inc#agent/}
		room=${room%%/*}
		[ "$from" = "agent/$room" ] && continue
		if [ "$inc" != "agent/$room/$room.h" ]; then
			fail "$f includes $inc: outside agent/$room/ only its interface agent/$room/$room.h"
		elif [ "$from" = agent/sandbox ]; then
			fail "$f includes $inc: agent/sandbox/ is below the other rooms"
		elif [ -n "$from" ] && [ "$room" != sandbox ]; then
			fail "$f includes $inc: the rooms use agent/sandbox/, not each other"
		fi
	done
done
# runtime/cgroup/: no two headers include each other both ways.
for h in $(git ls-files 'runtime/cgroup/*.h'); do
	for inc in $(includes "$h"); do
		[ -f "$inc" ] || continue
		includes "$inc" | grep -qx "$h" && fail "$h and $inc include each other"
	done
done
# Where an fd is on the host is the judge's question alone (runtime/judge/):
# no readlink of a /proc/self/fd link anywhere else, and every other
# readlink in product code is one of these, each reading a link as a link.
readlink_ok="runtime/policy/engine_dirs.c: the shim's work link, itself the evidence
runtime/init/namespaces.c: /proc/self, our pid in the mounted procfs
runtime/init/rootfs_cgroup.c: the host's cgroup co-mount links, copied as links
runtime/init/pathres.c: the walk inside the rootfs, resolving its symlinks"
sources() {
	git ls-files 'lib/*.c' 'spec/*.c' 'runtime/*.c' 'cmd/*.c' 'hooks/*.c' 'agent/*.c'
	planted '*.c'
}
for f in $(sources); do
	case $f in runtime/judge/*) continue ;; esac
	src=$f
	[ -f "$f" ] || src=$PLANT/$f
	if grep -nE 'readlink(at)?[[:space:]]*\([^;]*(proc/self/fd|fd_path)' "$src" >/dev/null; then
		fail "$f reads a /proc/self/fd link: locating an fd is runtime/judge/'s (judge_locate_fd)"
	elif grep -qE '\breadlink(at)?[[:space:]]*\(' "$src" &&
		! printf '%s\n' "$readlink_ok" | grep -q "^$f:"; then
		fail "$f calls readlink: locating host objects is runtime/judge/'s; a link read as a link is listed in $0"
	fi
done
# A weak-build switch is named through its room's weak.h (WEAK_NAME), so
# that each room's switches are listed, with what they turn off, in one
# place: WEAKENED() itself only in lib/weaken.h and the weak.h files.
for f in $(sources) $(git ls-files 'lib/*.h' 'spec/*.h' 'runtime/*.h' 'cmd/*.h' 'hooks/*.h' 'agent/*.h'); do
	case $f in lib/weaken.h | */weak.h) continue ;; esac
	src=$f
	[ -f "$f" ] || src=$PLANT/$f
	grep -q 'WEAKENED(' "$src" && fail "$f calls WEAKENED(): name the switch through its room's weak.h"
done
# The calls, from the objects' symbol tables (make layering builds first).
python3 tests/layering/calls.py "${BUILD:-build}" || bad=1
exit $bad
