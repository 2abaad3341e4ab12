#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The layering checks shown to fail: a call from the init up into the
# lifecycle, a circle of calls between two files, a readlink of a
# /proc/self/fd link outside the judge, a room's private header included
# from outside agent/ROOM/, a call into a room to what its interface does
# not declare; each planted in a copy of the build's objects (their sources
# under PLANT, so calls.py does not take them for stale ones) or beside the
# tree, and caught.  Exit 1 if one is missed.
#
#   tests/layering/plant.sh BUILD
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
CC=${CC:-cc}

copy_objects() { # a fresh copy of the build's product objects in $tmp/b
	rm -rf "$tmp/b" "$tmp/src"
	mkdir -p "$tmp/b" "$tmp/src"
	(cd "$build" && find cmd agent runtime spec lib hooks -name '*.o' -print0 2>/dev/null |
		xargs -0 cp --parents -t "$tmp/b")
}

plant_object() { # PATH.o C-SOURCE
	mkdir -p "$(dirname "$tmp/b/$1")" "$(dirname "$tmp/src/$1")"
	printf '%s\n' "$2" >"$tmp/src/${1%.o}.c"
	"$CC" -c -o "$tmp/b/$1" "$tmp/src/${1%.o}.c"
}
calls() { PLANT=$tmp/src python3 tests/layering/calls.py "$tmp/b" 2>&1; }

expect() { # WHAT PATTERN OUTPUT
	if printf '%s\n' "$3" | grep -q "$2"; then
		echo "plant: caught: $1"
	else
		echo "plant: MISSED: $1 (no line matching '$2'):"
		printf '%s\n' "$3"
		bad=1
	fi
}

copy_objects
out=$(calls)
[ $? = 0 ] || { echo "plant: the unplanted copy fails already:"; printf '%s\n' "$out"; exit 1; }

plant_object runtime/init/planted.o \
	'void ctx_update_state_json(void *c, int s); void planted(void) { ctx_update_state_json(0, 0); }'
out=$(calls)
expect "the init calling the lifecycle" \
	'runtime/init/planted.c calls up into runtime/lifecycle/ctx.c (ctx_update_state_json)' "$out"

copy_objects
plant_object spec/planted_a.o 'void planted_b(void); void planted_a(void) { planted_b(); }'
plant_object spec/planted_b.o 'void planted_a(void); void planted_b(void) { planted_a(); }'
out=$(calls)
expect "two files calling each other" \
	'circle: spec/planted_a.c spec/planted_b.c' "$out"

mkdir -p "$tmp/tree/runtime/policy"
printf '%s\n' 'int f(int fd, char *b) { char p[32]; return (int)readlink(fd_path(fd, p), b, 10); }' \
	>"$tmp/tree/runtime/policy/planted.c"
out=$(PLANT=$tmp/tree BUILD=$build tests/layering/check.sh 2>&1)
expect "a /proc/self/fd link read outside the judge" \
	'runtime/policy/planted.c reads a /proc/self/fd link' "$out"

rm -rf "$tmp/tree" && mkdir -p "$tmp/tree/runtime/init"
printf '%s\n' 'int f(void) { return WEAKENED("planted"); }' >"$tmp/tree/runtime/init/planted.c"
out=$(PLANT=$tmp/tree BUILD=$build tests/layering/check.sh 2>&1)
expect "a weak switch named outside its room's weak.h" \
	'runtime/init/planted.c calls WEAKENED()' "$out"

mkdir -p "$tmp/rooms/agent/session" "$tmp/rooms/agent/sandbox"
printf '%s\n' '#include "../sandbox/sandbox_private.h"' >"$tmp/rooms/agent/session/planted.c"
printf '%s\n' '#include "../mcp/mcp.h"' >"$tmp/rooms/agent/sandbox/planted.c"
out=$(PLANT=$tmp/rooms BUILD=$build tests/layering/check.sh 2>&1)
expect "a room's private header included from another room" \
	'agent/session/planted.c includes agent/sandbox/sandbox_private.h' "$out"
expect "the sandbox room including a room above it" \
	'agent/sandbox/planted.c includes agent/mcp/mcp.h: agent/sandbox/ is below' "$out"

copy_objects
plant_object cmd/planted.o \
	'int sandbox_wait(void *w, void *r, void *e); int planted(void) { return sandbox_wait(0, 0, 0); }'
out=$(calls)
expect "a call into a room past its interface" \
	"cmd/planted.c calls agent/sandbox/sandbox_io.c's sandbox_wait: outside agent/sandbox/" "$out"
exit $bad
