#!/bin/sh
# Run every libFuzzer target of BUILD_DIR for SECONDS each (make fuzz).
#   tests/fuzz/run.sh BUILD_DIR SECONDS [TARGET...]
# Each target starts from its committed seeds (tests/fuzz/T/corpus) and
# regression inputs (tests/fuzz/T/regressions); what it finds goes to
# BUILD_DIR/fuzz-corpus/T (never into the repository), a crash to
# BUILD_DIR/fuzz-crashes/T/.  Exit 1 if any target crashed.
# FUZZ_ARGS adds libFuzzer flags; FUZZ_NICE=1 runs under nice -n 19;
# FUZZ_OUT puts corpus, crashes and logs elsewhere than BUILD_DIR.
set -u
build=$1 seconds=$2
shift 2
here=$(dirname "$0")
targets=${*:-$(cd "$here" && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')}
failed=""
for t in $targets; do
	bin=$build/tests/fuzz/fuzz_$t
	out=${FUZZ_OUT:-$build}
	work=$out/fuzz-corpus/$t crashes=$out/fuzz-crashes/$t
	mkdir -p "$work" "$crashes"
	dirs="$work $here/$t/corpus"
	[ -d "$here/$t/regressions" ] && dirs="$dirs $here/$t/regressions"
	log=$out/fuzz-$t.log
	echo "== fuzz $t: ${seconds}s (log: $log)"
	# Scratch space for the target (fuzz_state's state directory), on
	# tmpfs where there is one; removed below even after a crash.
	tmp=$(mktemp -d "$( [ -w /dev/shm ] && echo /dev/shm || echo /tmp )/agentsbx-fuzz-$t.XXXXXX")
	# shellcheck disable=SC2086
	LSAN_OPTIONS=suppressions=$here/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS} \
	FUZZ_TMPDIR=$tmp ${FUZZ_NICE:+nice -n 19} "$bin" -max_total_time="$seconds" -timeout=10 \
		-rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$crashes/" ${FUZZ_ARGS:-} $dirs >"$log" 2>&1
	rc=$?
	rm -rf "$tmp"
	grep -E '^#[0-9]+.*(DONE|cov:)' "$log" | tail -n1
	grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$log"
	if [ $rc -ne 0 ]; then
		echo "fuzz $t: FAILED (exit $rc); the input is in $crashes/:"
		grep -E 'ERROR|SUMMARY|invariant|runtime error' "$log" | head -n 5
		failed="$failed $t"
	fi
done
if [ -n "$failed" ]; then
	echo "fuzz: FAILED:$failed"
	exit 1
fi
echo "fuzz: all targets ran ${seconds}s without a crash"
