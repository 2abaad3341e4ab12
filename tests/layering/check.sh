#!/bin/bash
# The one-way flow of README "How it is built", checked on the includes:
#   cmd/ -> agent/ -> runtime/ (its public container.h only) -> spec/, lib/
# A line per violation; exit 1 if there is any.
set -u
cd "$(dirname "$0")/../.."
bad=0
fail() { echo "layering: $*"; bad=1; }

includes() { # file -> the repo paths it includes with "..."
	local f=$1 d
	d=$(dirname "$f")
	grep -o '^#include "[^"]*"' "$f" | sed 's/#include "//; s/"$//' |
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
# runtime/cgroup/: no two headers include each other both ways.
for h in $(git ls-files 'runtime/cgroup/*.h'); do
	for inc in $(includes "$h"); do
		[ -f "$inc" ] || continue
		includes "$inc" | grep -qx "$h" && fail "$h and $inc include each other"
	done
done
exit $bad
