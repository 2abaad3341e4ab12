#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# make lint: the product code's C (lib spec runtime cmd hooks agent) against
# .clang-format (as `make format` would leave it) and cppcheck (Debian's,
# its warning/portability/performance checks; tests/lint/cppcheck.supp holds
# the findings judged false positives, each with its reason).  Exits 1 when
# either finds something, after running both.
#
#   tests/lint/lint.sh [format|cppcheck]...     (default: both)
#   CLANG_FORMAT=clang-format  CPPCHECK=cppcheck
set -u
cd "$(dirname "$0")/../.."
DIRS="lib spec runtime cmd hooks agent"
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
CPPCHECK=${CPPCHECK:-cppcheck}
rc=0

need() {
	command -v "$1" >/dev/null 2>&1 && return 0
	echo "lint: $1 not found (Debian: apt-get install $2, or make deps)" >&2
	exit 2
}

# Prints the diff of every file clang-format would change, then a count.
check_format() {
	need "$CLANG_FORMAT" clang-format
	lines=0 files=0
	for f in $(find $DIRS -name '*.[ch]' | sort); do
		d=$("$CLANG_FORMAT" --style=file "$f" | diff -u --label "a/$f" --label "b/$f" "$f" -)
		[ -z "$d" ] && continue
		printf '%s\n' "$d"
		n=$(printf '%s\n' "$d" | grep -c '^-[^-]')
		lines=$((lines + n)) files=$((files + 1))
	done
	if [ "$files" -gt 0 ]; then
		echo "lint: clang-format would change $lines lines in $files files (make format applies it)"
		rc=1
	else
		echo "lint: clang-format: nothing to change"
	fi
}

check_cppcheck() {
	need "$CPPCHECK" cppcheck
	# One configuration (this platform's): _GNU_SOURCE as the Makefile
	# builds; system headers are not needed for these checks.
	if "$CPPCHECK" --enable=warning,portability,performance --std=c11 \
		-D_GNU_SOURCE -D__linux__ -D__x86_64__ --max-configs=1 \
		--inline-suppr --suppressions-list=tests/lint/cppcheck.supp \
		--error-exitcode=1 --quiet \
		--template='{file}:{line}: {severity} ({id}): {message}' $DIRS; then
		echo "lint: cppcheck: no findings"
	else
		echo "lint: cppcheck found the problems above (fix them, or add a suppression with its reason to tests/lint/cppcheck.supp)"
		rc=1
	fi
}

[ $# -eq 0 ] && set -- format cppcheck
for what in "$@"; do
	case $what in
	format) check_format ;;
	cppcheck) check_cppcheck ;;
	*) echo "usage: $0 [format|cppcheck]..." >&2; exit 2 ;;
	esac
done
exit $rc
