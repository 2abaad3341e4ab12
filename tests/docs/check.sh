#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The README and docs/: the README a newcomer reads in ten minutes (at most
# 250 lines), every relative link in it and in docs/ resolving to a file of
# the tree, and docs/policy-fields.md what `agentsbx policy fields` prints
# (make docs writes it).  A line per problem; exit 1 if there is any.
#
#   tests/docs/check.sh AGENTSBX-BINARY
set -u
cd "$(dirname "$0")/../.."
bin=${1:-build/agentsbx}
bad=0
fail() { echo "docs: $*"; bad=1; }

n=$(wc -l <README.md)
[ "$n" -le 250 ] || fail "README.md has $n lines (at most 250: the reference goes to docs/)"

for f in README.md docs/*.md; do
	d=$(dirname "$f")
	# [text](target): not a URL, not an anchor of the same page
	grep -o '\]([^)]*)' "$f" | sed 's/^](//; s/)$//; s/#.*//' | while read -r target; do
		case $target in '' | http://* | https://* | mailto:*) continue ;; esac
		[ -e "$d/$target" ] || echo "docs: $f links to $target, which does not exist"
	done
done | grep . && bad=1

# History belongs in commit messages, the why in comments; no cruft at the
# root.
hist=$(git grep -n -e 'issue [0-9]' -e 'CI of' -- '*.c' '*.h' 2>/dev/null)
[ -z "$hist" ] || fail "history in product comments (say the why, the history goes to commit messages): $hist"
for f in t1.py config.json; do
	git ls-files --error-unmatch "$f" >/dev/null 2>&1 && fail "$f is tracked at the root (cruft)"
done

if ! "$bin" policy fields | diff -u docs/policy-fields.md - >/dev/null; then
	fail "docs/policy-fields.md is not what \`agentsbx policy fields\` prints (make docs writes it)"
fi
exit $bad
