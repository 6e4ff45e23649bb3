#!/bin/sh
# run_tests.sh TEST_BINARY: the full run, then memcheck and racecheck at
# --small size; sums the "N passed, N failed" lines of the three runs.
bin=$1
san=${COMPUTE_SANITIZER:-compute-sanitizer}
pass=0
fail=0
log=$(mktemp)

run() {
	label=$1
	shift
	echo "== $label"
	${TEST_TIMEOUT:+timeout $TEST_TIMEOUT} "$@" >"$log" 2>&1
	rc=$?
	cat "$log"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
	if [ -z "$line" ]; then
		echo "$label: no summary line (exit $rc)"
		fail=$((fail + 1))
		return
	fi
	p=$(echo "$line" | cut -d' ' -f1)
	f=$(echo "$line" | cut -d' ' -f3)
	pass=$((pass + p))
	fail=$((fail + f))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "$label: exit status $rc (sanitizer errors?)"
		fail=$((fail + 1))
	fi
}

run "full" "$bin"
if command -v "$san" >/dev/null 2>&1 || [ -x "$san" ]; then
	run "memcheck (--small)" "$san" --tool memcheck --error-exitcode 3 "$bin" --small
	run "racecheck (--small)" "$san" --tool racecheck --error-exitcode 3 "$bin" --small
else
	echo "compute-sanitizer not found: sanitizer runs skipped (counted as a failure)"
	fail=$((fail + 1))
fi
rm -f "$log"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
